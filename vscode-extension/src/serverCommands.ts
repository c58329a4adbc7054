/**
 * The server's commands (workspace/executeCommand), such as the one a code lens runs. Every
 * folder's server declares the same ones, and VS Code takes one handler per command, so they are
 * not left to each language client: each is registered once here, and runs on the server of the
 * document it names (its first URI argument), else on that of the active editor's document.
 */

import * as vscode from 'vscode';
import { ExecuteCommandRequest, type LanguageClient, type StaticFeature } from 'vscode-languageclient/node';

const DOCUMENT_URI = /^(file|untitled|vscode-notebook-cell):/;

export type ClientFor = (uri: vscode.Uri) => Promise<LanguageClient | undefined>;

export class ServerCommands implements vscode.Disposable {
  private readonly registered = new Map<string, vscode.Disposable>();

  constructor(private readonly clientFor: ClientFor) {}

  /** A client feature that takes the server's commands before the client registers them itself. */
  feature(): StaticFeature {
    return {
      fillClientCapabilities: () => undefined,
      preInitialize: (capabilities) => {
        for (const command of capabilities.executeCommandProvider?.commands ?? []) {
          this.register(command);
        }
        delete capabilities.executeCommandProvider;
      },
      initialize: () => undefined,
      getState: () => ({ kind: 'static' }),
      clear: () => undefined,
    };
  }

  private register(command: string): void {
    if (!this.registered.has(command)) {
      this.registered.set(
        command,
        vscode.commands.registerCommand(command, (...args: unknown[]) => this.run(command, args)),
      );
    }
  }

  private async run(command: string, args: unknown[]): Promise<unknown> {
    const named = args.find((arg): arg is string => typeof arg === 'string' && DOCUMENT_URI.test(arg));
    const uri = named === undefined ? vscode.window.activeTextEditor?.document.uri : vscode.Uri.parse(named);
    const client = uri === undefined ? undefined : await this.clientFor(uri);
    if (client === undefined) {
      throw new Error(`shardls: no running server for ${uri?.toString() ?? 'the active editor'} to run ${command}`);
    }
    return client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
  }

  dispose(): void {
    for (const registration of this.registered.values()) {
      registration.dispose();
    }
    this.registered.clear();
  }
}
