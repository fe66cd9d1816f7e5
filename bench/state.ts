// Bench of issue 4: state at seq via snapshots vs the full fold on a 1,000,000-event run, snapshot
// storage overhead, and the diff of two 100,000-event runs that differ in 1% of events.
// Run alone: `npx tsx bench/state.ts` (PL_BENCH_EVENTS=200000 for a quicker look).
import { mkdtempSync, rmSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NewEvent } from '../shared/protocol';
import { Ledger } from '../electron/ledger';
import { mulberry32 as rng } from '../shared/prng';
import {
  attachSnapshotter,
  diffRuns,
  diffRunsParallel,
  diffRunsReference,
  maintainSnapshots,
  SNAPSHOT_EVERY,
  stateAt,
} from '../electron/state';
import { isMain } from './is-main';

const WORDS =
  'the fix parse value test file line error return index token budget call model patch judge'.split(' ');

/**
 * A realistic long agent run: tool-call cycles (proposed, allowed or denied, invoked, returned),
 * model responses, context updates, file changes and judge verdicts. `at` advances by a few ms.
 */
export function* syntheticRun(n: number, seed = 1, callPrefix = 'c'): Generator<NewEvent> {
  const r = rng(seed);
  const hex = () => {
    let s = '';
    for (let i = 0; i < 8; i++) s += ((r() * 0x100000000) >>> 0).toString(16).padStart(8, '0');
    return s;
  };
  const words = (k: number) =>
    Array.from({ length: k }, () => WORDS[Math.floor(r() * WORDS.length)]).join(' ');
  let t = Date.parse('2026-11-29T08:00:00.000Z');
  const at = () => new Date((t += 1 + Math.floor(r() * 40))).toISOString();
  let i = 0;
  let call = 0;
  const emit = (kind: string, payload: Record<string, unknown>): NewEvent => {
    i++;
    return { kind, payload, at: at() };
  };
  yield emit('run_started', {
    task_id: 'bench-task',
    goal: 'make the failing tests pass',
    agent: { name: 'sim', variant: 'careful', seed },
    budget: { steps: 1_000_000, tokens: 100_000_000 },
    mode: 'live',
  });
  while (i < n - 1) {
    const id = `${callPrefix}${++call}`;
    const tool = ['read_file', 'write_file', 'run_tests', 'list_dir'][Math.floor(r() * 4)]!;
    const path = `src/mod${Math.floor(r() * 40)}.ts`;
    yield emit('model_proposed', {
      call_id: id,
      tool,
      args: { path, reason: words(6) },
      tokens: 50 + Math.floor(r() * 200),
    });
    if (i >= n - 1) break;
    if (r() < 0.03) {
      yield emit('action_denied', {
        call_id: id,
        rule: 'deny-outside-workspace',
        reason: 'path leaves the workspace',
      });
      continue;
    }
    yield emit('action_allowed', { call_id: id, rule: `allow-${tool}` });
    if (i >= n - 1) break;
    yield emit('tool_invoked', { call_id: id, tool, args: { path } });
    if (i >= n - 1) break;
    yield emit('tool_returned', {
      call_id: id,
      status: r() < 0.05 ? 'error' : 'ok',
      duration_ms: Math.floor(r() * 900),
      excerpt: words(12 + Math.floor(r() * 12)),
      digest: hex(),
      bytes: Math.floor(r() * 20_000),
    });
    if (i >= n - 1) break;
    const x = r();
    if (x < 0.15) yield emit('model_responded', { content: words(25), tokens: 100 + Math.floor(r() * 300) });
    else if (x < 0.2)
      yield emit('context_updated', { op: 'append', tokens_before: 1000, tokens_after: 1200, digest: hex() });
    else if (x < 0.25 && tool === 'write_file')
      yield emit('file_changed', {
        path,
        before: hex(),
        after: hex(),
        patch: `@@ -1,3 +1,3 @@\n-${words(5)}\n+${words(5)}`,
      });
    else if (x < 0.27)
      yield emit('judge_verdict', {
        passed: r() < 0.3,
        tests_passed: 10,
        tests_failed: 2,
        command: 'npm test',
      });
  }
  if (i < n) yield emit('run_completed', { outcome: 'passed' });
}

