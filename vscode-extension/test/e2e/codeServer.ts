/** code-server (VS Code in the browser) in a fresh profile: install a .vsix, start, stop. */

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import * as path from 'node:path';

/** The user settings of every fresh profile: quiet, quick hovers. */
const USER_SETTINGS = {
  'telemetry.telemetryLevel': 'off',
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'extensions.ignoreRecommendations': true,
  'editor.hover.delay': 100,
  'editor.inlayHints.enabled': 'on',
  'editor.minimap.enabled': false,
};

/** Workspace trust off: every folder is trusted, as with `--disable-workspace-trust`. */
const TRUSTING = { 'security.workspace.trust.enabled': false };
/** Workspace trust on, without the start-up question: a folder opens in Restricted Mode. */
const RESTRICTED = {
  'security.workspace.trust.enabled': true,
  'security.workspace.trust.startupPrompt': 'never',
};

export interface ProfileOptions {
  /** Folders open in Restricted Mode (workspace trust on, nothing trusted); default: trust off. */
  readonly restricted?: boolean;
  /** More user settings. */
  readonly settings?: Readonly<Record<string, unknown>>;
  /** Folders put first on code-server's PATH (and so on the extension host's). */
  readonly pathPrefix?: readonly string[];
}

export interface CodeServer {
  readonly url: string;
  /** The folder of VS Code's logs, among them the extension's output channel. */
  readonly logs: string;
  stop(): void;
}

/** This process's environment with XDG folders in `root`, so that nothing is written to the home folder. */
export function scratchEnv(root: string): NodeJS.ProcessEnv {
  const env = { ...process.env };
  const xdg = { XDG_CONFIG_HOME: 'config', XDG_DATA_HOME: 'data', XDG_CACHE_HOME: 'cache' };
  for (const [name, folder] of Object.entries(xdg)) {
    env[name] = path.join(root, folder);
    mkdirSync(env[name], { recursive: true });
  }
  return env;
}

/** A profile in `root`: user data, extensions, and XDG folders for code-server and Chromium (nothing goes to the home folder). */
export class Profile {
  readonly userData: string;
  readonly extensions: string;
  readonly env: NodeJS.ProcessEnv;

  constructor(
    private readonly executable: string,
    root: string,
    private readonly options: ProfileOptions = {},
  ) {
    this.userData = path.join(root, 'user-data');
    this.extensions = path.join(root, 'extensions');
    this.env = scratchEnv(root);
    if (options.pathPrefix !== undefined) {
      this.env.PATH = [...options.pathPrefix, this.env.PATH ?? ''].join(path.delimiter);
    }
    const settings = {
      ...USER_SETTINGS,
      ...(options.restricted === true ? RESTRICTED : TRUSTING),
      ...options.settings,
    };
    mkdirSync(path.join(this.userData, 'User'), { recursive: true });
    writeFileSync(path.join(this.userData, 'User', 'settings.json'), JSON.stringify(settings, null, 2));
  }

  private get folders(): string[] {
    return ['--user-data-dir', this.userData, '--extensions-dir', this.extensions];
  }

  install(vsix: string): void {
    execFileSync(this.executable, [...this.folders, '--install-extension', vsix], { env: this.env, stdio: 'pipe' });
  }

  /** Starts code-server; the test opens folders and workspaces by URL. */
  async start(): Promise<CodeServer> {
    const port = await freePort();
    const args = [
      ...this.folders,
      '--bind-addr',
      `127.0.0.1:${String(port)}`,
      '--auth',
      'none',
      '--disable-telemetry',
      '--disable-update-check',
      ...(this.options.restricted === true ? [] : ['--disable-workspace-trust']),
      '--disable-getting-started-override',
    ];
    // Its own process group, so that stopping it stops every process it started.
    const child = spawn(this.executable, args, { env: this.env, detached: true, stdio: 'ignore' });
    const url = `http://127.0.0.1:${String(port)}`;
    const server = {
      url,
      logs: path.join(this.userData, 'logs'),
      stop: () => {
        stopGroup(child);
      },
    };
    try {
      await waitForHealth(url, child);
    } catch (error) {
      server.stop();
      throw error;
    }
    return server;
  }
}

/** code-server answers in about a second; far longer only when it hangs. */
const HEALTH_TIMEOUT_MS = 180_000;

async function waitForHealth(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + HEALTH_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(`code-server exited with ${String(child.exitCode)}`);
    }
    try {
      if ((await fetch(`${url}/healthz`)).ok) {
        return;
      }
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`code-server did not answer at ${url} within ${String(HEALTH_TIMEOUT_MS / 1000)} s`);
}

function stopGroup(child: ChildProcess): void {
  if (child.pid !== undefined && child.exitCode === null) {
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => {
        if (typeof address === 'object' && address !== null) {
          resolve(address.port);
        } else {
          reject(new Error('no port'));
        }
      });
    });
  });
}
