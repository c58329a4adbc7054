import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { probeIn } from '../../src/probe';

const scratch = mkdtempSync(join(tmpdir(), 'shardls-probe-'));
after(() => {
  rmSync(scratch, { recursive: true, force: true });
});

describe('probeIn', () => {
  it("reads a real interpreter's version and executable", async () => {
    const info = await probeIn(scratch)('python3');
    assert.equal(info.version[0], 3);
    assert.ok(info.executable.length > 0);
  });

  it('says what is wrong with a command that is not Python', async () => {
    await assert.rejects(probeIn(scratch)('/no/such/python'), { message: 'not found' });
    await assert.rejects(probeIn(scratch)('false'), /^Error: failed \(exit code 1\)$/);
    await assert.rejects(probeIn(scratch)('echo'), /did not answer as Python does: -I -c /);
  });

  it("imports nothing from the folder it runs in, nor from PYTHONPATH, nor a workspace's shardls", async () => {
    const workspace = join(scratch, 'workspace');
    const markers = join(scratch, 'markers');
    mkdirSync(join(workspace, 'shardls'), { recursive: true });
    mkdirSync(markers);
    const trap = (name: string) => `open(${JSON.stringify(join(markers, name))}, "w").close()\n`;
    for (const name of ['json.py', 'importlib.py', 'sitecustomize.py', 'usercustomize.py']) {
      writeFileSync(join(workspace, name), trap(name));
    }
    writeFileSync(join(workspace, 'shardls', '__init__.py'), trap('shardls'));
    writeFileSync(join(workspace, 'startup.py'), trap('startup.py'));
    const saved = { ...process.env };
    Object.assign(process.env, { PYTHONPATH: workspace, PYTHONSTARTUP: join(workspace, 'startup.py') });
    try {
      const info = await probeIn(workspace)('python3');
      assert.equal(info.version[0], 3);
      assert.ok(!info.shardls?.startsWith(workspace), `found ${String(info.shardls)}`);
    } finally {
      process.env = saved;
    }
    assert.deepEqual(readdirSync(markers), []);
  });
});
