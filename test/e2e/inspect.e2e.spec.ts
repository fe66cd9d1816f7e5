import { test, expect } from './helpers/fixtures';
import {
  appendRun,
  DEMO_DENIAL_SEQ,
  DEMO_EVENTS,
  DEMO_PATCH_SEQ,
  DEMO_VERDICT_SEQ,
  fillerEvents,
} from './helpers/runs';

const HEAD = DEMO_EVENTS.length;

test('an empty folder says how to make a run', async ({ app, page }) => {
  await app.open();
  await expect(page.getByTestId('empty-state')).toContainText('No runs in this folder yet');
  await expect(page.getByTestId('empty-state')).toContainText('proofloop');
  await app.screenshot('empty-folder');
});

test('open a folder, select a run, step with the keyboard through payload and state', async ({
  app,
  server,
  page,
}) => {
  await appendRun(server, 'demo', DEMO_EVENTS);
  await app.open();
  const item = app.runItem('demo');
  await expect(item).toContainText('calc-bug');
  await expect(item).toContainText('careful');
  await expect(item).toContainText(`${HEAD} ev`);
  await expect(item.getByTestId('integrity')).toHaveText('verified');

  await app.selectRun('demo');
  await app.expectSeq(1, HEAD);
  await expect(page.getByTestId('payload-kind')).toHaveText('run_started');
  await expect(page.getByTestId('payload-tree')).toContainText('make the tests pass');

  await app.press('ArrowRight');
  await app.expectSeq(2, HEAD);
  await expect(page.getByTestId('payload-kind')).toHaveText('model_proposed');
  await expect(page.getByTestId('payload-tree')).toContainText('read_file');

  await app.press('j', 3);
  await app.expectSeq(5, HEAD);
  await expect(page.getByTestId('payload-kind')).toHaveText('tool_returned');
  // Related events of the call: proposal → decision → invocation → result, each a link.
  const links = page.getByTestId('related-link');
  await expect(links).toHaveCount(4);
  await page.locator('[data-testid="related-link"][data-seq="3"]').click();
  await app.expectSeq(3, HEAD);
  await expect(page.getByTestId('payload-kind')).toHaveText('action_allowed');

  await app.press('k');
  await app.expectSeq(2, HEAD);

  // A file change renders its patch as a diff.
  await page.keyboard.press('g');
  await page.getByTestId('goto-input').fill(String(DEMO_PATCH_SEQ));
  await page.keyboard.press('Enter');
  await app.expectSeq(DEMO_PATCH_SEQ, HEAD);
  await expect(page.locator('[data-testid="patch-view"] .p-add')).toHaveText('+    return a + b');
  await expect(page.locator('[data-testid="patch-view"] .p-del')).toHaveText('-    return a - b');

  await page.keyboard.press('End');
  await app.expectSeq(HEAD, HEAD);
  await page.keyboard.press('Home');
  await app.expectSeq(1, HEAD);

  await app.press('ArrowRight', 4);
  await app.expectSeq(5, HEAD);
  await app.expectStateAt(5);
  const state = page.getByTestId('state-view');
  // The state tree keeps only the lines in view in the DOM: page down through it to the call's status.
  const tree = state.getByTestId('state-tree');
  await expect(async () => {
    const found = (await tree.textContent())?.includes('"returned"');
    if (!found) await tree.evaluate((el) => (el.scrollTop += el.clientHeight));
    expect(found).toBe(true);
  }).toPass({ intervals: [100] });
  if (await server.has('state.changes')) {
    await expect(state.getByTestId('state-changes')).not.toHaveAttribute('data-count', '0');
    await expect(state.getByTestId('state-change').first()).toBeVisible();
  }
  await app.screenshot('run-stepped');
});

test('Shift+→ jumps to the next denial and Shift+← back', async ({ app, server, page }) => {
  await appendRun(server, 'demo', DEMO_EVENTS);
  await app.open('#/run/demo/seq/2');
  await app.expectSeq(2, HEAD);
  await expect(page.locator(`[data-testid="scrub-marker"][data-seq="${DEMO_DENIAL_SEQ}"]`)).toHaveAttribute(
    'data-kind',
    'action_denied',
  );
  await app.press('Shift+ArrowRight');
  await app.expectSeq(DEMO_DENIAL_SEQ, HEAD);
  await expect(page.getByTestId('payload-kind')).toHaveText('action_denied');
  await expect(page.getByTestId('payload-tree')).toContainText('network access is not allowed');
  await app.press('Shift+J');
  await app.expectSeq(DEMO_VERDICT_SEQ, HEAD);
  await app.press('Shift+ArrowLeft');
  await app.expectSeq(DEMO_DENIAL_SEQ, HEAD);
  await app.screenshot('denial');
  await page.emulateMedia({ colorScheme: 'dark' });
  await app.screenshot('denial-dark');
});

