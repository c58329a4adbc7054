/** The quick pick (the status bar item's click) that sets `shardls.deviceCount` for the active document's folder. */

import * as vscode from 'vscode';
import { scopeOf } from './scope';
import { SECTION } from './settings';

const KEY = 'deviceCount';
const COUNTS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096];

type Choice = vscode.QuickPickItem & { readonly count: number | 'other' | undefined };

export async function pickDeviceCount(): Promise<void> {
  const document = vscode.window.activeTextEditor?.document;
  const folder = document === undefined ? undefined : scopeOf(document.uri)?.folder;
  const configuration = vscode.workspace.getConfiguration(SECTION, folder?.uri);
  const current = configuration.get<number | null>(KEY) ?? undefined;
  const choices: Choice[] = [
    ...COUNTS.map((count) => ({
      label: String(count),
      description: count === current ? 'current' : '',
      count,
    })),
    { label: 'Other…', description: 'any positive number', count: 'other' },
    { label: 'Clear', description: "use the file's pragma, pyproject.toml, or 8", count: undefined },
  ];
  const [target, where] = targetOf(folder);
  const choice = await vscode.window.showQuickPick(choices, {
    title: 'shardls: devices to assume',
    placeHolder: `How many devices the code runs on (jax.device_count()), for ${where}`,
  });
  if (choice === undefined) {
    return;
  }
  const count = choice.count === 'other' ? await askCount(current) : choice.count;
  if (count === null) {
    return;
  }
  await configuration.update(KEY, count, target);
}

/** Where the count is written: the document's folder, else the workspace, else the user's settings. */
function targetOf(folder: vscode.WorkspaceFolder | undefined): [vscode.ConfigurationTarget, string] {
  if (folder !== undefined) {
    return [vscode.ConfigurationTarget.WorkspaceFolder, `workspace folder ${folder.name}`];
  }
  if (vscode.workspace.workspaceFolders !== undefined) {
    return [vscode.ConfigurationTarget.Workspace, 'this workspace'];
  }
  return [vscode.ConfigurationTarget.Global, 'your user settings'];
}

/** A count typed by the user; null when they cancel. */
async function askCount(current: number | undefined): Promise<number | null> {
  const text = await vscode.window.showInputBox({
    title: 'shardls: devices to assume',
    prompt: 'A positive whole number, e.g. 6 or 768',
    ...(current === undefined ? {} : { value: String(current) }),
    validateInput: (value) => (/^\s*[1-9]\d*\s*$/.test(value) ? undefined : 'Enter a positive whole number'),
  });
  return text === undefined ? null : Number(text.trim());
}
