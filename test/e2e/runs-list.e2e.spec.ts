import { test, expect } from './helpers/fixtures';
import { writeJsonl } from './helpers/server';
import { appendRun, DEMO_EVENTS } from './helpers/runs';

/**
 * The runs list's rows: titles come with the list itself (runs.list carries the glances of its
 * most recently active runs), and so do small runs' counts; a larger run's counts come for the rows
 * on screen in one runs.details call. A row used to make two requests (its summary, its state at
 * the head), three rows at a time.
 */
test('the runs list shows its rows’ titles and counts without a request per row', async ({
  app,
  folder,
  startServer,
  page,
}) => {
  const n = 12;
  for (let r = 0; r < n; r++) {
    const id = `run-${String(r).padStart(2, '0')}`;
    const at = (i: number) => new Date(Date.UTC(2026, 10, 29, 8, r, i)).toISOString();
    writeJsonl(folder, `${id}/events.jsonl`, [
      {
        seq: 1,
        run_id: id,
        kind: 'run_started',
        at: at(0),
        payload: { task_id: 't', goal: `goal number ${r}` },
      },
      ...[1, 2, 3].flatMap((c) => [
        {
          seq: 2 * c,
          run_id: id,
          kind: 'model_proposed',
          at: at(2 * c),
          payload: { call_id: `c${c}`, tool: 'read_file', args: { path: `f${c}` } },
        },
        {
          seq: 2 * c + 1,
          run_id: id,
          kind: 'tool_invoked',
          at: at(2 * c + 1),
          payload: { call_id: `c${c}`, tool: 'read_file', args: { path: `f${c}` } },
        },
      ]),
    ]);
  }
  // Newer than the others (on screen first), and more events than a list folds for counts
  // (LIST_COUNTS_EVENTS in electron/service/summary.ts): its counts come with runs.details.
  const bigCalls = 1000;
  const bigAt = (i: number) => new Date(Date.UTC(2026, 10, 30, 8, 0, 0, i)).toISOString();
  writeJsonl(folder, 'run-big/events.jsonl', [
    {
      seq: 1,
      run_id: 'run-big',
      kind: 'run_started',
      at: bigAt(0),
      payload: { task_id: 't', goal: 'big goal' },
    },
    ...Array.from({ length: bigCalls }, (_, k) => k + 1).flatMap((c) => [
      {
        seq: 2 * c,
        run_id: 'run-big',
        kind: 'model_proposed',
        at: bigAt(2 * c),
        payload: { call_id: `c${c}`, tool: 'read_file', args: { path: `f${c}` } },
      },
      {
        seq: 2 * c + 1,
        run_id: 'run-big',
        kind: 'tool_invoked',
        at: bigAt(2 * c + 1),
        payload: { call_id: `c${c}`, tool: 'read_file', args: { path: `f${c}` } },
      },
    ]),
  ]);
  const server = await startServer();
  // The page opened once serve's opening import is done: rows that arrive (or grow) commit by commit
  // ask for their counts again, which is not what this counts (seen once in a full run on a loaded
  // machine: 6 calls).
  await expect
    .poll(
      async () =>
        (await server.call<{ event_count: number }[]>('runs.list')).filter(
          (r) => r.event_count === 7 || r.event_count === 2 * bigCalls + 1,
        ).length,
    )
    .toBe(n + 1);
  const asked: Record<string, number> = { 'runs.details': 0, 'run.summary': 0, 'state.at': 0 };
  const detailsOf = new Set<string>();
  page.on('request', (req) => {
    const m = /\/api\/([\w.]+)$/.exec(req.url())?.[1];
    if (m && m in asked) asked[m]! += 1;
    if (m === 'runs.details')
      for (const id of (req.postDataJSON() as { run_ids: string[] }).run_ids) detailsOf.add(id);
  });
  await app.open();
  const item = (r: number) => app.runItem(`run-${String(r).padStart(2, '0')}`);
  // Every row's title, those below the fold too: they came with the list.
  for (let r = 0; r < n; r++)
    await expect(item(r).getByTestId('run-item-title')).toHaveText(`goal number ${r}`);
  // The small runs' counts came with the list too, those below the fold as well.
  await item(0).scrollIntoViewIfNeeded();
  for (let r = 0; r < n; r++) await expect(item(r).getByTestId('run-item-calls')).toHaveText('3 calls');
  // The large run's, asked for when its row showed (a row that comes into view again may ask again).
  await app.runItem('run-big').scrollIntoViewIfNeeded();
  await expect(app.runItem('run-big').getByTestId('run-item-calls')).toHaveText(`${bigCalls} calls`);
  expect(asked['runs.details'], JSON.stringify(asked)).toBeGreaterThanOrEqual(1);
  expect(asked['runs.details'], JSON.stringify(asked)).toBeLessThanOrEqual(3);
  expect([...detailsOf]).toEqual(['run-big']);
  expect(asked['run.summary']).toBe(0);
  expect(asked['state.at']).toBe(0);
});

