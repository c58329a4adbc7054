/**
 * What keeps a workspace's own code from running when the extension starts Python (the server,
 * the interpreter probe): every Python is started isolated, in a folder outside the workspace,
 * and never from a path inside a workspace folder that the user did not name. No `vscode` import.
 *
 * Why each is needed: Python puts the current folder (for `-c` and `-m`) or the script's folder
 * first on sys.path, so a `json.py`, `sitecustomize.py` or `shardls/` in the folder it runs in
 * would be imported instead of the real one; PYTHONPATH and PYTHONSTARTUP could come from the
 * environment; and an interpreter inside the workspace (a committed `.venv/bin/python`, or a
 * real venv whose site-packages hold a `.pth` file) is the workspace's code itself.
 */

import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import * as path from 'node:path';

/**
 * Isolated mode: neither the current folder nor the script's folder on sys.path, no user
 * site-packages, every PYTHON* variable ignored (Python 3.4+; the server needs 3.10).
 */
export const ISOLATED = '-I';

/** Whether `file` is `folder` or lies under it (both absolute). */
export function isInside(file: string, folder: string): boolean {
  const relative = path.relative(folder, file);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/**
 * Whether `file` lies in one of `folders`, as written or once symbolic links are resolved (on
 * either side): a link inside the workspace to a Python elsewhere is still the workspace's
 * choice, and a link elsewhere into the workspace is still its code.
 */
export function insideAny(file: string, folders: readonly string[]): boolean {
  const files = withRealPath(path.resolve(file));
  const roots = folders.flatMap((folder) => withRealPath(path.resolve(folder)));
  return files.some((each) => roots.some((root) => isInside(each, root)));
}

function withRealPath(file: string): string[] {
  try {
    const real = realpathSync(file);
    return real === file ? [file] : [file, real];
  } catch {
    return [file];
  }
}

/** Where a command runs from, or why it cannot run. */
export type Location = { readonly path: string } | { readonly problem: string };

/**
 * Where `command` runs from: a name without a folder (`python3`) is looked up on PATH as
 * `findOnPath` does; a path is taken as it is, relative to `base` (the workspace folder, as the
 * Python extension reads its settings) when it is relative.
 */
export function locate(command: string, base: string, searchPath: string, folders: readonly string[]): Location {
  const named = command.includes('/') || (process.platform === 'win32' && command.includes('\\'));
  return named ? { path: path.resolve(base, command) } : findOnPath(command, searchPath, folders);
}

/**
 * The program `name` as the shell would find it on `searchPath` (PATH's value), skipping folders
 * that are relative (they would depend on the current folder) or inside one of `folders` (an
 * activated venv of the workspace, say). On Windows each of PATHEXT's extensions is tried.
 */
export function findOnPath(
  name: string,
  searchPath: string,
  folders: readonly string[],
  platform: NodeJS.Platform = process.platform,
  extensions: string = process.env.PATHEXT ?? '.COM;.EXE;.BAT;.CMD',
): Location {
  const suffixes = platform === 'win32' ? ['', ...extensions.split(';').filter(Boolean)] : [''];
  let skipped = false;
  for (const folder of searchPath.split(platform === 'win32' ? ';' : ':')) {
    if (folder === '' || !path.isAbsolute(folder)) {
      continue;
    }
    const found = suffixes.map((suffix) => path.join(folder, name + suffix)).find(isProgram);
    if (found === undefined) {
      continue;
    }
    if (insideAny(found, folders)) {
      skipped = true;
      continue;
    }
    return { path: found };
  }
  return { problem: skipped ? 'not found on PATH outside the workspace folders' : 'not found' };
}

function isProgram(file: string): boolean {
  try {
    if (!statSync(file).isFile()) {
      return false;
    }
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
