/**
 * The state pane while a run is live (issue 29: "the state pane lags during live runs"). `serve`
 * (the built CLI) on a folder of 500 imported runs and one run of this process, in Debian's
 * Chromium; the run is selected, follow paused, and the keyboard steps 30 times (5 back, 5 on,
 * …), each timed from the key to the state pane showing that seq's state. Twice: while the run
 * takes an annotation every 20 ms through the API (each append a push to the page), and quiet.
 *
 * `npx tsx bench/live-state.ts` after `npm run build`, or `npm run bench -- live-state`.
 */
import { chromium, type Page } from '@playwright/test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { spawnMeasured } from './child';
import { cliArgs, cliRoot } from './cli';
import { CHROMIUM_LAUNCH } from '../test/e2e/helpers/chromium';
import { isMain } from './is-main';

const RUNS = 500;
const STEPS = 30;
const APPEND_EVERY_MS = 20;

/** 500 finished runs of 40 events, as another program writes them (seed 000's format). */
function writeFolder(dir: string): void {
  const at = (i: number) => new Date(Date.UTC(2026, 10, 29, 8, 0, i)).toISOString();
  for (let r = 0; r < RUNS; r++) {
    const id = `run-${r}`;
    const lines: object[] = [
      { seq: 1, run_id: id, kind: 'run_started', at: at(0), payload: { goal: `g${r}`, task_id: 't' } },
    ];
    for (let i = 2; i < 40; i++)
      lines.push({
        seq: i,
        run_id: id,
        kind: 'model_responded',
        at: at(i),
        payload: { content: 'x'.repeat(200) },
      });
    lines.push({
      seq: 40,
      run_id: id,
      kind: 'run_completed',
      at: at(41),
      payload: { outcome: 'passed' },
    });
    mkdirSync(path.join(dir, id));
    writeFileSync(path.join(dir, id, 'events.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  }
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor(q * s.length))]!);
};

async function steps(page: Page): Promise<number[]> {
  const seqOf = async () =>
    Number(/^seq (\d+)/.exec((await page.getByTestId('seq-indicator').textContent()) ?? '')?.[1]);
  const ready = (seq: number) =>
    page
      .locator(`[data-testid="state-view"][data-seq="${seq}"][data-state="ready"]`)
      .waitFor({ state: 'attached', timeout: 30_000 });
  let seq = await seqOf();
  await ready(seq);
  const times: number[] = [];
  for (let k = 0; k < STEPS; k++) {
    const back = k % 10 < 5;
    const t0 = performance.now();
    await page.keyboard.press(back ? 'ArrowLeft' : 'ArrowRight');
    seq += back ? -1 : 1;
    await ready(seq);
    times.push(performance.now() - t0);
  }
  return times;
}

export async function benchLiveState() {
  const root = mkdtempSync(path.join(tmpdir(), 'pl-bench-live-'));
  const folder = path.join(root, 'runs');
  mkdirSync(folder);
  writeFolder(folder);
  const cli = (args: string[]) =>
    spawnSync(process.execPath, cliArgs(['--folder', folder, ...args], 'live-cli'), { cwd: cliRoot() });
  const started = cli([
    'append',
    'live',
    'run_started',
    JSON.stringify({ task_id: 't', goal: 'g', agent: { name: 'me' } }),
  ]);
  if (started.status !== 0) throw new Error(`proofloop append: ${started.stderr.toString()}`);
  const server = spawnMeasured(
    process.execPath,
    cliArgs(['--json', 'serve', folder, '--no-otlp'], 'live-serve'),
    {
      cwd: cliRoot(),
      env: { ...process.env, PROOFLOOP_HOME: path.join(root, 'home') },
    },
  );
  // Listened for before anything is awaited: a line printed meanwhile is not missed.
  const urlLine = server.waitForLine((l) => /"url":/.test(l));
  urlLine.catch(() => undefined); // awaited below
  const browser = await chromium.launch(CHROMIUM_LAUNCH);
  try {
    const line = await urlLine;
    const url = (JSON.parse(`{${line.line.trim().replace(/,$/, '')}}`) as { url: string }).url;
    const base = new URL(url).origin;
    const token = new URLSearchParams(new URL(url).hash.slice(1)).get('token') ?? '';
    let notes = 0;
    const annotate = () =>
      fetch(`${base}/api/events.append`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-proofloop-token': token },
        body: JSON.stringify({
          run_id: 'live',
          kind: 'event_annotated',
          payload: { target_seq: 1, note: `n${notes++}` },
        }),
      });
    // Events to step through before the measurement.
    for (let i = 0; i < 80; i++) await annotate();
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    await page.goto(url);
    await page.locator('[data-testid="run-item"][data-run-id="live"]').click({ timeout: 60_000 });
    // A running run opens at its newest event, followed; one step back pauses that.
    const head = 1 + notes;
    await page.getByText(`seq ${head} / ${head}`, { exact: true }).waitFor({ timeout: 60_000 });
    await page.keyboard.press('ArrowLeft');
    await page.getByText(`seq ${head - 1} / ${head}`, { exact: true }).waitFor();
    await page.locator('[data-testid="follow-toggle"][aria-pressed="false"]').waitFor();

    const quiet = await steps(page);
    let stop = false;
    const appender = (async () => {
      while (!stop) {
        await annotate();
        await new Promise((r) => setTimeout(r, APPEND_EVERY_MS));
      }
    })();
    const appendsBefore = notes;
    const t0 = performance.now();
    const live = await steps(page);
    const seconds = (performance.now() - t0) / 1000;
    stop = true;
    await appender;
    const figures = (xs: number[]) => ({
      p50_ms: quantile(xs, 0.5),
      p90_ms: quantile(xs, 0.9),
      max_ms: quantile(xs, 1),
    });
    return {
      runs_in_folder: RUNS + 1,
      steps: STEPS,
      quiet: figures(quiet),
      while_appending: { ...figures(live), appends_per_s: Math.round((notes - appendsBefore) / seconds) },
      load_average: Number(loadavg()[0]!.toFixed(1)),
    };
  } finally {
    await browser.close();
    await server.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

if (isMain('live-state')) console.log(JSON.stringify(await benchLiveState(), null, 2));