export function writeRun(ledger: Ledger, runId: string, items: Iterable<NewEvent>): number {
  const w = ledger.writer(runId, { create: { source: 'executed' } });
  let batch: NewEvent[] = [];
  let n = 0;
  try {
    for (const it of items) {
      batch.push(it);
      if (batch.length === 10_000) {
        n += w.appendBatch(batch).length;
        batch = [];
      }
    }
    if (batch.length) n += w.appendBatch(batch).length;
  } finally {
    w.close();
  }
  return n;
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

const ms = (x: number) => Math.round(x * 1000) / 1000;
const mb = (x: number) => Math.round((x / 1024 / 1024) * 10) / 10;

function sizes(ledger: Ledger): { snapshots: number; events: number; total: number } {
  const rows = ledger.db.prepare('SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name').all() as {
    name: string;
    bytes: number;
  }[];
  let snapshots = 0;
  let events = 0;
  let total = 0;
  for (const r of rows) {
    total += r.bytes;
    if (r.name.startsWith('snapshots') || r.name.startsWith('sqlite_autoindex_snapshots'))
      snapshots += r.bytes;
    if (
      r.name === 'events' ||
      r.name.startsWith('events_by_kind') ||
      r.name.startsWith('sqlite_autoindex_events')
    )
      events += r.bytes;
  }
  return { snapshots, events, total };
}

/** Runs 1..n of `items` with ~1% of events changed, a few inserted and a few deleted. */
function* perturbed(items: Iterable<NewEvent>, seed: number): Generator<NewEvent> {
  const r = rng(seed);
  for (const it of items) {
    const x = r();
    if (x < 0.0005) continue; // deleted
    if (x < 0.009 && it.kind !== 'run_started') {
      yield { ...it, payload: { ...it.payload, perturbed: Math.floor(r() * 1000) } };
    } else yield it;
    if (x > 0.9995)
      yield { kind: 'model_responded', payload: { content: 'an extra thought', tokens: 7 }, at: it.at };
  }
}

/** CPU time of the process in ms (this machine is shared: wall time includes waiting for a core). */
const cpuMs = (since?: NodeJS.CpuUsage) => {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1000;
};

export async function timedAsync<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number; cpu: number }> {
  const c = process.cpuUsage();
  const t = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - t, cpu: cpuMs(c) };
}

function timed<T>(fn: () => T): { value: T; ms: number; cpu: number } {
  const c = process.cpuUsage();
  const t = performance.now();
  const value = fn();
  return { value, ms: performance.now() - t, cpu: cpuMs(c) };
}

