import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { serverCommand } from '../../src/command';
import type { Interpreter } from '../../src/interpreter';
import { launchSettings } from '../../src/settings';

const LAUNCHER = '/ext/python/launch.py';

function interpreter(shardls: string | null): Interpreter {
  return { source: 'PATH', command: 'python3', info: { version: [3, 11, 2], executable: '/usr/bin/python3', shardls } };
}

function settings(values: Record<string, unknown>) {
  const read = (key: string) => values[key];
  return launchSettings(read, read, true);
}

describe('serverCommand', () => {
  it('runs the bundled shardls by default, with the log level and extra arguments', () => {
    assert.deepEqual(
      serverCommand(
        interpreter('/site/shardls/__init__.py'),
        settings({ args: ['--log-file', '/tmp/s.log'] }),
        LAUNCHER,
      ),
      {
        command: 'python3',
        args: ['-I', LAUNCHER, 'serve', '--log-level', 'warning', '--log-file', '/tmp/s.log'],
        bundled: true,
      },
    );
  });

  it("runs the interpreter's own shardls with fromEnvironment", () => {
    assert.deepEqual(
      serverCommand(
        interpreter('/site/shardls/__init__.py'),
        settings({ importStrategy: 'fromEnvironment', logLevel: 'debug' }),
        LAUNCHER,
      ),
      {
        command: 'python3',
        args: ['-I', '-m', 'shardls', 'serve', '--log-level', 'debug'],
        bundled: false,
      },
    );
  });

  it('falls back to the bundled shardls when the interpreter has none', () => {
    assert.equal(
      serverCommand(interpreter(null), settings({ importStrategy: 'fromEnvironment' }), LAUNCHER).bundled,
      true,
    );
  });
});
