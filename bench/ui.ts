// The inspector in web mode, in Debian's Chromium, on a 1,000,000-event run: time from selecting
// the run to the first timeline rows painted, one keyboard step including the state panel update
// (→, and PageDown: 25 seqs, which the inspector has not asked for ahead), and the renderer's JS
// heap. Runnable alone: `npx tsx bench/ui.ts`.
import { chromium, type Page } from '@playwright/test';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Ledger } from '../electron/ledger';
import { ProofloopService } from '../electron/service/service';
import { startWebServer } from '../electron/transports/http';
import { rendererDir } from '../electron/paths';
import { isMain } from './is-main';
import { CHROMIUM_LAUNCH } from '../test/e2e/helpers/chromium';

// Installed in the page as source text (the bench's own TypeScript has no DOM types). A key moves
// the selection by window.__delta seqs (1 for →, 25 for PageDown).
export const IN_PAGE_STEP_TIMER = `(() => {
  window.__steps = [];
  window.__delta = 1;
  window.addEventListener('keydown', () => {
    const t0 = performance.now();
    const view = () => document.querySelector('[data-testid="state-view"]');
    const target = String(Number(view()?.dataset.seq ?? 0) + window.__delta);
    const done = () => { const v = view(); return v && v.dataset.seq === target && v.dataset.state === 'ready'; };
    const finish = () => requestAnimationFrame(() => window.__steps.push(performance.now() - t0));
    const obs = new MutationObserver(() => { if (done()) { obs.disconnect(); finish(); } });
    obs.observe(document.body, { subtree: true, attributes: true, childList: true });
  }, true);
})()`;

export function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return Number(s[Math.min(s.length - 1, Math.floor(q * s.length))]!.toFixed(1));
}

/**
 * Presses `key` `n` times (IN_PAGE_STEP_TIMER installed, the timeline focused), each once the last
 * step is done; the ms of each step, timed in the page.
 */
export async function timeSteps(page: Page, key: string, delta: number, n: number): Promise<number[]> {
  await page.evaluate((d) => {
    const w = globalThis as unknown as { __steps: number[]; __delta: number };
    w.__steps = [];
    w.__delta = d;
  }, delta);
  for (let i = 1; i <= n; i++) {
    await page.keyboard.press(key);
    await page.waitForFunction(
      (k) => (globalThis as unknown as { __steps: number[] }).__steps.length >= k,
      i,
      {
        polling: 'raf',
      },
    );
  }
  return page.evaluate(() => (globalThis as unknown as { __steps: number[] }).__steps);
}

/**
 * serve's opening import, as the page benches wait for it: polls `folder.current` through serve's
 * API (the page URL's origin and token) until it has imported files, and returns the event count
 * of `runId` then. `waits` gets how long each poll waited: a call shares serve's main thread with
 * the import.
 */
