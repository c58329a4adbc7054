/**
 * The extension in a real VS Code: installs the .vsix into code-server in a fresh profile and
 * checks in Chromium (playwright-core) what a user sees — on a model file the hover, the squiggle
 * and the Problems panel, an inlay hint, a quick fix and the status bar (with a screenshot of
 * each); then in a multi-root workspace each folder's own settings and pyproject.toml, and a
 * notebook.
 *
 *     node out/test/e2e/run.js VSIX CODE_SERVER CHROMIUM SCRATCH SCREENSHOTS
 *
 * Exits non-zero, with a screenshot and the extension's log, when anything is not as expected.
 */

import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { Profile, type CodeServer } from './codeServer';
import { expect, line, openFile, openWorkbench, pointAt, SERVER_TIMEOUT, statusItem, step, UI_TIMEOUT } from './ui';
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
  const [vsix, codeServer, browser, scratch, screenshots] = process.argv.slice(2);
  if (screenshots === undefined || !vsix || !codeServer || !browser || !scratch) {
    throw new Error('usage: run.js VSIX CODE_SERVER CHROMIUM SCRATCH SCREENSHOTS');
  }
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(screenshots, { recursive: true });
  const profile = new Profile(codeServer, path.join(scratch, 'profile'));
  await step('install the .vsix', () => {
    profile.install(vsix);
    return Promise.resolve();
  });
  const server = await step('start code-server', () => profile.start());
  const context = await chromium.launchPersistentContext(path.join(scratch, 'chromium'), {
    executablePath: browser,
    headless: true,
    args: CHROMIUM_ARGS,
    env: profile.env, // its XDG folders: nothing written to the home folder
    viewport: { width: 1280, height: 760 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const shot = async (name: string) => {
    await page.screenshot({ path: path.join(screenshots, `${name}.png`) });
  };
  try {
    await modelFile(page, server, singleFolder(path.join(scratch, 'single')), shot);
    await multiRootAndNotebook(page, server, multiRoot(path.join(scratch, 'multi')), shot);
  } catch (error) {
    await shot('failure').catch(() => undefined);
    printLogs(server.logs);
    throw error;
  } finally {
    await context.close();
    server.stop();
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
    await page.mouse.move(...(await pointAt(line(page, GOOD), GOOD)));
    const hover = page.locator('.monaco-hover:not(.hidden) .monaco-hover-content', { hasText: 'per device' }).first();
    await hover.waitFor({ timeout: UI_TIMEOUT });
    const text = await hover.innerText();
    expect(text.includes('float32[8,16@model]') && text.includes('per device float32[8,4]'), `hover: ${text}`);
    await shot('hover');
    await page.mouse.move(5, 400);
    await page.keyboard.press('Escape');
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

/** The extension's output channel and the extension host's log, found in VS Code's log folder. */
function printLogs(folder: string): void {
  const files = (readdirSync(folder, { recursive: true }) as string[]).filter(
    (name) => /(shardls|exthost)\.log$/i.test(name) && statSync(path.join(folder, name)).isFile(),
  );
  for (const name of files) {
    console.error(`----- ${name}\n${readFileSync(path.join(folder, name), 'utf8').slice(-6000)}`);
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exitCode = 1;
});
