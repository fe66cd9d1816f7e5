/**
 * Claude Code sessions as users have them (issue 13), every figure a whole `proofloop` process:
 * - many: a folder of 10,000 small sessions (~22 lines each, 50 projects): the first `open`, opening
 *   again with nothing new (goal ≤ 1 s), and a command about one run (`events`, `state --at`), which
 *   must not rescan the folder, beside `runs`, which does. Whether they rescan is checked too: a
 *   session added after the open must not be in the ledger after `events`/`state`, and is after `runs`.
 * - big: one 1 GB session with multi-MB lines (pasted screenshots, large tool outputs): `open` MB/s
 *   and peak RSS (goal ≤ 400 MB); then `serve` on a fresh ledger in Debian's Chromium: time from
 *   starting serve to the session's first timeline rows (goal ≤ 2 s), and a keyboard step p95
 *   (goal ≤ 50 ms) in the middle of the session, while its snapshots may still be building; and
 *   how long an API call waits while serve imports (call_during_import_ms, polled every 100 ms).
 * The foreign folders keep their ledgers in a temporary PROOFLOOP_HOME. Runnable alone after
 * `npm run build`: `npx tsx bench/sessions.ts [many|big]`; PL_BENCH_SESSIONS=<n>, PL_BENCH_BIG_MB=<mb>
 * for quicker looks; PROOFLOOP_BENCH_CPU_PROF=<dir> profiles the CLI children (bench/cli.ts).
 */
import { chromium } from '@playwright/test';
import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { figures, runMeasured, spawnMeasured, type ChildFigures } from './child';
import { cliArgs, cliRoot, profileSummary } from './cli';
import { writeClaudeSession, uuidOf } from './gen-claude';
import { IN_PAGE_STEP_TIMER, jumpTo, quantile, timeSteps, untilImported } from './ui';
import { CHROMIUM_LAUNCH } from '../test/e2e/helpers/chromium';
import { isMain } from './is-main';

export const GOALS = { reopen_ms: 1000, big_peak_rss_mb: 400, first_rows_ms: 2000, step_p95_ms: 50 };

const median = (xs: number[]) => quantile(xs, 0.5);
const sid = (i: number) => {
  let x = i + 1;
  return uuidOf(() => ((x = (x * 48271) % 2147483647) / 2147483647) % 1);
};

/** `proofloop <args>` as a whole process, in PROOFLOOP_HOME=`home`. */
function cli(args: string[], home: string, tag: string, ok = [0]) {
  return runMeasured(process.execPath, cliArgs(args, tag), {
    cwd: cliRoot(),
    env: { ...process.env, PROOFLOOP_HOME: home },
    ok,
    // `runs --json` of 10,000 sessions is several MB.
    keepStdout: 256 << 20,
  });
}

/** The runs a foreign folder's ledger holds now, read from its ledger.db in `home`. */
function ledgerRuns(home: string): number {
  const dirs = readdirSync(path.join(home, 'folders'));
  if (dirs.length !== 1) throw new Error(`expected one foreign ledger in ${home}, found ${dirs.length}`);
  const db = new Database(path.join(home, 'folders', dirs[0]!, 'ledger.db'), { readonly: true });
  try {
    return db.prepare('SELECT COUNT(*) FROM runs').pluck().get() as number;
  } finally {
    db.close();
  }
}

async function times(n: number, f: (i: number) => Promise<ChildFigures>) {
  const out: ChildFigures[] = [];
  for (let i = 0; i < n; i++) out.push(await f(i));
  return { wall_ms: out.map((r) => r.wall_ms), peak_rss_mb: out.map((r) => r.peak_rss_mb), runs: out };
}

