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
import { insideAny, locate } from './isolation';
import { probeIn } from './probe';
import type { PythonExtension } from './pythonExtension';
import type { ServerCommands } from './serverCommands';
import { documentSelector, placeOf, scopeOf, type Scope } from './scope';
import { launchSettings, SECTION, serverSettings, type LaunchSettings, type SettingReader } from './settings';

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

/** The `shardls.*` settings of the user's own settings alone (their defaults when unset there). */
export function userSettingsReader(): SettingReader {
  const configuration = vscode.workspace.getConfiguration(SECTION);
  return (key) => {
    const values = configuration.inspect(key);
    return values?.globalValue ?? values?.defaultValue;
  };
}

/** How the server for a folder is started, from the settings and the workspace's trust. */
export function launchSettingsOf(folder: vscode.Uri | undefined): LaunchSettings {
  return launchSettings(settingsReader(folder), userSettingsReader(), vscode.workspace.isTrusted);
}

/** Starts the scope's server; undefined when it cannot start (the user has been told why). */
export async function startServer(scope: Scope, environment: Environment): Promise<Server | undefined> {
  const { context, log, python, commands } = environment;
  const folder = scope.folder?.uri;
  const place = placeOf(scope);
  const launch = launchSettingsOf(folder);
  // Every Python runs from the extension's own folder, never from the workspace (isolation.ts).
  const outside = context.extensionPath;
  if (!vscode.workspace.isTrusted) {
    log.info(`Restricted Mode: the bundled shardls, with a Python from outside the workspace, serves ${place}.`);
  }

  const { interpreter, attempts } = await discoverInterpreter(
    interpreterSources(launch.interpreter, folder, python),
    probeIn(outside),
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
    { command: command.command, args: [...command.args], options: { cwd: outside } },
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
  const folders = (vscode.workspace.workspaceFolders ?? []).map((each) => each.uri.fsPath);
  const base = folder?.fsPath ?? os.homedir();
  return {
    setting: expandSetting(setting, folder?.fsPath, os.homedir()),
    trusted: vscode.workspace.isTrusted,
    pythonExtension: async () => python?.selectedInterpreter(folder),
    pathCommand: process.platform === 'win32' ? 'python' : 'python3',
    locate: (command) => locate(command, base, process.env.PATH ?? '', folders),
    insideWorkspace: (file) => insideAny(file, folders),
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