/**
 * Web mode: the page reads the folder and the runs at its start, and again when its push stream
 * connects only if a push went out that those reads may not have seen (renderer/api/pushGap.ts). It
 * read both twice at every start, in the moments after the list was first drawn. The other side, a
 * push missed before the stream connected, is live.e2e.spec.ts's "a run made while the page was not
 * yet listening".
 */
test('a page whose stream missed no push reads the folder and the runs once', async ({
  app,
  server,
  page,
}) => {
  await appendRun(server, 'one', DEMO_EVENTS.slice(0, 2));
  // The run's import pushes as it commits (events, the list, its jobs): the page opens once the
  // server has been quiet for a while, and a listener of our own says whether it stays quiet.
  const pushes: string[] = [];
  let lastPushAt = Date.now();
  const stream = await fetch(`${server.base}/api/events?token=${encodeURIComponent(server.token)}`);
  const reader = stream.body!.getReader();
  const text = new TextDecoder();
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) return;
      for (const m of text.decode(value, { stream: true }).matchAll(/^event: ([\w.]+)$/gm))
        if (m[1] !== 'hello') {
          pushes.push(m[1]!);
          lastPushAt = Date.now();
        }
    }
  })();
  await expect.poll(async () => (await server.call<unknown[]>('runs.list')).length).toBe(1);
  await expect.poll(() => Date.now() - lastPushAt, { timeout: 20_000 }).toBeGreaterThan(1500);
  const quietFrom = pushes.length;
  const asked: Record<string, number> = { 'runs.list': 0, 'folder.current': 0 };
  page.on('request', (req) => {
    const m = /\/api\/([\w.]+)$/.exec(req.url())?.[1];
    if (m && m in asked) asked[m]! += 1;
  });
  const pageStream = page.waitForResponse((res) => new URL(res.url()).pathname === '/api/events');
  await app.open();
  await expect(app.runItem('one')).toBeVisible();
  // The stream's hello (written with its headers) decides within milliseconds of them: a second
  // is ample for the reads it would have made.
  await pageStream;
  await page.waitForTimeout(1000);
  await reader.cancel();
  expect(pushes.slice(quietFrom), 'pushes while the page opened').toEqual([]);
  expect(asked, JSON.stringify(asked)).toEqual({ 'runs.list': 1, 'folder.current': 1 });
});

/**
 * The page's first reads go out before its app script runs (renderer/api/early.ts): before, they
 * waited for its ~440 KB to arrive, compile and run, and the list for them.
 */
test('the page asks for the folder and its runs before its app code runs', async ({ app, server, page }) => {
  await appendRun(server, 'one', DEMO_EVENTS.slice(0, 2));
  await expect.poll(async () => (await server.call<unknown[]>('runs.list')).length).toBe(1);
  await app.open();
  await expect(app.runItem('one')).toBeVisible();
  const { reads, appAt } = await page.evaluate(() => ({
    reads: performance
      .getEntriesByType('resource')
      .map((e) => ({ name: new URL(e.name).pathname, start: e.startTime }))
      .filter((e) => e.name.startsWith('/api/') && e.name !== '/api/events'),
    // boot.tsx marks it first thing.
    appAt: performance.getEntriesByName('proofloop:app')[0]?.startTime ?? null,
  }));
  expect(appAt, 'the app marked its start').not.toBeNull();
  const at = (name: string) => reads.filter((r) => r.name === `/api/${name}`).map((r) => r.start);
  // A push the page's first reads did not see (the appended run's snapshots) may make it read
  // again later: only the first reads are the early ones.
  expect(at('runs.list').length, JSON.stringify(reads)).toBeGreaterThan(0);
  expect(at('folder.current').length, JSON.stringify(reads)).toBeGreaterThan(0);
  expect(at('runs.list')[0], 'runs.list asked before the app ran').toBeLessThan(appAt!);
  expect(at('folder.current')[0], 'folder.current asked before the app ran').toBeLessThan(appAt!);
});

