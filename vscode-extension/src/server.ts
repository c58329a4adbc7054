/** Starting one scope's server: finding its Python, choosing its shardls, and its language client. */

import * as os from 'node:os';
import * as path from 'node:path';
import * as readline from 'node:readline';
import * as vscode from 'vscode';
import { LanguageClient, RevealOutputChannelOn, type LanguageClientOptions } from 'vscode-languageclient/node';
import { serverCommand } from './command';
import {
  discoverInterpreter,
  expandSetting,
  noInterpreterMessage,
  type Interpreter,
  type Sources,
} from './interpreter';
import { probeIn } from './probe';
import type { PythonExtension } from './pythonExtension';
import type { ServerCommands } from './serverCommands';
import { documentSelector, placeOf, scopeOf, type Scope } from './scope';
import { launchSettings, SECTION, serverSettings, type SettingReader } from './settings';

/** The client's id: VS Code reads its trace setting from `shardls.trace.server`. */
const CLIENT_ID = 'shardls';
const LAUNCHER = path.join('python', 'launch.py');
const OPEN_SETTINGS = 'Open Settings';
const SHOW_OUTPUT = 'Show Output';

export interface Server {
  readonly client: LanguageClient;
  readonly interpreter: Interpreter;
}

export interface Environment {
  readonly context: vscode.ExtensionContext;
  readonly log: vscode.LogOutputChannel;
  readonly python: PythonExtension | undefined;
  readonly commands: ServerCommands;
}

/** The `shardls.*` settings as they apply to a folder (or to no folder). */
export function settingsReader(folder: vscode.Uri | undefined): SettingReader {
  const configuration = vscode.workspace.getConfiguration(SECTION, folder);
  return (key) => configuration.get(key);
}

/** Starts the scope's server; undefined when it cannot start (the user has been told why). */
export async function startServer(scope: Scope, environment: Environment): Promise<Server | undefined> {
  const { context, log, python, commands } = environment;
  const folder = scope.folder?.uri;
  const place = placeOf(scope);
  const launch = launchSettings(settingsReader(folder));

  const { interpreter, attempts } = await discoverInterpreter(
    interpreterSources(launch.interpreter, folder, python),
    probeIn(folder?.fsPath),
  );
  if (interpreter === undefined) {
    const message = noInterpreterMessage(attempts, place);
    log.error(message);
    void vscode.window.showErrorMessage(message, OPEN_SETTINGS, SHOW_OUTPUT).then((choice) => {
      if (choice === OPEN_SETTINGS) {
        void vscode.commands.executeCommand('workbench.action.openSettings', `${SECTION}.interpreter`);
      } else if (choice === SHOW_OUTPUT) {
        log.show();
      }
    });
    return undefined;
  }
  for (const attempt of attempts) {
    log.warn(`Skipped ${attempt.source} (${attempt.command}): ${attempt.problem}`);
  }

  const command = serverCommand(interpreter, launch, context.asAbsolutePath(LAUNCHER));
  if (launch.importStrategy === 'fromEnvironment' && command.bundled) {
    const message = `shardls is not installed in ${interpreter.info.executable}; running the shardls bundled with the extension instead (importStrategy fromEnvironment).`;
    log.warn(message);
    void vscode.window.showInformationMessage(message);
  }
  const { version, executable, shardls } = interpreter.info;
  const which = command.bundled ? 'the bundled shardls' : `shardls from ${shardls ?? '?'}`;
  log.info(
    `Starting the server for ${place}: Python ${version.join('.')} (${executable}, from ${interpreter.source}), ` +
      `${which}: ${command.command} ${command.args.join(' ')}`,
  );

  const client = new LanguageClient(
    CLIENT_ID,
    scope.folder === undefined ? 'shardls' : `shardls (${scope.folder.name})`,
    { command: command.command, args: [...command.args], options: { cwd: folder?.fsPath ?? os.homedir() } },
    clientOptions(scope, log),
  );
  client.registerFeature(commands.feature());
  try {
    await client.start();
  } catch (error) {
    log.error(`The server for ${place} did not start: ${String(error)}`);
    return undefined;
  }
  return { client, interpreter };
}

function interpreterSources(
  setting: string,
  folder: vscode.Uri | undefined,
  python: PythonExtension | undefined,
): Sources {
  const windows = process.platform === 'win32';
  return {
    setting: expandSetting(setting, folder?.fsPath, os.homedir()),
    pythonExtension: async () => python?.selectedInterpreter(folder),
    venv:
      folder === undefined
        ? undefined
        : path.join(folder.fsPath, '.venv', ...(windows ? ['Scripts', 'python.exe'] : ['bin', 'python'])),
    pathCommand: windows ? 'python' : 'python3',
  };
}

function clientOptions(scope: Scope, log: vscode.LogOutputChannel): LanguageClientOptions {
  const folder = scope.folder?.uri;
  return {
    documentSelector: documentSelector(scope),
    ...(scope.folder === undefined ? {} : { workspaceFolder: scope.folder }),
    outputChannel: log,
    traceOutputChannel: log,
    // The server's own log lines (stderr) carry their level; shown as they are, not all as errors.
    stdioOptions: { stdout: appendLines, stderr: appendLines },
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    initializationOptions: serverSettings(settingsReader(folder)),
    // The server is told of the notebooks of its own scope only.
    notebookDocumentOptions: {
      filterCells: (notebook, cells) => (scopeOf(notebook.uri)?.key === scope.key ? cells : []),
    },
    middleware: {
      workspace: {
        // The server asks for section `shardls`; it gets this scope's settings, as the server reads them.
        configuration: (params, token, next) =>
          params.items.every((item) => item.section === SECTION)
            ? params.items.map((item) =>
                serverSettings(settingsReader(item.scopeUri === undefined ? folder : vscode.Uri.parse(item.scopeUri))),
              )
            : next(params, token),
      },
    },
  };
}

function appendLines(input: NodeJS.ReadableStream, channel: vscode.OutputChannel): void {
  readline.createInterface({ input, crlfDelay: Infinity }).on('line', (line) => {
    channel.appendLine(line);
  });
}