/** The state-at-seq part: a big run, its snapshots, lookups via snapshots and by full fold. */
function benchStateAt(ledger: Ledger, N: number, samples: number) {
  // 1. The big run, written by the batched writer (redacts, validates, hashes each event).
  const w = timed(() => writeRun(ledger, 'big', syntheticRun(N, 7)));
  const written = w.value;
  ledger.db.pragma('wal_checkpoint(TRUNCATE)');
  const before = sizes(ledger);

  // 2. Snapshots every K, as maintainSnapshots (and the snapshotter, as a run grows) writes them.
  const m = timed(() => maintainSnapshots(ledger, 'big'));
  ledger.db.pragma('wal_checkpoint(TRUNCATE)');
  const after = sizes(ledger);
  const snap = ledger.db
    .prepare('SELECT COUNT(*) AS n, AVG(LENGTH(state)) AS avg, MAX(LENGTH(state)) AS max FROM snapshots')
    .get() as { n: number; avg: number; max: number };

  // 3. State at random seqs via snapshots.
  const r = rng(42);
  const seqs = Array.from({ length: samples }, () => 1 + Math.floor(r() * written));
  for (const s of seqs.slice(0, 20)) stateAt(ledger, 'big', s, { write: false }); // warm-up
  const wall: number[] = [];
  const cpu: number[] = [];
  const folds: number[] = [];
  for (const s of seqs) {
    const t = timed(() => stateAt(ledger, 'big', s, { write: false }));
    wall.push(t.ms);
    cpu.push(t.cpu);
    folds.push(t.value.folded);
  }
  const endSnap = timed(() => stateAt(ledger, 'big', written, { write: false }));

  // 4. The full fold of a few of the same seqs, and at the run's end.
  const full = seqs.slice(0, 3).map((s) => timed(() => stateAt(ledger, 'big', s, { full: true })).ms);
  const endFull = timed(() => stateAt(ledger, 'big', written, { full: true }));
  const same = JSON.stringify(endFull.value.state) === JSON.stringify(endSnap.value.state);
  return {
    run: { events: written, write_ms: Math.round(w.ms), events_per_s: Math.round(written / (w.ms / 1000)) },
    snapshots: {
      every: SNAPSHOT_EVERY,
      count: snap.n,
      avg_stored_bytes: Math.round(snap.avg ?? 0),
      max_stored_bytes: snap.max ?? 0,
      state_json_bytes_at_end: JSON.stringify(endSnap.value.state).length,
      write_all_ms: Math.round(m.ms),
      written: m.value.written,
    },
    storage: {
      ledger_bytes_without_snapshots: before.total,
      events_bytes: before.events,
      snapshot_bytes: after.snapshots,
      overhead_share: Math.round((after.snapshots / before.total) * 1000) / 1000,
      goal: '≤ 0.25',
    },
    state_at: {
      samples: seqs.length,
      folds_p50: pct(folds, 50),
      via_snapshot_p50_ms: ms(pct(wall, 50)),
      via_snapshot_p99_ms: ms(pct(wall, 99)),
      via_snapshot_max_ms: ms(Math.max(...wall)),
      via_snapshot_cpu_p50_ms: ms(pct(cpu, 50)),
      via_snapshot_cpu_p99_ms: ms(pct(cpu, 99)),
      full_fold_samples_ms: full.map((x) => Math.round(x)),
      at_end: {
        via_snapshot_ms: ms(endSnap.ms),
        full_fold_ms: Math.round(endFull.ms),
        speedup: Math.round(endFull.ms / Math.max(endSnap.ms, 0.001)),
      },
      snapshot_equals_full_fold: same,
      goal: 'p99 ≤ 5 ms and ≥ 100× faster than the full fold at the end',
    },
  };
}

