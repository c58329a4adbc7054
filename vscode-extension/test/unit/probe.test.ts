import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { probeIn } from '../../src/probe';

describe('probeIn', () => {
  it("reads a real interpreter's version and executable", async () => {
    const info = await probeIn(undefined)('python3');
    assert.equal(info.version[0], 3);
    assert.ok(info.executable.length > 0);
  });

  it('says what is wrong with a command that is not Python', async () => {
    await assert.rejects(probeIn(undefined)('/no/such/python'), { message: 'not found' });
    await assert.rejects(probeIn(undefined)('false'), /^Error: failed \(exit code 1\)$/);
    await assert.rejects(probeIn(undefined)('echo'), /did not answer as Python does: -c /);
  });
});
