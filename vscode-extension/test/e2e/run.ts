/**
 * The extension in a real VS Code: installs the .vsix into code-server in a fresh profile and
 * checks in Chromium (playwright-core) what a user sees — on a model file the hover, the squiggle
 * and the Problems panel, an inlay hint, a quick fix and the status bar (with a screenshot of
 * each); then in a multi-root workspace each folder's own settings and pyproject.toml, and a
 * notebook. Then a booby-trapped folder (traps.ts), trusted and in Restricted Mode, each in a
 * fresh profile: the server serves it and none of its traps runs.
 *
 *     node out/test/e2e/run.js VSIX CODE_SERVER CHROMIUM SCRATCH SCREENSHOTS PYTHON
 *
 * PYTHON is an interpreter with shardls installed (outside SCRATCH): the user's choice in the
 * trusted profile, where the trapped folder asks for importStrategy fromEnvironment.
 * Exits non-zero, with a screenshot and the extension's log, when anything is not as expected.
 */

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { Profile, scratchEnv, type CodeServer, type ProfileOptions } from './codeServer';
import { markersIn, proveTrapsFire, trapFolder, type TrapFolder } from './traps';
import {
  expect,
  hoverText,
  leaveHover,
  line,
  openFile,
  openWorkbench,
  pointAt,
  SERVER_TIMEOUT,
  statusItem,
  step,
  UI_TIMEOUT,
} from './ui';
import { GOOD, multiRoot, singleFolder, TYPO } from './workspaces';

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

