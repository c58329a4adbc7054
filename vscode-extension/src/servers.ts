/** The running servers, one per scope, each started when the first of its documents opens. */

import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { scopeOf, type Scope } from './scope';
import type { Server } from './server';

interface Entry {
  readonly scope: Scope;
  /** Undefined once it failed to start (the user has been told; a restart tries again). */
  readonly server: Promise<Server | undefined>;
}

export class Servers implements vscode.Disposable {
  private readonly entries = new Map<string, Entry>();
  private readonly changed = new vscode.EventEmitter<void>();
  /** A server started or stopped. */
  readonly onDidChange = this.changed.event;

  constructor(private readonly start: (scope: Scope) => Promise<Server | undefined>) {}

  /** Starts the server for the scope of a document (a file or a notebook) unless there is one. */
  private serve(uri: vscode.Uri): void {
    const scope = scopeOf(uri);
    if (scope === undefined || this.entries.has(scope.key)) {
      return;
    }
    const server = this.start(scope);
    this.entries.set(scope.key, { scope, server });
    void server.then(() => {
      this.changed.fire();
    });
  }

  serveDocument(document: vscode.TextDocument): void {
    if (isPython(document)) {
      this.serve(document.uri);
    }
  }

  serveNotebook(notebook: vscode.NotebookDocument): void {
    if (notebook.getCells().some((cell) => isPython(cell.document))) {
      this.serve(notebook.uri);
    }
  }

  /** Serves every open Python file and notebook. */
  serveOpenDocuments(): void {
    vscode.workspace.textDocuments.forEach((document) => {
      this.serveDocument(document);
    });
    vscode.workspace.notebookDocuments.forEach((notebook) => {
      this.serveNotebook(notebook);
    });
  }

  /** The running client that serves a document. */
  async clientFor(uri: vscode.Uri): Promise<LanguageClient | undefined> {
    const scope = scopeOf(uri);
    const server = scope === undefined ? undefined : await this.entries.get(scope.key)?.server;
    return server?.client.isRunning() === true ? server.client : undefined;
  }

  /** Every scope with a server, and the server (undefined when it failed to start). */
  async all(): Promise<{ scope: Scope; server: Server | undefined }[]> {
    return Promise.all([...this.entries.values()].map(async ({ scope, server }) => ({ scope, server: await server })));
  }

  /** Stops the servers of the scopes whose keys are given (all by default), then serves the open documents again. */
  async restart(keys?: readonly string[]): Promise<void> {
    const stopping = [...this.entries.values()].filter(({ scope }) => keys === undefined || keys.includes(scope.key));
    for (const { scope } of stopping) {
      this.entries.delete(scope.key);
    }
    await Promise.all(stopping.map(async ({ server }) => (await server)?.client.dispose()));
    this.changed.fire();
    this.serveOpenDocuments();
  }

  /** Stops every server (the extension is deactivated). */
  async stop(): Promise<void> {
    const stopping = [...this.entries.values()];
    this.entries.clear();
    await Promise.all(stopping.map(async ({ server }) => (await server)?.client.dispose()));
  }

  dispose(): void {
    this.changed.dispose();
  }
}

export function isPython(document: vscode.TextDocument): boolean {
  return document.languageId === 'python';
}
