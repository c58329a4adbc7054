/**
 * Which server serves a document. Each workspace folder gets its own server, so that the folder's
 * settings and its pyproject.toml apply to its files (a folder nested in another is served with
 * the outer one). Untitled documents, and every file when no folder is open, go to a server of
 * their own, which reads the user's and the workspace's settings.
 */

import * as vscode from 'vscode';
import type { DocumentSelector } from 'vscode-languageclient/node';
import { isInside } from './isolation';

export interface Scope {
  /** The folder's URI; '' for the scope without a folder. */
  readonly key: string;
  readonly folder: vscode.WorkspaceFolder | undefined;
}

export const LOOSE: Scope = { key: '', folder: undefined };

/** The scope of a file, a notebook or a notebook cell; undefined when no server serves it. */
export function scopeOf(uri: vscode.Uri): Scope | undefined {
  const target = notebookOf(uri) ?? uri;
  if (target.scheme === 'untitled') {
    return LOOSE;
  }
  if (target.scheme !== 'file') {
    return undefined;
  }
  const folders = vscode.workspace.workspaceFolders ?? [];
  if (folders.length === 0) {
    return LOOSE;
  }
  const outermost = [...folders]
    .sort((a, b) => a.uri.fsPath.length - b.uri.fsPath.length)
    .find((folder) => isInside(target.fsPath, folder.uri.fsPath));
  return outermost === undefined ? undefined : { key: outermost.uri.toString(), folder: outermost };
}

/** How messages name a scope: `folder train`, or `files outside the workspace folders`. */
export function placeOf(scope: Scope): string {
  return scope.folder === undefined ? 'files outside the workspace folders' : `folder ${scope.folder.name}`;
}

/** What the scope's language client serves: Python files and notebooks' Python cells. */
export function documentSelector(scope: Scope): DocumentSelector {
  if (scope.folder !== undefined) {
    const pattern = `${scope.folder.uri.fsPath.replace(/\\/g, '/')}/**/*`;
    return [
      { scheme: 'file', language: 'python', pattern },
      { notebook: { scheme: 'file', pattern }, language: 'python' },
    ];
  }
  const untitled = { scheme: 'untitled', language: 'python' };
  if ((vscode.workspace.workspaceFolders ?? []).length > 0) {
    return [untitled];
  }
  return [untitled, { scheme: 'file', language: 'python' }, { notebook: { scheme: 'file' }, language: 'python' }];
}

/** The notebook a cell belongs to; undefined for anything else. */
function notebookOf(uri: vscode.Uri): vscode.Uri | undefined {
  if (uri.scheme !== 'vscode-notebook-cell') {
    return undefined;
  }
  const cell = uri.toString();
  return vscode.workspace.notebookDocuments.find((notebook) =>
    notebook.getCells().some((each) => each.document.uri.toString() === cell),
  )?.uri;
}
