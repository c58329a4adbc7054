/** Small steps in the VS Code workbench, as a user takes them. */

import type { Locator, Page } from 'playwright-core';

/** Hang limits, not timings: on a busy 2-core machine a step may take many times its usual second. */
export const UI_TIMEOUT = 60_000;
/** The first analysis waits for Python to start the server. */
export const SERVER_TIMEOUT = 180_000;

/** The editor lines that hold `text` (in a file's editor or a notebook cell's). */
export function line(page: Page, text: string): Locator {
  return page.locator('.monaco-editor .view-line', { hasText: text });
}

export function statusItem(page: Page, text: string): Locator {
  return page.locator('.statusbar-item', { hasText: text }).first();
}

/**
 * Opens the workbench on a folder (`?folder=`) or a .code-workspace file (`?workspace=`), and
 * waits for the Explorer to show its folders. code-server 4.100.3 now and then opens a
 * .code-workspace without its folders ("no folder opened"); a reload reads it again.
 */
export async function openWorkbench(page: Page, url: string): Promise<void> {
  await page.goto(url);
  for (let reloads = 0; ; reloads++) {
    await page.locator('.monaco-workbench').waitFor({ timeout: SERVER_TIMEOUT });
    try {
      await page.locator('.explorer-folders-view').waitFor({ timeout: UI_TIMEOUT });
      return;
    } catch (error) {
      if (reloads === 2) {
        throw error;
      }
      await page.reload();
    }
  }
}

/**
 * Opens a file with Quick Open (Ctrl+P); `query` such as `model.py` or `train/model.py`. On a
 * busy machine the Enter now and then lands before the list is ready and opens nothing: then
 * Quick Open is closed and tried again, until the file's tab is the active one.
 */
export async function openFile(page: Page, query: string): Promise<void> {
  const name = query.split('/').pop() ?? query;
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press('Control+P');
    await page.locator('.quick-input-widget input').waitFor({ timeout: UI_TIMEOUT });
    await page.keyboard.type(query);
    await page
      .locator('.quick-input-list .monaco-list-row', { hasText: name })
      .first()
      .waitFor({ timeout: UI_TIMEOUT });
    await page.keyboard.press('Enter');
    try {
      await page.locator('.tab.active', { hasText: name }).first().waitFor({ timeout: UI_TIMEOUT });
      return;
    } catch (error) {
      if (attempt === 3) {
        throw error;
      }
      await page.keyboard.press('Escape');
    }
  }
}

/**
 * The middle of the first character of `needle` in an editor line. The editor draws a line as
 * spans of tokens in a monospace font, so a character's place is found by counting.
 */
export async function pointAt(editorLine: Locator, needle: string): Promise<[number, number]> {
  const spans = editorLine.locator(':scope > span > span');
  const target = (await editorLine.innerText()).replace(/\u00a0/g, ' ').indexOf(needle);
  let start = 0;
  for (const span of await spans.all()) {
    const text = (await span.innerText()).replace(/\u00a0/g, ' ');
    const box = await span.boundingBox();
    if (box !== null && target >= start && target < start + text.length) {
      return [box.x + (box.width * (target - start + 0.5)) / text.length, box.y + box.height / 2];
    }
    start += text.length;
  }
  throw new Error(`${needle} is not on the line`);
}

/**
 * Moves the mouse onto `needle` in the editor line holding `text` and returns the hover that says
 * `containing`. A hover asked for before the server has analysed the file comes back empty and
 * is not asked again while the mouse rests, so the mouse leaves and comes back until one shows.
 */
export async function hoverText(page: Page, text: string, needle: string, containing: string): Promise<string> {
  const hover = page.locator('.monaco-hover:not(.hidden) .monaco-hover-content', { hasText: containing }).first();
  const deadline = Date.now() + SERVER_TIMEOUT;
  for (;;) {
    await page.mouse.move(...(await pointAt(line(page, text), needle)));
    try {
      await hover.waitFor({ timeout: HOVER_RETRY_MS });
      return await hover.innerText();
    } catch (error) {
      if (Date.now() > deadline) {
        throw error;
      }
      await leaveHover(page);
    }
  }
}

/** How long one hover is waited for before the mouse tries again. */
const HOVER_RETRY_MS = 15_000;

/** Moves the mouse away and closes the hover. */
export async function leaveHover(page: Page): Promise<void> {
  await page.mouse.move(5, 400);
  await page.keyboard.press('Escape');
}

export function expect(condition: boolean, what: string): void {
  if (!condition) {
    throw new Error(`not as expected: ${what}`);
  }
}

export async function step<T>(name: string, action: () => Promise<T>): Promise<T> {
  const start = Date.now();
  const result = await action();
  console.log(`ok  ${name} (${((Date.now() - start) / 1000).toFixed(1)} s)`);
  return result;
}