export async function benchManySessions(root: string, n = Number(process.env.PL_BENCH_SESSIONS ?? 10_000)) {
  const folder = path.join(root, 'many', 'projects');
  const home = path.join(root, 'home-many');
  const projects = 50;
  const t = performance.now();
  let bytes = 0;
  let lines = 0;
  for (let i = 0; i < n; i++) {
    const s = sid(i);
    const w = writeClaudeSession(path.join(folder, `-home-dev-proj-${i % projects}`, `${s}.jsonl`), {
      sessionId: s,
      cwd: `/home/dev/proj-${i % projects}`,
      turns: 2,
      seed: i + 1,
    });
    bytes += w.bytes;
    lines += w.lines;
  }
  const genMs = performance.now() - t;
  const one = sid(Math.floor(n / 2));

  const first = await cli(['--json', 'open', folder], home, 'many-open');
  const imported = (JSON.parse(first.stdout) as { runs: number; imported: { events: number } }).imported;
  const reopen = await times(3, async (i) => {
    const r = await cli(['--json', 'open', folder], home, `many-reopen-${i}`);
    const again = (JSON.parse(r.stdout) as { imported: { events: number } }).imported.events;
    if (again !== 0) throw new Error(`opening again imported ${again} events`);
    return figures(r);
  });
  const base = ['--folder', folder, '--json'];
  const events = await times(3, async (i) => {
    const r = await cli([...base, 'events', one], home, `many-events-${i}`);
    if (r.stdout.split('\n').filter(Boolean).length < 20) throw new Error(`events ${one}: too few lines`);
    return figures(r);
  });
  const state = await times(3, async (i) =>
    figures(await cli([...base, 'state', one, '--at', '10'], home, `many-state-${i}`)),
  );
  const runs = await times(3, async (i) => {
    const r = await cli([...base, 'runs'], home, `many-runs-${i}`);
    const listed = (JSON.parse(r.stdout) as unknown[]).length;
    if (listed !== n) throw new Error(`runs listed ${listed} of ${n}`);
    return figures(r);
  });
  // The fixed cost of any CLI process: node, loading dist/cli.cjs, parsing argv.
  const version = await times(3, async (i) => figures(await cli(['--version'], home, `many-version-${i}`)));

  // Does a command about one run look at the rest of the folder? A new session says.
  const before = ledgerRuns(home);
  const s = sid(n + 1);
  writeClaudeSession(path.join(folder, '-home-dev-proj-0', `${s}.jsonl`), {
    sessionId: s,
    cwd: '/home/dev/proj-0',
    turns: 2,
    seed: 99,
  });
  await cli([...base, 'events', one], home, 'many-check-events');
  await cli([...base, 'state', one, '--at', '10'], home, 'many-check-state');
  const afterOne = ledgerRuns(home);
  await cli([...base, 'runs'], home, 'many-check-runs');
  const afterRuns = ledgerRuns(home);

  return {
    sessions: n,
    lines,
    folder_mb: Math.round(bytes / 104857.6) / 10,
    generate_ms: Math.round(genMs),
    imported_events: imported.events,
    first_open: figures(first),
    reopen_nothing_new: reopen,
    events_one_run: events,
    state_one_run_at_10: state,
    runs_list: runs,
    cli_version_baseline: version,
    rescan_check: {
      runs_before: before,
      after_events_and_state: afterOne,
      after_runs: afterRuns,
      one_run_commands_rescan: afterOne !== before,
      runs_rescans: afterRuns === before + 1,
    },
    load_average: Number(loadavg()[0]!.toFixed(1)),
    goal_ok: { reopen_median_ms: median(reopen.wall_ms) <= GOALS.reopen_ms, no_rescan: afterOne === before },
  };
}

