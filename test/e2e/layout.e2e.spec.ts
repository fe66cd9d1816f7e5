import type { Page } from '@playwright/test';
import { test, expect } from './helpers/fixtures';
import { appendRun, DEMO_EVENTS } from './helpers/runs';

const IDS = [
  'fix-discount-careful-20261203T222219-3ae902',
  'fix-discount-looping-20261203T222227-3c9d8e',
  'fix-discount-rogue-20261203T222222-c92205',
];

/** Elements inside the runs list whose text is cut (wider than their box, hidden) or that overflow the row. */
function clipped(page: Page) {
  return page.getByTestId('run-list').evaluate((list) => {
    const out: string[] = [];
    for (const li of list.querySelectorAll('[data-testid="run-item"]')) {
      const row = li.getBoundingClientRect();
      for (const el of li.querySelectorAll('*')) {
        const r = el.getBoundingClientRect();
        if (r.width === 0) continue;
        const style = (
          globalThis as unknown as { getComputedStyle(e: unknown): { overflowX: string } }
        ).getComputedStyle(el);
        const cut = el.scrollWidth > el.clientWidth + 1 && style.overflowX !== 'visible';
        const outside = r.right > row.right + 1;
        if (cut || outside) out.push(`${li.getAttribute('data-run-id')}: "${el.textContent}"`);
      }
    }
    return out;
  });
}

test('at 1024 px the runs list shows ids, variants and counts whole; at 1440 the header is one line; a compared run keeps its width', async ({
  app,
  server,
  page,
}) => {
  for (const id of IDS) await appendRun(server, id, DEMO_EVENTS);
  await page.setViewportSize({ width: 1024, height: 700 });
  await app.open();
  await expect(page.getByTestId('run-item')).toHaveCount(3);
  await expect(page.getByTestId('run-item-details')).toHaveCount(3);
  expect(await clipped(page)).toEqual([]);
  // The whole id is on screen (wrapped at its hyphens), with its variant and time.
  for (const id of IDS) {
    const text = await app
      .runItem(id)
      .locator('.run-id')
      .evaluate((e) => (e as { innerText: string }).innerText);
    expect(text.replace(/\s+/g, '')).toBe(id);
  }
  // Every row was titled with the same goal: the title goes to the row's tooltip.
  await expect(page.getByTestId('run-item-title')).toHaveCount(0);
  await expect(app.runItem(IDS[0]!)).toHaveAttribute('title', /make the tests pass/);
  await app.screenshot('layout-list-1024');

  await page.setViewportSize({ width: 1440, height: 900 });
  await app.selectRun(IDS[2]!);
  const top = async (testId: string) => (await page.getByTestId(testId).boundingBox())!.y;
  // One line: the actions and the compare control beside the id, not under it.
  expect(Math.abs((await top('rerun-button')) - (await top('run-title')))).toBeLessThan(12);
  expect(Math.abs((await top('compare-select')) - (await top('run-title')))).toBeLessThan(12);
  const toolbar = page.locator('.tl-toolbar');
  expect((await toolbar.boundingBox())!.height).toBeLessThan(40);
  await app.screenshot('layout-run-1440');

  // The diff: its rows keep a column of their own beside the detail.
  await page.setViewportSize({ width: 1024, height: 700 });
  await page.getByTestId('compare-select').selectOption(IDS[0]!);
  await page.getByTestId('compare-button').click();
  await expect(page.getByTestId('diff-view')).toBeVisible();
  const rows = (await page.getByTestId('diff-rows').boundingBox())!;
  expect(rows.width).toBeGreaterThan(300);
  await app.screenshot('layout-diff-1024');
});