/**
 * A run opened from the list is drawn once, with its first events: its view used to be drawn empty
 * at the click (~30 ms of the click's handler) and again when the events came. Its first page is
 * read before the view switches, for at most FIRST_PAGE_WAIT_MS (store/timelineSlice.ts).
 */
test('a run opened from the list is drawn with its first events, not empty first; its row is selected meanwhile', async ({
  app,
  server,
  page,
}) => {
  await appendRun(server, 'drawn', DEMO_EVENTS.slice(0, 4));
  // What the run's view held in the first frame it was in the page, and whether its row was selected
  // before (while its events were read). (A script, as the page runs it: this file is compiled
  // without the DOM's types.)
  await page.addInitScript(`
    const observer = new MutationObserver(() => {
      if (!document.querySelector('[data-testid="run-title"]')) {
        if (document.querySelector('.run-item.selected')) window.__selectedBefore = true;
        return;
      }
      const row = document.querySelector('[data-testid="timeline-row"][data-seq="1"]');
      window.__firstView = row ? (row.getAttribute('data-kind') ?? 'row without its event') : 'no row';
      observer.disconnect();
    });
    document.addEventListener('DOMContentLoaded', () =>
      observer.observe(document.body, { childList: true, subtree: true, attributes: true }),
    );
  `);
  await app.open();
  await app.selectRun('drawn');
  const seen = await page.evaluate(() => {
    const w = globalThis as unknown as { __firstView?: string; __selectedBefore?: boolean };
    return { first: w.__firstView, selectedBefore: w.__selectedBefore ?? false };
  });
  expect(seen).toEqual({ first: DEMO_EVENTS[0]!.kind, selectedBefore: true });
});

/**
 * A key pressed while a run opens (its view waits up to 300 ms for its first events) shows the view
 * at once and acts on it: the keys belonged to the run's view, so such a key went nowhere.
 */
test('a key pressed while a run opens acts on it', async ({ app, server, page }) => {
  // A finished run opens at its first event (a running one follows its head).
  await appendRun(server, 'keyed', DEMO_EVENTS);
  await app.open();
  await expect(app.runItem('keyed')).toBeVisible();
  // Its first events come late, so the keys below are pressed while it opens.
  await page.route('**/api/events.read', async (route) => {
    await new Promise((r) => setTimeout(r, 250));
    await route.continue();
  });
  await app.runItem('keyed').click();
  await page.keyboard.press('?');
  await expect(page.getByTestId('help-box')).toContainText('PageUp / PageDown');
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('help-box')).toHaveCount(0);

  await page.getByTestId('run-filter').click();
  await page.keyboard.press('Escape');
  await page.evaluate(() => ((globalThis as unknown as { location: { hash: string } }).location.hash = ''));
  await expect(page.getByTestId('no-selection')).toBeVisible();
  await app.runItem('keyed').click();
  await page.locator('body').press('ArrowRight');
  await app.expectSeq(2, DEMO_EVENTS.length);
});

/**
 * A run's first events are asked when its row is pressed (a click by hand is a press and a release
 * ~0.1 s apart), and the click that follows uses that answer: one read, begun before the release.
 */
test('a run’s first events are asked at the press of its row, and the click uses them', async ({
  app,
  server,
  page,
}) => {
  await appendRun(server, 'pressed', DEMO_EVENTS);
  await app.open();
  const row = app.runItem('pressed');
  await expect(row).toBeVisible();
  const reads: { from: unknown; at: number }[] = [];
  page.on('request', (req) => {
    if (!req.url().endsWith('/api/events.read')) return;
    const args = req.postDataJSON() as { run_id: string; from?: number; kinds?: unknown };
    if (args.run_id === 'pressed' && !args.kinds) reads.push({ from: args.from, at: Date.now() });
  });
  const box = (await row.boundingBox())!;
  await page.mouse.move(box.x + 20, box.y + box.height / 2);
  await page.mouse.down();
  await expect.poll(() => reads.length).toBe(1);
  const released = Date.now();
  await page.mouse.up();
  await expect(page.getByTestId('run-title')).toBeVisible();
  await expect(app.row(1)).toBeVisible();
  await page.waitForTimeout(300);
  // The first page, read once, before the release; nothing asked it again.
  expect(reads.filter((r) => r.from === 1)).toHaveLength(1);
  expect(reads[0]!.at).toBeLessThanOrEqual(released);
});
