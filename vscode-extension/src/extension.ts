/**
 * shardls for VS Code: starts the bundled shardls language server (one per workspace folder) with
 * the user's Python, and adds the mesh status bar item and the commands.
 */

import * as vscode from 'vscode';
import { DidChangeConfigurationNotification } from 'vscode-languageclient/node';
import { pickDeviceCount } from './deviceCount';
import { pythonExtension, type PythonExtension } from './pythonExtension';
import { LOOSE, placeOf } from './scope';
import { launchSettingsOf, startServer } from './server';
import { ServerCommands } from './serverCommands';
import { Servers } from './servers';
import { RESTART_KEYS, SECTION } from './settings';
import { MeshStatus, SET_DEVICE_COUNT } from './status';

let servers: Servers | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const log = vscode.window.createOutputChannel('shardls', { log: true });
  const python = await pythonExtension(log);
  // Each needs the other: the servers' commands run on the server of their document.
  const commands: ServerCommands = new ServerCommands((uri) => running.clientFor(uri));
  const running: Servers = new Servers((scope) =>
    startServer(scope, { context, log, python, commands }).catch((error: unknown) => {
      log.error(`The server for ${placeOf(scope)} did not start: ${String(error)}`);
      return undefined;
    }),
  );
  servers = running;
  context.subscriptions.push(
    log,
    commands,
    running,
    new MeshStatus(running),
    vscode.commands.registerCommand('shardls.restart', () => running.restart()),
    vscode.commands.registerCommand('shardls.showOutput', () => {
      log.show();
    }),
    vscode.commands.registerCommand(SET_DEVICE_COUNT, pickDeviceCount),
    vscode.workspace.onDidOpenTextDocument((document) => {
      running.serveDocument(document);
    }),
    vscode.workspace.onDidOpenNotebookDocument((notebook) => {
      running.serveNotebook(notebook);
    }),
    vscode.workspace.onDidChangeConfiguration((event) => void applySettings(running, event)),
    // Leaving Restricted Mode: importStrategy and the Python extension's interpreter apply now.
    vscode.workspace.onDidGrantWorkspaceTrust(() => void running.restart()),
    // A removed folder's server stops; the server without a folder serves other files once none is left.
    vscode.workspace.onDidChangeWorkspaceFolders(
      (event) => void running.restart([...event.removed.map((folder) => folder.uri.toString()), LOOSE.key]),
    ),
  );
  if (python !== undefined) {
    context.subscriptions.push(python.onDidChangeSelection(() => void followSelection(running, python)));
  }
  running.serveOpenDocuments();
}

export async function deactivate(): Promise<void> {
  await servers?.stop();
}

/** Settings the server reads are sent at once (it asks for them again); the others restart it. */
async function applySettings(running: Servers, event: vscode.ConfigurationChangeEvent): Promise<void> {
  const restart: string[] = [];
  for (const { scope, server } of await running.all()) {
    const folder = scope.folder?.uri;
    if (!event.affectsConfiguration(SECTION, folder)) {
      continue;
    }
    if (server === undefined || RESTART_KEYS.some((key) => event.affectsConfiguration(`${SECTION}.${key}`, folder))) {
      restart.push(scope.key);
    } else {
      await server.client.sendNotification(DidChangeConfigurationNotification.type, { settings: null });
    }
  }
  if (restart.length > 0) {
    await running.restart(restart);
  }
}

/** Restarts the servers that run the Python extension's interpreter when another one is selected. */
async function followSelection(running: Servers, python: PythonExtension): Promise<void> {
  const restart: string[] = [];
  for (const { scope, server } of await running.all()) {
    const folder = scope.folder?.uri;
    const selected = await python.selectedInterpreter(folder);
    const configured = launchSettingsOf(folder).interpreter !== '';
    if (!configured && selected !== undefined && selected !== server?.interpreter.command) {
      restart.push(scope.key);
    }
  }
  if (restart.length > 0) {
    await running.restart(restart);
  }
}
