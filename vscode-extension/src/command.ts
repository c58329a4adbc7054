/** The command line that starts the server. No `vscode` import. */

import type { Interpreter } from './interpreter';
import { ISOLATED } from './isolation';
import type { LaunchSettings } from './settings';

export interface ServerCommand {
  readonly command: string;
  readonly args: readonly string[];
  /** Whether it runs the shardls bundled with the extension. */
  readonly bundled: boolean;
}

/**
 * `python -I -m shardls serve …` for the interpreter's own shardls (importStrategy
 * `fromEnvironment`, when it has one), else `python -I <launcher> serve …`, where the launcher
 * puts the bundled libraries first on sys.path. Isolated (`-I`): a `shardls/` or `json.py` in
 * the folder the server runs in, or PYTHONPATH, never decides what is imported.
 */
export function serverCommand(interpreter: Interpreter, settings: LaunchSettings, launcher: string): ServerCommand {
  const serve = ['serve', '--log-level', settings.logLevel, ...settings.args];
  const own = settings.importStrategy === 'fromEnvironment' && interpreter.info.shardls !== null;
  return own
    ? { command: interpreter.command, args: [ISOLATED, '-m', 'shardls', ...serve], bundled: false }
    : { command: interpreter.command, args: [ISOLATED, launcher, ...serve], bundled: true };
}
