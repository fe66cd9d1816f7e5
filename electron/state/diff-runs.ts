import os from 'node:os';
import type { Worker } from 'node:worker_threads';
import type { Ledger } from '../ledger';
import {
  diffRunEvents,
  joinSides,
  KeyTable,
  keyMap,
  type DiffOptions,
  type KeyedSide,
  type RunDiff,
} from '../../shared/diff';
import { startWorker } from '../workers';
import { diffEvents, prepareRanges, readStored, type SeqRange } from './diff-read';
import type { DiffWorkerResult } from './diff-worker';
import { headSeq, stateAt } from './snapshots';

/** Diffs two runs of the ledger (see shared/diff): events aligned, first divergence, final states. */
export function diffRuns(ledger: Ledger, left: string, right: string, opts: DiffOptions = {}): RunDiff {
  const headL = headSeq(ledger, left);
  const headR = headSeq(ledger, right);
  // One table for both runs: events of the two with one template are normalised once.
  const table = new KeyTable([left, right]);
  const [l, r] = prepareRanges(ledger.db, table, [
    { runId: left, from: 1, to: headL },
    { runId: right, from: 1, to: headR },
  ]);
  l!.final_state = stateAt(ledger, left, headL).state;
  r!.final_state = stateAt(ledger, right, headR).state;
  return diffRunEvents(l!, r!, opts);
}

/**
 * The same diff the straightforward way: every event read as an event, its payload parsed and
 * normalised. The reference the fast way is tested against.
 */
export function diffRunsReference(
  ledger: Ledger,
  left: string,
  right: string,
  opts: DiffOptions = {},
): RunDiff {
  const headL = headSeq(ledger, left);
  const headR = headSeq(ledger, right);
  return diffRunEvents(
    {
      run_id: left,
      events: diffEvents(ledger.db, left, headL),
      final_state: stateAt(ledger, left, headL).state,
    },
    {
      run_id: right,
      events: diffEvents(ledger.db, right, headR),
      final_state: stateAt(ledger, right, headR).state,
    },
    opts,
  );
}

export interface ParallelOptions {
  /** Below this many events in the two runs together the diff runs in this thread (a worker takes
   * tens of ms to start). */
  minEvents?: number;
  /** The share of each run's events the worker prepares (this thread also reads them, and joins). */
  workerShare?: number;
  /** Use a worker even when the machine has no core to spare (see diffRunsParallel). */
  evenWhenBusy?: boolean;
}

/**
 * Whether a core looks free: the 1-minute load average below the core count less one (no load
 * average, as on Windows, counts as free).
 */
function spareCore(): boolean {
  return os.loadavg()[0]! < os.availableParallelism() - 1;
}

/**
 * The same diff with the work split between this thread and a worker thread, when a core is free. This thread reads the
 * later part of both runs (reading is the cheaper part) and sends it to the worker, which templates
 * and normalises it while this thread does the same with the first part. Split by seqs rather than
 * by run so that each thread has the same stretch of both runs and normalises a template once for
 * both. The worker sends typed arrays (transferred, not copied) and its distinct keys. Without a
 * worker to run, it is the one-thread diff.
 */
export async function diffRunsParallel(
  ledger: Ledger,
  left: string,
  right: string,
  opts: DiffOptions = {},
  parallel: ParallelOptions = {},
): Promise<RunDiff> {
  const headL = headSeq(ledger, left);
  const headR = headSeq(ledger, right);
  // A worker pays only with a core to spare: its fixed costs (starting, a fresh isolate's JIT
  // warm-up, copying its part's text there and its keys back) came to ~200 ms of CPU for two
  // 100,000-event runs, so on this project's 2-core machine shared with other jobs (load 5) the
  // worker diff took 0.9–1.6 s where one thread took 0.65–0.78 s.
  if (headL + headR < (parallel.minEvents ?? 20_000) || !(parallel.evenWhenBusy || spareCore()))
    return diffRuns(ledger, left, right, opts);
  const share = parallel.workerShare ?? 0.5;
  const cutL = Math.round(headL * (1 - share));
  const cutR = Math.round(headR * (1 - share));
  const later: SeqRange[] = [
    { runId: left, from: cutL + 1, to: headL },
    { runId: right, from: cutR + 1, to: headR },
  ];
  let worker: Worker | null = null;
  try {
    worker = startWorker(import.meta.url, './diff-worker.ts', './diff-worker.js', {
      workerData: { parts: later.map((p) => readStored(ledger.db, p.runId, p.to, p.from)) },
    });
  } catch {
    worker = null;
  }
  if (!worker) return diffRuns(ledger, left, right, opts);
  const w = worker;
  const rest = new Promise<DiffWorkerResult>((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
    w.once('exit', (code) => reject(new Error(`diff worker exited (${code}) without a result`)));
  });
  try {
    const table = new KeyTable([left, right]);
    const first = prepareRanges(ledger.db, table, [
      { runId: left, from: 1, to: cutL },
      { runId: right, from: 1, to: cutR },
    ]);
    // The final states while the worker finishes its part.
    const finalL = stateAt(ledger, left, headL).state;
    const finalR = stateAt(ledger, right, headR).state;
    const done = await rest;
    const map = keyMap(table, done);
    const [L, R] = first.map((f, i): KeyedSide => {
      const part = done.sides[i];
      // A part the worker left to the straightforward way is prepared here, over this table.
      if (!part) return joinSides(table, f, prepareRanges(ledger.db, table, [later[i]!], [null])[0]!, null);
      return joinSides(table, f, { ...part, keys: done.keys }, map);
    });
    L!.final_state = finalL;
    R!.final_state = finalR;
    return diffRunEvents(L!, R!, opts);
  } catch {
    return diffRuns(ledger, left, right, opts);
  } finally {
    void w.terminate();
  }
}
