import { test, expect } from './helpers/fixtures';
import { appendRun, DEMO_EVENTS } from './helpers/runs';

test('a run that grows extends the timeline, and follow keeps the newest row selected', async ({
  app,
  server,
  page,
}) => {
  await appendRun(server, 'live', DEMO_EVENTS.slice(0, 2));
  await app.open();
  await app.selectRun('live');
  // A running run opens in follow mode: the newest event selected.
  await expect(page.getByTestId('follow-toggle')).toHaveAttribute('aria-pressed', 'true');
  await app.expectSeq(2, 2);

  await appendRun(server, 'live', DEMO_EVENTS.slice(2, 6));
  await app.expectSeq(6, 6);
  await expect(app.runItem('live')).toContainText('6 ev');

  // Stepping away pauses follow; new events extend the timeline but keep the selection.
  await app.press('ArrowLeft');
  await expect(page.getByTestId('follow-toggle')).toHaveAttribute('aria-pressed', 'false');
  await app.expectSeq(5, 6);
  await appendRun(server, 'live', DEMO_EVENTS.slice(6, 9));
  await expect(page.getByTestId('seq-indicator')).toHaveText('seq 5 / 9');
  await expect(app.row(9)).toHaveAttribute('data-kind', 'file_changed');
  // The toggle turns follow back on and jumps to the newest event.
  await page.getByTestId('follow-toggle').click();
  await app.expectSeq(9, 9);
});

test('start a task from the app and watch its events arrive', async ({ app, server, page }) => {
  const r = await server.callRaw('tasks.list', {});
  expect(r.ok, r.error?.message).toBe(true);
  const tasks = (r.value as { tasks: { id: string }[] }).tasks;
  expect(tasks.length).toBeGreaterThan(0);
  await app.open();
  await page.getByTestId('open-tasks').click();
  await expect(page.getByTestId('task-select')).toBeVisible();
  await page.getByTestId('task-select').selectOption(tasks[0]!.id);
  await page.getByTestId('variant-select').selectOption('careful');
  await page.getByTestId('seed-input').fill('3');
  await page.getByTestId('start-task').click();
  await expect(page.getByTestId('task-panel')).toBeHidden();
  await expect(page.getByTestId('run-view')).toBeVisible();
  const runId = (await page.getByTestId('run-title').textContent()) ?? '';
  expect(runId).not.toBe('');
  // Events stream in while the run executes; follow keeps the newest one selected.
  await expect(page.getByTestId('follow-toggle')).toHaveAttribute('aria-pressed', 'true');
  await expect(page.locator('[data-testid="timeline-row"][data-kind="run_started"]')).toBeVisible();
  await expect(page.getByTestId('run-status')).toHaveText(/completed|failed/, { timeout: 45_000 });
  await expect(page.locator('[data-testid="timeline-row"][data-kind="judge_verdict"]').first()).toBeVisible();
  const head = await page.getByTestId('seq-indicator').textContent();
  expect(head).toMatch(/^seq (\d+) \/ \1$/);
  await expect(app.runItem(runId)).toBeVisible();
  await app.screenshot('task-live');
});

test('a link to a seq the run does not hold yet shows the head, then that seq when it arrives', async ({
  app,
  server,
  page,
}) => {
  await appendRun(server, 'growing', DEMO_EVENTS.slice(0, 2));
  await app.open('#/run/growing/seq/5');
  await expect(page.getByTestId('run-title')).toHaveText('growing');
  await app.expectSeq(2, 2);
  // Not yet: seq 5 is still ahead of the head.
  await appendRun(server, 'growing', DEMO_EVENTS.slice(2, 4));
  await app.expectSeq(4, 4);
  await appendRun(server, 'growing', DEMO_EVENTS.slice(4, 7));
  await app.expectSeq(5, 7);
  // Taken once: later events leave the selection where it is.
  await appendRun(server, 'growing', DEMO_EVENTS.slice(7, 9));
  await expect(page.getByTestId('seq-indicator')).toHaveText('seq 5 / 9');
});

