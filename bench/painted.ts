/**
 * When a text was first on screen in a page, on this process's `performance.now()` clock.
 *
 * Playwright's `locator.waitFor` looks again 0, 20, 50, 100, 100, 500 ms apart (its
 * `retryWithProgressAndBackoff`), each look a round trip to the page: a text painted 5 ms after one
 * look was reported up to 100 ms later, so two pages ~20 ms apart read ~100 ms apart, and which
 * one lost moved with the machine's load. Here the page itself notes the frame that first shows
 * the text: an init script, installed before any of the page's scripts run, watches the DOM's
 * mutations for the text in a visible element, then stamps the end of the next frame (a
 * `requestAnimationFrame` callback, then a task after it: the frame's paint is done by then).
 */
import type { Page } from '@playwright/test';
import { readFileSync } from 'node:fs';
import path from 'node:path';

/** page/painted.js, read at the first page watched (a bench opens one per viewer and round). */
let script: string | undefined;

/**
 * Watches for the texts from the page's start (call before `goto`): each is stamped once, at the
 * first frame in which an element whose text holds it is visible (page/painted.js).
 */
export async function watchPainted(page: Page, texts: readonly string[]): Promise<void> {
  script ??= readFileSync(path.join(import.meta.dirname, 'page', 'painted.js'), 'utf8');
  await page.addInitScript({ content: `window.__plPaintedTexts = ${JSON.stringify(texts)};\n${script}` });
}

/**
 * The page's clock against this process's: how far the page's epoch milliseconds run ahead of
 * `performance.timeOrigin + performance.now()` here, from the shortest of a few round trips.
 */
async function clockOffset(page: Page): Promise<number> {
  let best = { rtt: Infinity, offset: 0 };
  for (let i = 0; i < 5; i++) {
    const before = performance.now();
    const there = await page.evaluate(() => performance.timeOrigin + performance.now());
    const after = performance.now();
    if (after - before < best.rtt)
      best = { rtt: after - before, offset: there - (performance.timeOrigin + (before + after) / 2) };
  }
  return best.offset;
}

/** Converts the page's epoch milliseconds to this process's `performance.now()`. */
export async function pageClock(page: Page): Promise<(epochMs: number) => number> {
  const offset = await clockOffset(page);
  return (epochMs) => epochMs - offset - performance.timeOrigin;
}

/** When the text watched by `watchPainted` was first painted, in the page's epoch milliseconds. */
export async function paintedEpoch(page: Page, text: string, timeoutMs: number): Promise<number> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`"${text}" was not on screen within ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([
      page.evaluate(
        (text) =>
          (globalThis as unknown as { __plPainted: Record<string, Promise<number>> }).__plPainted[text]!,
        text,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** When the page first received a pointer press, in its epoch milliseconds (null: none yet). */
export function pressedEpoch(page: Page): Promise<number | null> {
  return page.evaluate(() => (globalThis as unknown as { __plPressedAt?: number }).__plPressedAt ?? null);
}

/** The end of the page's load event, in the page's epoch milliseconds. */
export async function loadedEpoch(page: Page): Promise<number> {
  await page.waitForLoadState('load');
  // `navigation` entries are PerformanceNavigationTiming, which Node's types do not have.
  return page.evaluate(() => {
    const nav = performance.getEntriesByType('navigation' as never)[0] as unknown as { loadEventEnd: number };
    return performance.timeOrigin + nav.loadEventEnd;
  });
}