/** The diff part: two D-event runs that differ in ~1% of events, written with the snapshotter on. */
async function benchDiff(ledger: Ledger, D: number) {
  const detach = attachSnapshotter(ledger);
  const base = [...syntheticRun(D, 11, 'a')];
  writeRun(ledger, 'diff-left', base);
  writeRun(ledger, 'diff-right', perturbed(base, 5));
  detach();
  const mem0 = process.memoryUsage();
  const peak0 = process.resourceUsage().maxRSS;
  // What the app and CLI run: with a core to spare, part of both runs prepared in a worker thread
  // (built bundles here; from sources the worker first compiles its TypeScript through tsx).
  const load = os.loadavg()[0]!;
  const p = await timedAsync(() => diffRunsParallel(ledger, 'diff-left', 'diff-right'));
  // The worker way even on a busy machine, and the one-thread way.
  const wk = await timedAsync(() =>
    diffRunsParallel(ledger, 'diff-left', 'diff-right', {}, { evenWhenBusy: true }),
  );
  const d = timed(() => diffRuns(ledger, 'diff-left', 'diff-right'));
  const mem1 = process.memoryUsage();
  const peak1 = process.resourceUsage().maxRSS;
  // Twice more each: this machine is shared, so one figure alone says little. [wall ms, CPU ms].
  const runs = {
    app: [[Math.round(p.ms), Math.round(p.cpu)]],
    worker: [[Math.round(wk.ms), Math.round(wk.cpu)]],
    one_thread: [[Math.round(d.ms), Math.round(d.cpu)]],
  };
  for (let i = 0; i < 2; i++) {
    const a = await timedAsync(() => diffRunsParallel(ledger, 'diff-left', 'diff-right'));
    const b = await timedAsync(() =>
      diffRunsParallel(ledger, 'diff-left', 'diff-right', {}, { evenWhenBusy: true }),
    );
    const c = timed(() => diffRuns(ledger, 'diff-left', 'diff-right'));
    runs.app.push([Math.round(a.ms), Math.round(a.cpu)]);
    runs.worker.push([Math.round(b.ms), Math.round(b.cpu)]);
    runs.one_thread.push([Math.round(c.ms), Math.round(c.cpu)]);
  }
  // The straightforward way (every payload parsed and normalised): the reference for the result.
  const ref = timed(() => diffRunsReference(ledger, 'diff-left', 'diff-right'));
  const diff = d.value;
  const same = JSON.stringify(ref.value);
  return {
    events: [diff.left.events, diff.right.events],
    counts: diff.counts,
    first_divergence: diff.first_divergence,
    alignment: diff.alignment,
    truncated: diff.truncated,
    // The first diff as the app runs it (the worker only with a core to spare: load_1m < cores − 1).
    parallel_ms: Math.round(p.ms),
    parallel_cpu_ms: Math.round(p.cpu),
    load_1m: Math.round(load * 100) / 100,
    worker_ms: Math.round(wk.ms),
    ms: Math.round(d.ms),
    cpu_ms: Math.round(d.cpu),
    runs_ms_cpu: runs,
    straightforward_ms: Math.round(ref.ms),
    straightforward_cpu_ms: Math.round(ref.cpu),
    same_result_as_straightforward:
      JSON.stringify(p.value) === same && JSON.stringify(wk.value) === same && JSON.stringify(diff) === same,
    // Memory: the process's resident size before, and its peak during the diffs (maxRSS, KB); this
    // part runs first so that the peak is the diff's own.
    rss_before_mb: mb(mem0.rss),
    rss_peak_during_mb: mb(Math.max(peak0, peak1) * 1024),
    rss_peak_growth_mb: mb((peak1 - Math.min(peak0, mem0.rss / 1024)) * 1024),
    heap_after_mb: mb(mem1.heapUsed),
    goal: '≤ 1000 ms',
  };
}

export async function benchState(
  opts: { events?: number; diffEvents?: number; samples?: number; parts?: string[] } = {},
) {
  const N = opts.events ?? Number(process.env.PL_BENCH_EVENTS ?? 1_000_000);
  const D = opts.diffEvents ?? 100_000;
  const samples = opts.samples ?? 300;
  const parts = opts.parts ?? (process.env.PL_BENCH_PARTS ?? 'state,diff').split(',');
  const folder = mkdtempSync(join(tmpdir(), 'pl-bench-state-'));
  const ledger = Ledger.open(folder);
  try {
    // The diff first: its memory peak is then its own, not the 1M-event run's.
    const diff = parts.includes('diff') ? { diff: await benchDiff(ledger, D) } : {};
    return { ...(parts.includes('state') ? benchStateAt(ledger, N, samples) : {}), ...diff };
  } finally {
    ledger.close();
    rmSync(folder, { recursive: true, force: true });
  }
}

if (isMain('state')) {
  benchState().then(
    (r) => console.log(JSON.stringify(r, null, 2)),
    (e: unknown) => {
      console.error(e);
      process.exitCode = 1;
    },
  );
}
