/**
 * The status bar item: the mesh in effect for the active Python document (`data=2·model=4 (8 dev)`),
 * or the device count assumed when it has none. Clicking it sets the device count to assume.
 */

import * as vscode from 'vscode';
import { FILE_INFO, statusText, statusTooltip, type FileInfo } from './fileInfo';
import { isPython, type Servers } from './servers';
import { SECTION } from './settings';

export const SET_DEVICE_COUNT = 'shardls.setDeviceCount';
const DELAY_MS = 150;

export class MeshStatus implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('shardls.mesh', vscode.StatusBarAlignment.Right, 100);
  private readonly listeners: vscode.Disposable[];
  private timer: NodeJS.Timeout | undefined;
  /** Counts updates, so that a slow answer about an older state is dropped. */
  private generation = 0;

  constructor(private readonly servers: Servers) {
    this.item.name = 'shardls mesh';
    this.item.command = SET_DEVICE_COUNT;
    const active = (uri: vscode.Uri): boolean =>
      vscode.window.activeTextEditor?.document.uri.toString() === uri.toString();
    this.listeners = [
      vscode.window.onDidChangeActiveTextEditor(() => {
        this.schedule();
      }),
      // The server publishes diagnostics after each analysis: a good moment to ask again.
      vscode.languages.onDidChangeDiagnostics((event) => {
        if (event.uris.some(active)) {
          this.schedule();
        }
      }),
      vscode.workspace.onDidChangeTextDocument((event) => {
        if (active(event.document.uri)) {
          this.schedule();
        }
      }),
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration(SECTION)) {
          this.schedule();
        }
      }),
      servers.onDidChange(() => {
        this.schedule();
      }),
    ];
    this.schedule();
  }

  private schedule(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.update(), DELAY_MS);
  }

  private async update(): Promise<void> {
    const generation = ++this.generation;
    const document = vscode.window.activeTextEditor?.document;
    const client =
      document !== undefined && isPython(document) ? await this.servers.clientFor(document.uri) : undefined;
    let info: FileInfo | null = null;
    if (document !== undefined && client !== undefined) {
      try {
        info = await client.sendRequest<FileInfo | null>(FILE_INFO, {
          textDocument: { uri: client.code2ProtocolConverter.asUri(document.uri) },
        });
      } catch {
        info = null; // the server stopped or restarted meanwhile: the next event asks again
      }
    }
    if (generation !== this.generation) {
      return;
    }
    if (info === null) {
      this.item.hide();
      return;
    }
    this.item.text = `$(layers) ${statusText(info)}`;
    this.item.tooltip = new vscode.MarkdownString(statusTooltip(info));
    this.item.show();
  }

  dispose(): void {
    clearTimeout(this.timer);
    for (const listener of this.listeners) {
      listener.dispose();
    }
    this.item.dispose();
  }
}
