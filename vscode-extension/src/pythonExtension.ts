/**
 * The Python extension (ms-python.python), when it is installed: its selected interpreter, and
 * when that changes. Optional: shardls neither depends on it nor asks for it to be installed.
 */

import * as vscode from 'vscode';

const PYTHON_EXTENSION_ID = 'ms-python.python';

/** The part of the Python extension's API used here (`exports.environments`). */
interface EnvironmentPath {
  readonly id: string;
  readonly path: string;
}

interface PythonApi {
  readonly environments: {
    getActiveEnvironmentPath(resource?: vscode.Uri): EnvironmentPath;
    resolveEnvironment(
      environment: EnvironmentPath,
    ): Promise<{ readonly executable: { readonly uri: vscode.Uri | undefined } } | undefined>;
    readonly onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
  };
}

export interface PythonExtension {
  /** The executable of the interpreter selected for `folder`; undefined when none resolves. */
  selectedInterpreter(folder: vscode.Uri | undefined): Promise<string | undefined>;
  readonly onDidChangeSelection: vscode.Event<unknown>;
}

/** The Python extension's API, or undefined when it is not installed or fails to activate. */
export async function pythonExtension(log: vscode.LogOutputChannel): Promise<PythonExtension | undefined> {
  const extension = vscode.extensions.getExtension<PythonApi>(PYTHON_EXTENSION_ID);
  if (extension === undefined) {
    return undefined;
  }
  try {
    const { environments } = extension.isActive ? extension.exports : await extension.activate();
    return {
      async selectedInterpreter(folder) {
        try {
          const environment = await environments.resolveEnvironment(environments.getActiveEnvironmentPath(folder));
          return environment?.executable.uri?.fsPath;
        } catch (error) {
          log.warn(`The Python extension did not say which interpreter is selected: ${String(error)}`);
          return undefined;
        }
      },
      onDidChangeSelection: environments.onDidChangeActiveEnvironmentPath,
    };
  } catch (error) {
    log.warn(`The Python extension's API is not usable; finding Python without it: ${String(error)}`);
    return undefined;
  }
}
