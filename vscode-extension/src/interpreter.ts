/**
 * Which Python runs the server: the `shardls.interpreter` setting; else the interpreter selected
 * in the Python extension (when it is installed); else the workspace folder's `.venv`; else
 * `python3` on PATH. The first that runs and is Python 3.10 or newer wins; a setting that does
 * not work is an error rather than a reason to quietly run something else. No `vscode` import.
 */

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
  /** The `shardls.interpreter` setting, variables expanded; '' when unset. */
  readonly setting: string;
  /** The Python extension's interpreter for the folder; undefined without the extension or a selection. */
  readonly pythonExtension: () => Promise<string | undefined>;
  /** The path of the folder's `.venv` interpreter; undefined without a folder. */
  readonly venv: string | undefined;
  /** The command that runs Python from PATH (`python3`; `python` on Windows). */
  readonly pathCommand: string;
}

export const SOURCE_SETTING = 'the shardls.interpreter setting';
export const SOURCE_PYTHON_EXTENSION = "the Python extension's selected interpreter";
export const SOURCE_VENV = "the workspace folder's .venv";
export const SOURCE_PATH = 'PATH';

export async function discoverInterpreter(sources: Sources, probe: Probe): Promise<Discovery> {
  const attempts: Attempt[] = [];
  for (const candidate of await candidates(sources)) {
    const result = await check(candidate.command, probe);
    if (typeof result !== 'string') {
      return { interpreter: { ...candidate, info: result }, attempts };
    }
    attempts.push({ ...candidate, problem: result });
  }
  return { interpreter: undefined, attempts };
}

async function candidates(sources: Sources): Promise<Candidate[]> {
  if (sources.setting !== '') {
    return [{ source: SOURCE_SETTING, command: sources.setting }];
  }
  const found: Candidate[] = [];
  const selected = await sources.pythonExtension();
  if (selected !== undefined) {
    found.push({ source: SOURCE_PYTHON_EXTENSION, command: selected });
  }
  if (sources.venv !== undefined) {
    found.push({ source: SOURCE_VENV, command: sources.venv });
  }
  found.push({ source: SOURCE_PATH, command: sources.pathCommand });
  return found;
}

/** The interpreter's info when it can run the server, else what is wrong with it. */
async function check(command: string, probe: Probe): Promise<PythonInfo | string> {
  let info: PythonInfo;
  try {
    info = await probe(command);
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  const [major, minor] = info.version;
  if (major < MIN_VERSION[0] || (major === MIN_VERSION[0] && minor < MIN_VERSION[1])) {
    return `Python ${info.version.join('.')} is too old, shardls needs ${MIN_VERSION.join('.')} or newer`;
  }
  return info;
}

/** The notification when no interpreter works: what was tried, and what to do. */
export function noInterpreterMessage(attempts: readonly Attempt[], place: string): string {
  const tried = attempts.map((attempt) => `${attempt.source} (${attempt.command}): ${attempt.problem}`);
  const fix =
    attempts[0]?.source === SOURCE_SETTING
      ? 'Correct the shardls.interpreter setting, or clear it to let shardls find Python.'
      : `Install Python ${MIN_VERSION.join('.')} or newer, or point the shardls.interpreter setting at one.`;
  return `shardls cannot start its server for ${place}: no usable Python. Tried ${tried.join('; ')}. ${fix}`;
}

/** `~` and `${workspaceFolder}`/`${userHome}` in the `shardls.interpreter` setting. */
export function expandSetting(setting: string, folder: string | undefined, home: string): string {
  const expanded = setting
    .replace(/\$\{userHome\}/g, home)
    .replace(/\$\{workspaceFolder\}/g, folder ?? '${workspaceFolder}');
  return expanded === '~' || expanded.startsWith('~/') ? home + expanded.slice(1) : expanded;
}
