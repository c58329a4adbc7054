import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { findOnPath, insideAny, isInside, locate } from '../../src/isolation';

const scratch = mkdtempSync(join(tmpdir(), 'shardls-isolation-'));
after(() => {
  rmSync(scratch, { recursive: true, force: true });
});

/** An executable (or, with mode 0o644, a plain file) at `file`. */
function program(file: string, mode = 0o755): string {
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, '#!/bin/sh\n', { mode });
  return file;
}

const workspace = join(scratch, 'workspace');
const system = join(scratch, 'usr', 'bin');
mkdirSync(workspace, { recursive: true });

describe('isInside and insideAny', () => {
  it('tells a path inside a folder from one beside it', () => {
    assert.ok(isInside('/work/a/b.py', '/work'));
    assert.ok(isInside('/work', '/work'));
    assert.ok(!isInside('/workshop/b.py', '/work'));
    assert.ok(!isInside('/other', '/work'));
  });

  it('follows symbolic links both ways', () => {
    const real = program(join(system, 'python3.11'));
    const linkIn = join(workspace, 'linked-python');
    symlinkSync(real, linkIn);
    assert.ok(insideAny(linkIn, [workspace]), 'a link inside the workspace is the workspace’s');
    const inside = program(join(workspace, 'bin', 'python'));
    const linkOut = join(scratch, 'python-elsewhere');
    symlinkSync(inside, linkOut);
    assert.ok(insideAny(linkOut, [workspace]), 'a link elsewhere into the workspace is too');
    assert.ok(!insideAny(real, [workspace]));
    const alias = join(scratch, 'alias');
    symlinkSync(workspace, alias);
    assert.ok(!insideAny(real, [alias]));
    assert.ok(insideAny(inside, [alias]), 'a workspace opened through a link');
  });
});

describe('findOnPath', () => {
  it('skips relative folders, folders inside the workspace and files that are not programs', () => {
    const found = program(join(system, 'python3'));
    program(join(workspace, '.venv', 'bin', 'python3'));
    program(join(scratch, 'plain', 'python3'), 0o644);
    const searchPath = ['.', 'bin', join(workspace, '.venv', 'bin'), join(scratch, 'plain'), system].join(':');
    assert.deepEqual(findOnPath('python3', searchPath, [workspace], 'linux'), { path: found });
  });

  it('says when the only one is inside the workspace, and when there is none', () => {
    const inside = join(workspace, '.venv', 'bin');
    program(join(inside, 'python3'));
    assert.deepEqual(findOnPath('python3', inside, [workspace], 'linux'), {
      problem: 'not found on PATH outside the workspace folders',
    });
    assert.deepEqual(findOnPath('python3.99', system, [workspace], 'linux'), { problem: 'not found' });
  });
});

describe('locate', () => {
  it('takes a path as it is, relative to the folder, and looks a bare name up on PATH', () => {
    assert.deepEqual(locate('/opt/py/bin/python', '/work', '', []), { path: '/opt/py/bin/python' });
    assert.deepEqual(locate('.venv/bin/python', '/work', '', []), { path: '/work/.venv/bin/python' });
    const found = program(join(scratch, 'path-only', 'python3'));
    assert.deepEqual(locate('python3', '/work', join(scratch, 'path-only'), []), { path: found });
  });
});
