import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  discoverInterpreter,
  expandSetting,
  INSIDE_UNTRUSTED,
  INSIDE_WORKSPACE,
  noInterpreterMessage,
  SOURCE_PATH,
  SOURCE_PYTHON_EXTENSION,
  SOURCE_SETTING,
  type Probe,
  type PythonInfo,
  type Sources,
} from '../../src/interpreter';

/** The workspace's folder, and its own venv's Python. */
const WORKSPACE = '/work';
const VENV = '/work/.venv/bin/python';
const SYSTEM = '/usr/bin/python3';

function python(version: [number, number, number], executable: string): PythonInfo {
  return { version, executable, shardls: null };
}

/** A probe that knows these interpreters and nothing else, and records what it was asked. */
function probeOf(known: Record<string, PythonInfo>): Probe & { asked: string[] } {
  const asked: string[] = [];
  const probe = (command: string): Promise<PythonInfo> => {
    asked.push(command);
    const info = known[command];
    return info === undefined ? Promise.reject(new Error('not found')) : Promise.resolve(info);
  };
  return Object.assign(probe, { asked });
}

/** Sources of a trusted workspace at WORKSPACE whose PATH has python3 as SYSTEM. */
function sources(overrides: Partial<Sources> = {}): Sources {
  return {
    setting: '',
    trusted: true,
    pythonExtension: () => Promise.resolve(undefined),
    pathCommand: 'python3',
    locate: (command) =>
      command.includes('/') ? { path: command } : command === 'python3' ? { path: SYSTEM } : { problem: 'not found' },
    insideWorkspace: (file) => file === WORKSPACE || file.startsWith(`${WORKSPACE}/`),
    ...overrides,
  };
}

const ALL = {
  '/opt/py': python([3, 12, 1], '/opt/py'),
  '/sel/python': python([3, 10, 0], '/sel/python'),
  [VENV]: python([3, 11, 0], VENV),
  [SYSTEM]: python([3, 11, 2], SYSTEM),
};

