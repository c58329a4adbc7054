/**
 * Which Python runs the server: the `shardls.interpreter` of the user's settings; else the
 * interpreter selected in the Python extension (when it is installed and the workspace is
 * trusted); else `python3` on PATH. The first that runs and is Python 3.10 or newer wins; a
 * setting that does not work is an error rather than a reason to quietly run something else.
 *
 * None of them may be the workspace's own: a Python inside a workspace folder (a `.venv`, a
 * committed `bin/python`) runs only when the user names it in their own settings and the
 * workspace is trusted; in Restricted Mode only a Python from outside the workspace runs.
 * No `vscode` import.
 */

import type { Location } from './isolation';

const MIN_VERSION: readonly [number, number] = [3, 10];

/** What a probe learns by running an interpreter. */
export interface PythonInfo {
  readonly version: readonly [number, number, number];
  readonly executable: string;
  /** Where the interpreter finds a `shardls` package of its own; null when it has none. */
  readonly shardls: string | null;
}

/** Runs `command` as Python; rejects with a short reason (`not found`, `exited with 1: …`). */
export type Probe = (command: string) => Promise<PythonInfo>;

export interface Candidate {
  /** Where the candidate comes from, as the user would name it. */
  readonly source: string;
  readonly command: string;
}

export interface Interpreter extends Candidate {
  readonly info: PythonInfo;
}

export interface Attempt extends Candidate {
  readonly problem: string;
}

export interface Discovery {
  /** Undefined when no candidate works. */
  readonly interpreter: Interpreter | undefined;
  /** The candidates that did not work, in the order they were tried. */
  readonly attempts: readonly Attempt[];
}

export interface Sources {
  /** `shardls.interpreter` from the user's settings (never the workspace's), variables expanded; '' when unset. */
  readonly setting: string;
  /** Whether the workspace is trusted (false in Restricted Mode). */
  readonly trusted: boolean;
  /** The Python extension's interpreter for the folder; undefined without the extension or a selection. */
  readonly pythonExtension: () => Promise<string | undefined>;
  /** The command that runs Python from PATH (`python3`; `python` on Windows). */
  readonly pathCommand: string;
  /** Where a command runs from (`isolation.ts`'s `locate`). */
  readonly locate: (command: string) => Location;
  /** Whether a path lies inside a workspace folder. */
  readonly insideWorkspace: (file: string) => boolean;
}

export const SOURCE_SETTING = 'the shardls.interpreter setting';
export const SOURCE_PYTHON_EXTENSION = "the Python extension's selected interpreter";
export const SOURCE_PATH = 'PATH';

export const INSIDE_WORKSPACE =
  "inside the workspace: shardls runs no Python of the workspace's own unless you name it in shardls.interpreter in your user settings";
export const INSIDE_UNTRUSTED =
  'inside the workspace, which is not trusted: in Restricted Mode shardls runs only a Python from outside it';

export async function discoverInterpreter(sources: Sources, probe: Probe): Promise<Discovery> {
  const attempts: Attempt[] = [];
  for (const candidate of await candidates(sources)) {
    const result = await check(candidate, sources, probe);
    if (typeof result !== 'string') {
      return { interpreter: result, attempts };
    }
    attempts.push({ ...candidate, problem: result });
  }
  return { interpreter: undefined, attempts };
}

async function candidates(sources: Sources): Promise<Candidate[]> {
  const onPath = { source: SOURCE_PATH, command: sources.pathCommand };
  if (sources.setting !== '') {
    // Only the setting, so that a broken one is reported rather than replaced; in Restricted
    // Mode one that names a Python of the workspace gives way to PATH's.
    const setting = { source: SOURCE_SETTING, command: sources.setting };
    return refusedAsInside(setting, sources.locate(setting.command), sources) ? [setting, onPath] : [setting];
  }
  // The Python extension's choice may come from the workspace's settings: not in Restricted Mode.
  const selected = sources.trusted ? await sources.pythonExtension() : undefined;
  return selected === undefined ? [onPath] : [{ source: SOURCE_PYTHON_EXTENSION, command: selected }, onPath];
}

/** Whether a candidate is a Python of the workspace that may not run. */
function refusedAsInside(candidate: Candidate, location: Location, sources: Sources): boolean {
  const named = candidate.source === SOURCE_SETTING && sources.trusted;
  return 'path' in location && !named && sources.insideWorkspace(location.path);
}

/** The interpreter (its command the absolute path probed) when it can run the server, else what is wrong with it. */
async function check(candidate: Candidate, sources: Sources, probe: Probe): Promise<Interpreter | string> {
  const location = sources.locate(candidate.command);
  if ('problem' in location) {
    return location.problem;
  }
  if (refusedAsInside(candidate, location, sources)) {
    return sources.trusted ? INSIDE_WORKSPACE : INSIDE_UNTRUSTED;
  }
  let info: PythonInfo;
  try {
    info = await probe(location.path);
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  const [major, minor] = info.version;
  if (major < MIN_VERSION[0] || (major === MIN_VERSION[0] && minor < MIN_VERSION[1])) {
    return `Python ${info.version.join('.')} is too old, shardls needs ${MIN_VERSION.join('.')} or newer`;
  }
  return { ...candidate, command: location.path, info };
}

/** The notification when no interpreter works: what was tried, and what to do. */
export function noInterpreterMessage(attempts: readonly Attempt[], place: string): string {
  const tried = attempts.map((attempt) => `${attempt.source} (${attempt.command}): ${attempt.problem}`);
  const fix =
    attempts[0]?.source === SOURCE_SETTING
      ? 'Correct the shardls.interpreter setting in your user settings, or clear it to let shardls find Python.'
      : `Install Python ${MIN_VERSION.join('.')} or newer, or point the shardls.interpreter setting (user settings) at one.`;
  return `shardls cannot start its server for ${place}: no usable Python. Tried ${tried.join('; ')}. ${fix}`;
}

/** `~` and `${workspaceFolder}`/`${userHome}` in the `shardls.interpreter` setting. */
export function expandSetting(setting: string, folder: string | undefined, home: string): string {
  const expanded = setting
    .replace(/\$\{userHome\}/g, home)
    .replace(/\$\{workspaceFolder\}/g, folder ?? '${workspaceFolder}');
  return expanded === '~' || expanded.startsWith('~/') ? home + expanded.slice(1) : expanded;
}