export async function untilImported(
  url: string,
  runId: string,
  since: number,
  waits: number[] = [],
): Promise<number> {
  const base = new URL(url).origin;
  const token = /token=([\w-]+)/.exec(url)![1]!;
  const api = async <T>(method: string): Promise<T> => {
    const r = await fetch(`${base}/api/${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-proofloop-token': token },
      body: '{}',
    });
    return ((await r.json()) as { value: T }).value;
  };
  for (;;) {
    const tCall = performance.now();
    const cur = await api<{ imported: { files: number } } | null>('folder.current');
    waits.push(performance.now() - tCall);
    if (cur && cur.imported.files > 0) {
      const runs = await api<{ run_id: string; event_count: number }[]>('runs.list');
      return runs.find((r) => r.run_id === runId)?.event_count ?? 0;
    }
    if (performance.now() - since > 900_000) throw new Error('the opening import took over 15 min');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Opens `#/run/<runId>/seq/<seq>` in the page; the ms until the state view is ready at that seq. */
export async function jumpTo(page: Page, runId: string, seq: number): Promise<number> {
  await page.evaluate(
    (s) => ((globalThis as unknown as { location: { hash: string } }).location.hash = s),
    `#/run/${runId}/seq/${seq}`,
  );
  const t = performance.now();
  await page
    .locator(`[data-testid="state-view"][data-seq="${seq}"][data-state="ready"]`)
    .waitFor({ timeout: 120_000 });
  return performance.now() - t;
}

/** A realistic mix of kinds, cycling through the steps of an agent run. */
function makeEvents(from: number, n: number) {
  const out = [];
  for (let i = from; i < from + n; i++) {
    const call = `c${Math.floor(i / 4)}`;
    switch (i % 4) {
      case 0:
        out.push({
          kind: 'model_proposed',
          payload: { call_id: call, tool: 'read_file', args: { path: `src/f${i % 97}.js` }, tokens: 40 },
        });
        break;
      case 1:
        out.push(
          i % 401 === 1
            ? {
                kind: 'action_denied',
                payload: { call_id: call, rule: 'paths.read', reason: 'outside the workspace' },
              }
            : { kind: 'action_allowed', payload: { call_id: call, rule: 'tools.read_file' } },
        );
        break;
      case 2:
        out.push({
          kind: 'tool_invoked',
          payload: { call_id: call, tool: 'read_file', args: { path: `src/f${i % 97}.js` } },
        });
        break;
      default:
        out.push({
          kind: 'tool_returned',
          payload: {
            call_id: call,
            status: 'ok',
            duration_ms: i % 13,
            excerpt: `export function f${i}(x) { return x * ${i % 7}; }`,
            bytes: 48,
          },
        });
    }
  }
  return out;
}

export async function benchUi(n = 1_000_000) {
  if (!existsSync(CHROMIUM_LAUNCH.executablePath))
    return { skipped: `${CHROMIUM_LAUNCH.executablePath} is missing (apt-get install -y chromium)` };
  const staticDir = rendererDir();
  if (!staticDir) return { skipped: 'renderer not built: npm run build' };
  const dir = mkdtempSync(path.join(tmpdir(), 'pl-bench-ui-'));
  try {
    const ledger = Ledger.open(dir);
    const w = ledger.writer('big');
    w.append('run_started', {
      task_id: 'discount',
      goal: 'fix the discount',
      agent: { name: 'sim', variant: 'looping', seed: 1 },
      budget: { steps: n },
    });
    for (let i = 1; i < n - 1; i += 10_000) w.appendBatch(makeEvents(i, Math.min(10_000, n - 1 - i)));
    w.append('run_completed', { outcome: 'failed' });
    w.close();
    ledger.close();

    const service = new ProofloopService();
    await service.openFolder(dir);
    const server = await startWebServer(service, { staticDir });
    const browser = await chromium.launch(CHROMIUM_LAUNCH);
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      await page.goto(server.url);
      await page.getByTestId('run-item').first().waitFor();
      const t0 = performance.now();
      await page.getByTestId('run-item').filter({ hasText: 'big' }).first().click();
      await page.getByTestId('timeline-row').first().waitFor();
      const firstRowsMs = performance.now() - t0;

      // Stand in the middle of the run, where the state comes from a snapshot plus folds.
      const mid = Math.floor(n / 2);
      await page.evaluate(
        (s) =>
          ((globalThis as unknown as { location: { hash: string } }).location.hash = `#/run/big/seq/${s}`),
        mid,
      );
      await page.locator(`[data-testid="state-view"][data-seq="${mid}"][data-state="ready"]`).waitFor();
      await page.getByTestId('timeline').focus();
      // Timed inside the page, from the key event to the frame after the state panel shows the new
      // seq as ready: Playwright's own polling would add tens of milliseconds of its own.
      await page.evaluate(IN_PAGE_STEP_TIMER);
      // PROOFLOOP_BENCH_PROFILE=<file.cpuprofile> records the renderer's CPU profile of the steps.
      const profileTo = process.env.PROOFLOOP_BENCH_PROFILE;
      const prof = profileTo ? await page.context().newCDPSession(page) : null;
      if (prof) {
        await prof.send('Profiler.enable');
        await prof.send('Profiler.start');
      }
      const steps = await timeSteps(page, 'ArrowRight', 1, 60);
      // PageDown moves 25 seqs: the inspector asks ahead only for the next seq, so these steps wait
      // for the service (the state and its changes) as a jump does.
      const jumps = await timeSteps(page, 'PageDown', 25, 30);
      if (prof && profileTo) {
        const { profile } = await prof.send('Profiler.stop');
        writeFileSync(profileTo, JSON.stringify(profile));
      }
      const cdp = await page.context().newCDPSession(page);
      await cdp.send('Performance.enable');
      await cdp.send('HeapProfiler.collectGarbage');
      const { metrics } = await cdp.send('Performance.getMetrics');
      const heap = metrics.find((m) => m.name === 'JSHeapUsedSize')?.value ?? NaN;
      return {
        events: n,
        select_to_first_rows_ms: Number(firstRowsMs.toFixed(0)),
        step_ms: { p50: quantile(steps, 0.5), p95: quantile(steps, 0.95), max: quantile(steps, 1) },
        page_down_step_ms: { p50: quantile(jumps, 0.5), p95: quantile(jumps, 0.95), max: quantile(jumps, 1) },
        js_heap_mb: Number((heap / 2 ** 20).toFixed(1)),
        goals: { first_rows_ms: 1000, step_p95_ms: 50, js_heap_mb: 300 },
      };
    } finally {
      await browser.close();
      await server.close();
      service.closeFolder();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (isMain('ui')) {
  const n = Number(process.argv[2] ?? 1_000_000);
  console.log(JSON.stringify(await benchUi(n), null, 2));
}