describe('discoverInterpreter', () => {
  it('takes the shardls.interpreter setting first, and only it', async () => {
    const probe = probeOf(ALL);
    const found = await discoverInterpreter(
      sources({ setting: '/opt/py', pythonExtension: () => Promise.resolve('/sel/python') }),
      probe,
    );
    assert.equal(found.interpreter?.source, SOURCE_SETTING);
    assert.deepEqual(probe.asked, ['/opt/py']);

    const broken = await discoverInterpreter(sources({ setting: '/missing' }), probe);
    assert.equal(broken.interpreter, undefined);
    assert.deepEqual(broken.attempts, [{ source: SOURCE_SETTING, command: '/missing', problem: 'not found' }]);
  });

  it("then the Python extension's selection, then python3 on PATH, run by its absolute path", async () => {
    const selected = () => Promise.resolve('/sel/python');
    assert.equal(
      (await discoverInterpreter(sources({ pythonExtension: selected }), probeOf(ALL))).interpreter?.source,
      SOURCE_PYTHON_EXTENSION,
    );
    const onPath = await discoverInterpreter(sources(), probeOf(ALL));
    assert.equal(onPath.interpreter?.source, SOURCE_PATH);
    assert.equal(onPath.interpreter.command, SYSTEM);
  });

  it("never runs a Python of the workspace's own that the user did not name", async () => {
    const probe = probeOf(ALL);
    const found = await discoverInterpreter(sources({ pythonExtension: () => Promise.resolve(VENV) }), probe);
    assert.equal(found.interpreter?.command, SYSTEM);
    assert.deepEqual(found.attempts, [{ source: SOURCE_PYTHON_EXTENSION, command: VENV, problem: INSIDE_WORKSPACE }]);
    assert.deepEqual(probe.asked, [SYSTEM]);

    const named = await discoverInterpreter(sources({ setting: VENV }), probeOf(ALL));
    assert.equal(named.interpreter?.command, VENV, 'named in the user settings of a trusted workspace');
  });

  it('in Restricted Mode runs only a Python from outside the workspace, never the Python extension’s', async () => {
    const probe = probeOf(ALL);
    let asked = false;
    const selection = () => {
      asked = true;
      return Promise.resolve('/sel/python');
    };
    const found = await discoverInterpreter(sources({ trusted: false, pythonExtension: selection }), probe);
    assert.equal(found.interpreter?.command, SYSTEM);
    assert.equal(asked, false);

    const named = await discoverInterpreter(sources({ trusted: false, setting: VENV }), probe);
    assert.equal(named.interpreter?.command, SYSTEM);
    assert.deepEqual(named.attempts, [{ source: SOURCE_SETTING, command: VENV, problem: INSIDE_UNTRUSTED }]);

    const outside = await discoverInterpreter(sources({ trusted: false, setting: '/opt/py' }), probe);
    assert.equal(outside.interpreter?.command, '/opt/py');
    assert.deepEqual(probe.asked, [SYSTEM, SYSTEM, '/opt/py']);
  });

  it('skips interpreters that are missing or older than 3.10, and says why', async () => {
    const probe = probeOf({ '/sel/python': python([3, 9, 18], '/sel/python') });
    const found = await discoverInterpreter(sources({ pythonExtension: () => Promise.resolve('/sel/python') }), probe);
    assert.equal(found.interpreter, undefined);
    assert.deepEqual(found.attempts, [
      {
        source: SOURCE_PYTHON_EXTENSION,
        command: '/sel/python',
        problem: 'Python 3.9.18 is too old, shardls needs 3.10 or newer',
      },
      { source: SOURCE_PATH, command: 'python3', problem: 'not found' },
    ]);
  });

  it('says why PATH gave nothing', async () => {
    const found = await discoverInterpreter(
      sources({ locate: () => ({ problem: 'not found on PATH outside the workspace folders' }) }),
      probeOf(ALL),
    );
    assert.equal(found.interpreter, undefined);
    assert.deepEqual(found.attempts, [
      { source: SOURCE_PATH, command: 'python3', problem: 'not found on PATH outside the workspace folders' },
    ]);
  });
});

describe('noInterpreterMessage', () => {
  it('lists what was tried and says what to do', () => {
    const message = noInterpreterMessage(
      [
        { source: SOURCE_PYTHON_EXTENSION, command: '/sel/python', problem: 'not found' },
        { source: SOURCE_PATH, command: 'python3', problem: 'Python 3.8.18 is too old, shardls needs 3.10 or newer' },
      ],
      'folder work',
    );
    assert.equal(
      message,
      "shardls cannot start its server for folder work: no usable Python. Tried the Python extension's selected " +
        'interpreter (/sel/python): not found; PATH (python3): Python 3.8.18 is too old, shardls needs 3.10 or newer. ' +
        'Install Python 3.10 or newer, or point the shardls.interpreter setting (user settings) at one.',
    );
  });

  it('asks to correct the setting when the setting failed', () => {
    const message = noInterpreterMessage(
      [{ source: SOURCE_SETTING, command: '/nope', problem: 'not found' }],
      'folder work',
    );
    assert.match(message, /Correct the shardls.interpreter setting in your user settings, or clear it/);
  });
});

describe('expandSetting', () => {
  it('expands ~, ${userHome} and ${workspaceFolder}', () => {
    assert.equal(expandSetting('${workspaceFolder}/.venv/bin/python', '/work', '/home/me'), '/work/.venv/bin/python');
    assert.equal(expandSetting('~/py/bin/python', '/work', '/home/me'), '/home/me/py/bin/python');
    assert.equal(expandSetting('${userHome}/py', undefined, '/home/me'), '/home/me/py');
    assert.equal(expandSetting('/usr/bin/python3', undefined, '/home/me'), '/usr/bin/python3');
  });
});