test('a run made while the page was not yet listening for pushes is listed once it is', async ({
  app,
  server,
  page,
}) => {
  // The page's push stream is held back until the run has been made and its push has gone out.
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  await page.route(
    (url) => url.pathname === '/api/events',
    async (route) => {
      await held;
      await route.continue();
    },
  );
  await app.open();
  await expect(page.getByTestId('empty-state')).toBeVisible();

  // A listener of our own sees the push the page misses.
  const stream = await fetch(`${server.base}/api/events?token=${encodeURIComponent(server.token)}`);
  const reader = stream.body!.getReader();
  await appendRun(server, 'late', DEMO_EVENTS.slice(0, 2));
  const text = new TextDecoder();
  let seen = '';
  while (!/event: events\.appended\ndata: \{"run_id":"late"/.test(seen)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the push stream ended before the run's push: ${seen}`);
    seen += text.decode(value, { stream: true });
  }
  await reader.cancel();
  await expect(page.getByTestId('empty-state')).toBeVisible();

  release();
  await expect(app.runItem('late')).toBeVisible();
  await expect(app.runItem('late')).toContainText('2 ev');
});

test('a run that appends many times a second re-reads the runs list about once a second and its markers per batch, not at every append', async ({
  app,
  server,
  page,
}) => {
  await appendRun(server, 'busy', DEMO_EVENTS.slice(0, 2));
  // When the page asks for markers, on its own clock: the network's start times bunch up on a busy
  // machine (a request sent 100 ms after another can start 60 ms after it), and so failed once with
  // 30 reads counted in 2.75 s.
  await page.addInitScript(`
    window.__markerCalls = [];
    const plainFetch = window.fetch.bind(window);
    window.fetch = (input, init) => {
      if (String(input).endsWith('/api/events.read') && String(init?.body ?? '').includes('"kinds"'))
        window.__markerCalls.push(performance.now());
      return plainFetch(input, init);
    };
  `);
  await app.open();
  await app.selectRun('busy');
  await app.expectSeq(2, 2);
  const markerCalls = () =>
    page.evaluate(() => (globalThis as unknown as { __markerCalls: number[] }).__markerCalls.slice());
  const before = (await markerCalls()).length;
  // Each append in the serving process is a push; the list (counts, heads, outcomes) need not be
  // read again for each: with hundreds of runs that read kept both the page and the service busy
  // while the timeline and the state pane waited.
  let lists = 0;
  page.on('request', (r) => {
    if (r.url().endsWith('/api/runs.list')) lists += 1;
  });
  const n = 60;
  const t0 = Date.now();
  // One every 40 ms, not waiting for each answer: on a loaded machine an append's round trip alone
  // can pass 100 ms, and appends that far apart are each a batch of their own.
  const appends: Promise<unknown>[] = [];
  for (let i = 0; i < n; i++) {
    appends.push(
      server.call('events.append', {
        run_id: 'busy',
        kind: 'event_annotated',
        payload: { target_seq: 1, note: `note ${i}` },
      }),
    );
    await new Promise((r) => setTimeout(r, 40));
  }
  await Promise.all(appends);
  const seconds = (Date.now() - t0) / 1000;
  // Nothing is lost: the timeline follows every append, the list ends at the last count.
  await app.expectSeq(n + 2, n + 2);
  await expect(app.runItem('busy')).toContainText(`${n + 2} ev`);
  expect(lists, `${lists} reads of the runs list in ${seconds.toFixed(1)} s`).toBeLessThanOrEqual(
    Math.ceil(seconds) + 2,
  );
  // The timeline's markers of the new range: asked per batch of appends, at most one every 100 ms
  // (timelineSlice.ts, APPEND_EVERY_MS), where it was one per append. Over the span they were
  // asked in, which outlasts the loop by the pushes' and the timers' delays.
  const asked = (await markerCalls()).slice(before);
  const span = (Math.max(...asked) - Math.min(...asked)) / 1000;
  expect(
    asked.length,
    `${asked.length} marker reads for ${n} appends in ${span.toFixed(2)} s`,
  ).toBeLessThanOrEqual(Math.floor(span * 10) + 2);
  expect(asked.length).toBeGreaterThan(0);
  expect(asked.length).toBeLessThan(n);
});