async function main(): Promise<void> {
  const [vsix, codeServer, browser, scratch, screenshots, python] = process.argv.slice(2);
  if (python === undefined || !vsix || !codeServer || !browser || !scratch || !screenshots) {
    throw new Error('usage: run.js VSIX CODE_SERVER CHROMIUM SCRATCH SCREENSHOTS PYTHON');
  }
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(screenshots, { recursive: true });
  const context = await chromium.launchPersistentContext(path.join(scratch, 'chromium'), {
    executablePath: browser,
    headless: true,
    args: CHROMIUM_ARGS,
    env: scratchEnv(path.join(scratch, 'chromium-home')),
    viewport: { width: 1280, height: 760 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const shot = async (name: string) => {
    await page.screenshot({ path: path.join(screenshots, `${name}.png`) });
  };
  const session = async (name: string, options: ProfileOptions, scenario: (server: CodeServer) => Promise<void>) => {
    const profile = new Profile(codeServer, path.join(scratch, name), options);
    await step(`${name}: install the .vsix`, () => {
      profile.install(vsix);
      return Promise.resolve();
    });
    const server = await step(`${name}: start code-server`, () => profile.start());
    try {
      await scenario(server);
    } catch (error) {
      await shot(`failure-${name}`).catch(() => undefined);
      printLogs(server.logs);
      throw error;
    } finally {
      server.stop();
    }
  };
  try {
    await session('profile', {}, async (server) => {
      await modelFile(page, server, singleFolder(path.join(scratch, 'single')), shot);
      await multiRootAndNotebook(page, server, multiRoot(path.join(scratch, 'multi')), shot);
    });
    const system = systemPython();
    const traps = trapFolder(path.join(scratch, 'traps'), system);
    await step('the traps fire when run carelessly', () => {
      proveTrapsFire(traps, system);
      return Promise.resolve();
    });
    const userLog = path.join(scratch, 'user-log', 'shardls.log');
    mkdirSync(path.dirname(userLog));
    const trusted = {
      pathPrefix: [traps.venvBin],
      settings: { 'shardls.interpreter': python, 'shardls.args': ['--log-file', userLog] },
    };
    await session('trusted', trusted, (server) => trappedTrusted(page, server, traps, python, userLog, shot));
    const restricted = { restricted: true, pathPrefix: [traps.venvBin] };
    await session('restricted', restricted, (server) => trappedRestricted(page, server, traps, shot));
  } finally {
    await context.close();
  }
}

type Shot = (name: string) => Promise<void>;

async function modelFile(page: Page, server: CodeServer, folder: string, shot: Shot): Promise<void> {
  await step('open a folder and its model.py', async () => {
    await openWorkbench(page, `${server.url}/?folder=${encodeURIComponent(folder)}`);
    await openFile(page, 'model.py');
    await line(page, GOOD).waitFor({ timeout: UI_TIMEOUT });
    await page.keyboard.press('Control+End'); // the caret away from the code in the screenshots
  });

  await step('the mistake is squiggled', async () => {
    await page.locator('.monaco-editor .squiggly-error').first().waitFor({ timeout: SERVER_TIMEOUT });
    expect((await page.locator('.monaco-editor .squiggly-error').count()) === 1, 'one error squiggle');
  });

  await step('the status bar shows the mesh', async () => {
    await statusItem(page, 'data=2·model=4 (8 dev)').waitFor({ timeout: UI_TIMEOUT });
  });

  await step('an inlay hint shows the shard shape', async () => {
    await line(page, GOOD).filter({ hasText: '→ [8, 4] ×2' }).waitFor({ timeout: UI_TIMEOUT });
    await shot('inlay-hints');
  });

  await step('the hover on P(...) shows the per-device shape', async () => {
    expectLayoutHover(await hoverText(page, GOOD, GOOD, 'per device'));
    await shot('hover');
    await leaveHover(page);
  });

  await step('the Problems panel lists the mistake with its code', async () => {
    await page.keyboard.press('Control+Shift+M');
    const row = page.locator('.markers-panel .monaco-list-row', { hasText: 'SH005' }).first();
    await row.waitFor({ timeout: UI_TIMEOUT });
    const text = await row.innerText();
    expect(text.includes("'modle'") && text.includes('did you mean'), `problem: ${text}`);
    await shot('problems');
  });

  await step('the quick fix corrects the mistake and the squiggle goes away', async () => {
    await page.mouse.click(...(await pointAt(line(page, TYPO), 'modle')));
    await page.keyboard.press('Control+.');
    // The preferred fix comes selected: Enter applies it.
    const fix = page.locator('.action-widget .monaco-list-row.focused', { hasText: "Replace 'modle' with 'model'" });
    await fix.waitFor({ timeout: UI_TIMEOUT });
    await shot('quick-fix');
    await page.keyboard.press('Enter');
    await line(page, 'P("model")))').first().waitFor({ timeout: UI_TIMEOUT });
    expect((await line(page, TYPO).count()) === 0, 'the typo is gone from the text');
    await page
      .locator('.monaco-editor .squiggly-error')
      .first()
      .waitFor({ state: 'detached', timeout: SERVER_TIMEOUT });
    await page.locator('.markers-panel .monaco-list-row', { hasText: 'SH005' }).first().waitFor({ state: 'detached' });
  });

  await step('the status bar sets the device count, which applies at once', async () => {
    await statusItem(page, 'data=2·model=4 (8 dev)').click();
    await page.locator('.quick-input-widget input').waitFor({ timeout: UI_TIMEOUT });
    await page.keyboard.type('16');
    await page.keyboard.press('Enter');
    await statusItem(page, 'data=2·model=4 (8 of 16 dev)').waitFor({ timeout: SERVER_TIMEOUT });
    const settings = readFileSync(path.join(folder, '.vscode', 'settings.json'), 'utf8');
    expect(/"shardls\.deviceCount":\s*16/.test(settings), `folder settings: ${settings}`);
  });
}

async function multiRootAndNotebook(page: Page, server: CodeServer, workspace: string, shot: Shot): Promise<void> {
  await step("multi-root: a folder's own settings apply to its files", async () => {
    await openWorkbench(page, `${server.url}/?workspace=${encodeURIComponent(workspace)}`);
    await openFile(page, 'train/model.py');
    await statusItem(page, 'data=2·model=4 (8 of 16 dev)').waitFor({ timeout: SERVER_TIMEOUT });
  });

  await step("multi-root: a notebook in another folder, with that folder's pyproject.toml", async () => {
    await openFile(page, 'explore.ipynb');
    await page.locator('.notebook-editor .monaco-editor .squiggly-error').first().waitFor({ timeout: SERVER_TIMEOUT });
    await page.mouse.click(...(await pointAt(line(page, 'P("fsdpp")'), 'fsdpp')));
    await statusItem(page, 'fsdp=4·tp=2 (8 of 32 dev)').waitFor({ timeout: UI_TIMEOUT });
    await shot('notebook');
  });
}

function expectLayoutHover(text: string): void {
  expect(text.includes('float32[8,16@model]') && text.includes('per device float32[8,4]'), `hover: ${text}`);
}

/**
 * Trust off, the user's settings naming PYTHON (with shardls installed) and a log file; the
 * folder's settings name a trap interpreter, fromEnvironment and a log file of their own.
 * fromEnvironment holds (VS Code lets a workspace set it), and runs the installed shardls, not
 * the folder's `shardls/`; the folder's interpreter and log file do not count.
 */
async function trappedTrusted(
  page: Page,
  server: CodeServer,
  traps: TrapFolder,
  python: string,
  userLog: string,
  shot: Shot,
): Promise<void> {
  await openTrapped(page, server, traps);
  await step('trusted: the server ran the installed shardls with the user’s Python, isolated', async () => {
    const started = await startLine(server.logs);
    expect(started.includes(`${python} -I -m shardls serve`), `started: ${started}`);
    expect(!started.includes(traps.folder), `started: ${started}`);
    expect(existsSync(userLog), "the log file of the user's shardls.args is written");
  });
  await noTrapRan(traps, shot, 'trusted');
}

/** Workspace trust on and the folder not trusted: the bundled server, with PATH's Python, still hovers. */
async function trappedRestricted(page: Page, server: CodeServer, traps: TrapFolder, shot: Shot): Promise<void> {
  await openTrapped(page, server, traps);
  await step('restricted: Restricted Mode, and the bundled server with a Python from outside the folder', async () => {
    await statusItem(page, 'Restricted Mode').waitFor({ timeout: UI_TIMEOUT });
    const started = await startLine(server.logs);
    expect(started.includes('the bundled shardls') && / -I \S+launch\.py serve/.test(started), `started: ${started}`);
    expect(!started.includes(traps.folder), `started: ${started}`);
  });
  await noTrapRan(traps, shot, 'restricted');
}

/** Opens the folder and hovers; when that fails, a trap that ran is the news (it may be why). */
async function openTrapped(page: Page, server: CodeServer, traps: TrapFolder): Promise<void> {
  try {
    await openAndHover(page, server, traps);
  } catch (error) {
    const ran = markersIn(traps.markers);
    if (ran.length > 0) {
      throw new Error(`traps that ran: ${ran.join(', ')}`, { cause: error });
    }
    throw error;
  }
}

async function openAndHover(page: Page, server: CodeServer, traps: TrapFolder): Promise<void> {
  await step('open the trapped folder and its model.py', async () => {
    await openWorkbench(page, `${server.url}/?folder=${encodeURIComponent(traps.folder)}`);
    await openFile(page, 'model.py');
    await line(page, GOOD).waitFor({ timeout: UI_TIMEOUT });
  });
  await step('the server hovers in the trapped folder', async () => {
    await line(page, GOOD).filter({ hasText: '→ [8, 4] ×2' }).waitFor({ timeout: SERVER_TIMEOUT });
    expectLayoutHover(await hoverText(page, GOOD, GOOD, 'per device'));
    await leaveHover(page);
  });
}

async function noTrapRan(traps: TrapFolder, shot: Shot, name: string): Promise<void> {
  await step(`${name}: no trap ran`, async () => {
    await shot(`traps-${name}`);
    const ran = markersIn(traps.markers);
    expect(ran.length === 0, `traps that ran: ${ran.join(', ')}`);
  });
}

/** The extension's "Starting the server" line, once its output channel has it on disk. */
async function startLine(logs: string): Promise<string> {
  const deadline = Date.now() + SERVER_TIMEOUT;
  for (;;) {
    const found = logFiles(logs, /shardls\.log$/)
      .flatMap((file) => readFileSync(file, 'utf8').split('\n'))
      .find((each) => each.includes('Starting the server'));
    if (found !== undefined) {
      return found;
    }
    if (Date.now() > deadline) {
      throw new Error(`the extension logged no "Starting the server" in ${logs}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** The absolute path of python3 on this process's PATH, which the traps run once they have left their mark. */
function systemPython(): string {
  return execFileSync('python3', ['-I', '-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
}

function logFiles(folder: string, name: RegExp): string[] {
  if (!existsSync(folder)) {
    return [];
  }
  return (readdirSync(folder, { recursive: true }) as string[])
    .filter((file) => name.test(file) && statSync(path.join(folder, file)).isFile())
    .map((file) => path.join(folder, file));
}

/** The extension's output channel and the extension host's log, found in VS Code's log folder. */
function printLogs(folder: string): void {
  for (const file of logFiles(folder, /(shardls|exthost)\.log$/i)) {
    console.error(`----- ${file}\n${readFileSync(file, 'utf8').slice(-6000)}`);
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exitCode = 1;
});