export async function benchBigSession(root: string, mbs = Number(process.env.PL_BENCH_BIG_MB ?? 1024)) {
  const folder = path.join(root, 'big', 'projects');
  const id = sid(123456);
  const file = path.join(folder, '-home-dev-big', `${id}.jsonl`);
  const t = performance.now();
  // A multi-MB line (2–8 MB) about every 60 turns (~600 lines): ~86% of the bytes, in ~1 line of 600.
  const gen = writeClaudeSession(file, {
    sessionId: id,
    cwd: '/home/dev/big',
    bytes: mbs << 20,
    bigEvery: 60,
    seed: 5,
  });
  const genMs = performance.now() - t;
  const fileMb = gen.bytes / 2 ** 20;

  const opens = [];
  for (let i = 0; i < Number(process.env.PL_BENCH_BIG_ROUNDS ?? 1); i++) {
    const home = path.join(root, `home-big-open-${i}`);
    const r = await cli(['--json', 'open', folder], home, `big-open-${i}`);
    const info = JSON.parse(r.stdout) as { imported: { events: number; findings: number } };
    opens.push({
      ...figures(r),
      mb_per_s: Number((fileMb / (r.wall_ms / 1000)).toFixed(1)),
      // `open` prints when the import is done; snapshots are built after, before it exits.
      import_ms: r.first_stdout_ms,
      import_mb_per_s: r.first_stdout_ms ? Number((fileMb / (r.first_stdout_ms / 1000)).toFixed(1)) : null,
      events: info.imported.events,
      findings: info.imported.findings,
    });
    rmSync(home, { recursive: true, force: true });
  }

  // A failure in the browser keeps the import figures above.
  const inspector = await inspectWhileImporting(root, folder, id).catch((e: Error) => ({
    error: e.message,
  }));
  return {
    file_mb: Math.round(fileMb),
    lines: gen.lines,
    generate_ms: Math.round(genMs),
    open: opens,
    inspector,
    load_average: Number(loadavg()[0]!.toFixed(1)),
    goal_ok: {
      // PL_BENCH_BIG_ROUNDS=0 (the inspector part alone) measures no open.
      peak_rss: opens.length ? Math.max(...opens.map((o) => o.peak_rss_mb)) <= GOALS.big_peak_rss_mb : null,
      first_rows:
        'serve_to_first_rows_ms' in inspector
          ? inspector.serve_to_first_rows_ms <= GOALS.first_rows_ms
          : false,
      step_p95: 'step_ms' in inspector ? inspector.step_ms.p95 <= GOALS.step_p95_ms : false,
    },
  };
}

/**
 * `proofloop serve` on a folder it has not imported yet, the browser already up: from starting
 * serve to the session's first timeline rows, as a user who opens the URL as soon as it is printed
 * would see them. Then keyboard steps in the middle of the session.
 */
