import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  discoverInterpreter,
  expandSetting,
  noInterpreterMessage,
  SOURCE_PATH,
  SOURCE_PYTHON_EXTENSION,
  SOURCE_SETTING,
  SOURCE_VENV,
  type Probe,
  type PythonInfo,
  type Sources,
} from '../../src/interpreter';

const VENV = '/work/.venv/bin/python';

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

function sources(overrides: Partial<Sources> = {}): Sources {
  return {
    setting: '',
    pythonExtension: () => Promise.resolve(undefined),
    venv: VENV,
    pathCommand: 'python3',
    ...overrides,
  };
}

describe('discoverInterpreter', () => {
  it('takes the shardls.interpreter setting first, and only it', async () => {
    const probe = probeOf({
      '/opt/py': python([3, 12, 1], '/opt/py'),
      python3: python([3, 11, 2], '/usr/bin/python3'),
    });
    const found = await discoverInterpreter(
      sources({ setting: '/opt/py', pythonExtension: () => Promise.resolve('/sel') }),
      probe,
    );
    assert.equal(found.interpreter?.source, SOURCE_SETTING);
    assert.deepEqual(probe.asked, ['/opt/py']);

    const broken = await discoverInterpreter(sources({ setting: '/missing' }), probe);
    assert.equal(broken.interpreter, undefined);
    assert.deepEqual(broken.attempts, [{ source: SOURCE_SETTING, command: '/missing', problem: 'not found' }]);
  });

  it("then the Python extension's selection, then the folder's .venv, then python3 on PATH", async () => {
    const all = {
      '/sel/python': python([3, 10, 0], '/sel/python'),
      [VENV]: python([3, 11, 0], VENV),
      python3: python([3, 12, 0], '/usr/bin/python3'),
    };
    const selected = () => Promise.resolve('/sel/python');
    assert.equal(
      (await discoverInterpreter(sources({ pythonExtension: selected }), probeOf(all))).interpreter?.source,
      SOURCE_PYTHON_EXTENSION,
    );
    assert.equal((await discoverInterpreter(sources(), probeOf(all))).interpreter?.source, SOURCE_VENV);
    const noVenv = await discoverInterpreter(sources({ venv: undefined }), probeOf(all));
    assert.equal(noVenv.interpreter?.source, SOURCE_PATH);
    assert.equal(noVenv.interpreter.command, 'python3');
  });

  it('skips interpreters that are missing or older than 3.10, and says why', async () => {
    const probe = probeOf({
      '/sel/python': python([3, 9, 18], '/sel/python'),
      python3: python([3, 11, 2], '/usr/bin/python3'),
    });
    const found = await discoverInterpreter(sources({ pythonExtension: () => Promise.resolve('/sel/python') }), probe);
    assert.equal(found.interpreter?.command, 'python3');
    assert.deepEqual(found.attempts, [
      {
        source: SOURCE_PYTHON_EXTENSION,
        command: '/sel/python',
        problem: 'Python 3.9.18 is too old, shardls needs 3.10 or newer',
      },
      { source: SOURCE_VENV, command: VENV, problem: 'not found' },
    ]);
  });

  it('reports every attempt when nothing works', async () => {
    const found = await discoverInterpreter(sources(), probeOf({}));
    assert.equal(found.interpreter, undefined);
    assert.deepEqual(
      found.attempts.map((attempt) => attempt.source),
      [SOURCE_VENV, SOURCE_PATH],
    );
  });
});

describe('noInterpreterMessage', () => {
  it('lists what was tried and says what to do', () => {
    const message = noInterpreterMessage(
      [
        { source: SOURCE_VENV, command: VENV, problem: 'not found' },
        { source: SOURCE_PATH, command: 'python3', problem: 'Python 3.8.18 is too old, shardls needs 3.10 or newer' },
      ],
      'folder work',
    );
    assert.equal(
      message,
      "shardls cannot start its server for folder work: no usable Python. Tried the workspace folder's .venv " +
        `(${VENV}): not found; PATH (python3): Python 3.8.18 is too old, shardls needs 3.10 or newer. ` +
        'Install Python 3.10 or newer, or point the shardls.interpreter setting at one.',
    );
  });

  it('asks to correct the setting when the setting failed', () => {
    const message = noInterpreterMessage(
      [{ source: SOURCE_SETTING, command: '/nope', problem: 'not found' }],
      'folder work',
    );
    assert.match(message, /Correct the shardls.interpreter setting, or clear it/);
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
