/** code-server (VS Code in the browser) in a fresh profile: install a .vsix, start, stop. */

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import * as path from 'node:path';

/** The user settings of the fresh profile: quiet, trusting, quick hovers. */
const USER_SETTINGS = {
  'telemetry.telemetryLevel': 'off',
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'security.workspace.trust.enabled': false,
  'extensions.ignoreRecommendations': true,
  'editor.hover.delay': 100,
  'editor.inlayHints.enabled': 'on',
  'editor.minimap.enabled': false,
};

export interface CodeServer {
  readonly url: string;
  /** The folder of VS Code's logs, among them the extension's output channel. */
  readonly logs: string;
  stop(): void;
}

/** A profile in `root`: user data, extensions, and XDG folders for code-server and Chromium (nothing goes to the home folder). */
export class Profile {
  readonly userData: string;
  readonly extensions: string;
  readonly env: NodeJS.ProcessEnv;

  constructor(
    private readonly executable: string,
    root: string,
  ) {
    this.userData = path.join(root, 'user-data');
    this.extensions = path.join(root, 'extensions');
    const xdg = { XDG_CONFIG_HOME: 'config', XDG_DATA_HOME: 'data', XDG_CACHE_HOME: 'cache' };
    this.env = { ...process.env };
    for (const [name, folder] of Object.entries(xdg)) {
      this.env[name] = path.join(root, folder);
      mkdirSync(path.join(root, folder), { recursive: true });
    }
    mkdirSync(path.join(this.userData, 'User'), { recursive: true });
    writeFileSync(path.join(this.userData, 'User', 'settings.json'), JSON.stringify(USER_SETTINGS, null, 2));
  }

  private get options(): string[] {
    return ['--user-data-dir', this.userData, '--extensions-dir', this.extensions];
  }

  install(vsix: string): void {
    execFileSync(this.executable, [...this.options, '--install-extension', vsix], { env: this.env, stdio: 'pipe' });
  }

  /** Starts code-server; the test opens folders and workspaces by URL. */
  async start(): Promise<CodeServer> {
    const port = await freePort();
    const args = [
      ...this.options,
      '--bind-addr',
      `127.0.0.1:${String(port)}`,
      '--auth',
      'none',
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
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

async function waitForHealth(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 30_000;
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
  throw new Error(`code-server did not answer at ${url} within 30 s`);
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
