/** Running an interpreter once to learn its version and whether it has shardls. No `vscode` import. */

import { execFile, type ExecFileException } from 'node:child_process';
import type { Probe, PythonInfo } from './interpreter';
import { ISOLATED } from './isolation';

const TIMEOUT_MS = 20_000;

/** Prints what `PythonInfo` holds, as JSON; `find_spec` looks shardls up without importing it. */
const SCRIPT = [
  'import importlib.util, json, sys',
  'spec = importlib.util.find_spec("shardls")',
  'print(json.dumps({"version": list(sys.version_info[:3]), "executable": sys.executable,',
  '                  "shardls": spec.origin if spec else None}))',
].join('\n');

/**
 * A probe that runs interpreters isolated (`-I`) in `cwd`, a folder outside the workspace (the
 * extension's own): a workspace's `json.py` or `importlib/` would otherwise run here.
 */
export function probeIn(cwd: string): Probe {
  const args = [ISOLATED, '-c', SCRIPT];
  return (command) =>
    new Promise((resolve, reject) => {
      execFile(command, args, { cwd, timeout: TIMEOUT_MS, windowsHide: true }, (error, stdout, stderr) => {
        if (error !== null) {
          reject(new Error(reason(error, stderr)));
          return;
        }
        try {
          resolve(parse(stdout));
        } catch {
          reject(new Error(`did not answer as Python does: ${firstLine(stdout) || '(no output)'}`));
        }
      });
    });
}

function reason(error: ExecFileException, stderr: string): string {
  if (error.code === 'ENOENT') {
    return 'not found';
  }
  if (error.code === 'EACCES') {
    return 'not executable';
  }
  if (error.killed === true) {
    return `no answer within ${String(TIMEOUT_MS / 1000)} s`;
  }
  const last = stderr.trim().split('\n').pop();
  return `failed (exit code ${String(error.code)})${last ? `: ${last}` : ''}`;
}

function parse(stdout: string): PythonInfo {
  const value: unknown = JSON.parse(stdout);
  if (typeof value !== 'object' || value === null) {
    throw new Error('not an object');
  }
  const { version, executable, shardls } = value as Record<string, unknown>;
  const [major, minor, micro] = Array.isArray(version) ? (version as unknown[]) : [];
  if (
    typeof major !== 'number' ||
    typeof minor !== 'number' ||
    typeof micro !== 'number' ||
    typeof executable !== 'string' ||
    (shardls !== null && typeof shardls !== 'string')
  ) {
    throw new Error('unexpected fields');
  }
  return { version: [major, minor, micro], executable, shardls };
}

function firstLine(text: string): string {
  return text.trim().split('\n')[0] ?? '';
}