async function inspectWhileImporting(root: string, folder: string, id: string) {
  if (!existsSync(CHROMIUM_LAUNCH.executablePath))
    return { skipped: `${CHROMIUM_LAUNCH.executablePath} is missing (apt-get install -y chromium)` };
  const browser = await chromium.launch(CHROMIUM_LAUNCH);
  const home = path.join(root, 'home-big-serve');
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const serve = spawnMeasured(process.execPath, cliArgs(['--json', 'serve', folder], 'big-serve'), {
      cwd: cliRoot(),
      env: { ...process.env, PROOFLOOP_HOME: home },
    });
    const t0 = performance.now();
    let result;
    try {
      const printed = await serve.waitForLine((l) => /"url":/.test(l));
      const url = JSON.parse(`{${printed.line.trim().replace(/,$/, '')}}`).url as string;
      // The page itself is served by serve's main thread, which also builds the snapshots.
      await page.goto(url, { timeout: 300_000 });
      const pageLoaded = performance.now() - t0;
      await page.locator(`[data-testid="run-item"][data-run-id="${id}"]`).click({ timeout: 300_000 });
      // A session opens in the conversation view (the README): its first items are its first rows.
      const rows = page.locator('[data-testid="conv-item"], [data-testid="timeline-row"]');
      await rows.first().waitFor({ timeout: 300_000 });
      const firstRows = performance.now() - t0;
      const head = await rows.count();
      // The keyboard steps below are the timeline's.
      await page.getByTestId('tab-timeline').click();
      await page.getByTestId('timeline-row').first().waitFor({ timeout: 300_000 });

      const firstRowsFigures = {
        serve_printed_url_ms: Math.round(printed.ms),
        serve_to_page_loaded_ms: Math.round(pageLoaded),
        serve_to_first_rows_ms: Math.round(firstRows),
        rows_shown: head,
      };
      result = firstRowsFigures;
      // serve imports in the background now: the steps are timed once its opening import is done
      // (folder.current names what it imported then), as before, while the snapshots build.
      // How long a call waits while serve imports: the page's requests share its main thread.
      const waits: number[] = [];
      const events = await untilImported(url, id, t0, waits);
      const importDone = performance.now() - t0;
      // The middle of the session, where the state comes from a snapshot (if built yet) plus folds.
      const seq = Math.floor(events / 2);
      const jumpMs = await jumpTo(page, id, seq);
      await page.getByTestId('timeline').focus();
      await page.evaluate(IN_PAGE_STEP_TIMER);
      // PROOFLOOP_BENCH_PROFILE=<file.cpuprofile> records the page's CPU profile of the steps.
      const profileTo = process.env.PROOFLOOP_BENCH_PROFILE;
      const prof = profileTo ? await page.context().newCDPSession(page) : null;
      if (prof) {
        await prof.send('Profiler.enable');
        await prof.send('Profiler.start');
      }
      // serve's CPU during the steps: its answers, and any background work (snapshots) beside them.
      const cpu0 = serve.cpuMs();
      const steps = await timeSteps(page, 'ArrowRight', 1, 60);
      const cpu1 = serve.cpuMs();
      const jumps = await timeSteps(page, 'PageDown', 25, 30);
      if (prof && profileTo) {
        const { profile } = await prof.send('Profiler.stop');
        writeFileSync(profileTo, JSON.stringify(profile));
      }
      result = {
        ...firstRowsFigures,
        serve_to_import_done_ms: Math.round(importDone),
        call_during_import_ms: {
          n: waits.length,
          p50: quantile(waits, 0.5),
          p95: quantile(waits, 0.95),
          max: quantile(waits, 1),
        },
        events,
        jump_to_middle_ms: Math.round(jumpMs),
        middle_seq: seq,
        step_ms: { p50: quantile(steps, 0.5), p95: quantile(steps, 0.95), max: quantile(steps, 1) },
        serve_cpu_ms_per_step:
          cpu0 !== null && cpu1 !== null ? Number(((cpu1 - cpu0) / steps.length).toFixed(1)) : null,
        page_down_step_ms: { p50: quantile(jumps, 0.5), p95: quantile(jumps, 0.95), max: quantile(jumps, 1) },
      };
    } catch (e) {
      if (!result) throw e;
      result = { ...result, error_after_first_rows: (e as Error).message };
    } finally {
      // Closed first: an open keep-alive connection would hold serve's server.close().
      await page.close();
      const f = await serve.stop();
      result = { ...result, serve_process: figures(f) };
    }
    return result as typeof result & {
      serve_to_first_rows_ms: number;
      step_ms: { p50: number; p95: number; max: number };
    };
  } finally {
    await browser.close();
    rmSync(home, { recursive: true, force: true });
  }
}

export async function benchSessions(only?: 'many' | 'big') {
  const root = mkdtempSync(path.join(tmpdir(), 'pl-bench-sessions-'));
  try {
    const out: Record<string, unknown> = { goals: GOALS };
    if (only !== 'big') out.many = await benchManySessions(root);
    if (only !== 'many') out.big = await benchBigSession(root);
    const prof = profileSummary(only === 'big' ? 'big-' : only === 'many' ? 'many-' : '');
    if (prof) out.cpu_profile = prof;
    return out;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

if (isMain('sessions')) {
  const which = process.argv[2] as 'many' | 'big' | undefined;
  console.log(JSON.stringify(await benchSessions(which), null, 2));
}