test('reload keeps the selected run and seq', async ({ app, server, page }) => {
  await appendRun(server, 'demo', DEMO_EVENTS);
  await app.open();
  await app.selectRun('demo');
  await app.press('ArrowRight', 6);
  await app.expectSeq(7, HEAD);
  await expect(page).toHaveURL(/#\/run\/demo\/seq\/7$/);
  await page.reload();
  await app.expectSeq(7, HEAD);
  await expect(page.getByTestId('payload-kind')).toHaveText('action_allowed');
});

test('search in payloads and filter kinds', async ({ app, server, page }) => {
  await appendRun(server, 'demo', DEMO_EVENTS);
  await app.open('#/run/demo/seq/1');
  await app.expectSeq(1, HEAD);
  await page.keyboard.press('/');
  await page.getByTestId('search-input').fill('pytest');
  await page.keyboard.press('Enter');
  await app.expectSeq(13, HEAD);
  await page.keyboard.press('Escape');

  await page.keyboard.press('f');
  await page.locator('[data-testid="kind-filter"] input[data-kind="model_proposed"]').check();
  await page.getByTestId('kind-filter-apply').click();
  await expect(page.getByTestId('timeline-row')).toHaveCount(4);
  await app.press('ArrowRight');
  await expect(page.getByTestId('seq-indicator')).toHaveText(/^seq (\d+) \/ 18$/);
  await expect(page.getByTestId('payload-kind')).toHaveText('model_proposed');
});

test('a long run is paged, not read whole', async ({ app, server, page }) => {
  await appendRun(server, 'long', fillerEvents(1200));
  const reads: string[] = [];
  page.on('request', (r) => {
    if (r.url().includes('/api/events.read')) reads.push(r.postData() ?? '');
  });
  await app.open('#/run/long/seq/1');
  await app.expectSeq(1, 1200);
  await page.keyboard.press('End');
  await app.expectSeq(1200, 1200);
  const ranges = reads
    .map((b) => JSON.parse(b) as { from?: number; to?: number; kinds?: string[] })
    .filter((b) => !b.kinds);
  expect(ranges.length).toBeGreaterThan(0);
  for (const r of ranges) expect((r.to ?? Infinity) - (r.from ?? 1)).toBeLessThan(1000);
  await app.screenshot('long-run-end');
});

test('every row on screen is rendered, however far the keys or the wheel scrolled the list', async ({
  app,
  server,
  page,
}) => {
  await appendRun(server, 'long', fillerEvents(1200));
  await app.open('#/run/long/seq/1');
  await app.expectSeq(1, 1200);
  const timeline = page.getByTestId('timeline');
  // The seqs whose rows are on screen but not in the DOM (the list renders for a scroll offset
  // that moves in steps of several rows: the overscan must still cover what is shown).
  const missing = () =>
    timeline.evaluate((el) => {
      const rendered = new Set(
        [...el.querySelectorAll('[data-testid="timeline-row"]')].map((r) =>
          Number(r.getAttribute('data-seq')),
        ),
      );
      const out: number[] = [];
      const first = Math.floor(el.scrollTop / 22) + 1;
      const last = Math.min(1200, Math.ceil((el.scrollTop + el.clientHeight) / 22));
      for (let s = first; s <= last; s++) if (!rendered.has(s)) out.push(s);
      return { out, first, last };
    });
  for (let i = 2; i <= 90; i++) {
    await page.keyboard.press('ArrowRight');
    if (i % 10 === 0) {
      await app.expectSeq(i, 1200);
      const m = await missing();
      expect(m.last, 'the list scrolled with the selection').toBeGreaterThanOrEqual(i);
      expect(m.out).toEqual([]);
    }
  }
  for (const dy of [30, 150, 161, 400, -170, 2000, -37]) {
    await timeline.hover();
    await page.mouse.wheel(0, dy);
    await page.waitForTimeout(120);
    expect((await missing()).out).toEqual([]);
  }
});

test('a long run id stays whole in the header, beside the actions and a long compare list', async ({
  app,
  server,
  page,
}) => {
  // Ids as ProofLoop names executed runs: task, variant, time and a random tail.
  const a = 'fix-discount-hasty-20261201T144152-1ddc63';
  const b = 'fix-discount-careful-20261201T144153-3a44f7';
  await appendRun(server, a, DEMO_EVENTS);
  await appendRun(server, b, DEMO_EVENTS);
  await app.open();
  await app.selectRun(a);
  const title = page.getByTestId('run-title');
  await expect(title).toHaveText(a);
  expect(await title.evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
  await expect(page.getByTestId('compare-select')).toBeVisible();
  await expect(page.getByTestId('rerun-button')).toBeVisible();
  await app.screenshot('long-run-id');
});
