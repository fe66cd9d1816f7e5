import type { Ledger } from '../ledger';
import { PROJECTION_VERSION } from '../../shared/state';
import { SNAPSHOT_EVERY, stateAt } from './snapshots';

export interface BackgroundProgress {
  run_id: string;
  done: number;
  total: number;
}

/**
 * Writes the snapshots that runs lack (imported runs, runs written by older versions, a new
 * projection version) a slice at a time, yielding to the event loop between slices, so the first
 * look at a late seq of a long run never waits for a fold of the whole run.
 */
export function buildSnapshotsInBackground(
  ledger: Ledger,
  opts: {
    slice?: number;
    onProgress?: (p: BackgroundProgress) => void;
    /** True while the page is being used (activity.ts): the next slice waits until it is not. */
    busy?: () => boolean;
  } = {},
): { cancel: () => void; done: Promise<number> } {
  // One snapshot's worth of folds a slice: ~2 ms for the runner's events, tens of ms for the large
  // records of a big session. A call, or a keyboard step, waits no longer than that for it.
  const slice = opts.slice ?? SNAPSHOT_EVERY;
  let cancelled = false;
  const latest = ledger.db.prepare('SELECT MAX(seq) FROM snapshots WHERE run_id = ? AND version = ?').pluck();
  const tick = async () => {
    await new Promise<void>((r) => setImmediate(r));
    while (!cancelled && opts.busy?.()) await new Promise<void>((r) => setTimeout(r, 50));
  };
  const done = (async () => {
    let written = 0;
    await tick();
    for (const run of cancelled ? [] : ledger.runs()) {
      if (run.head_seq < SNAPSHOT_EVERY * 2) continue;
      let at = (latest.get(run.run_id, PROJECTION_VERSION) as number | null) ?? 0;
      if (run.head_seq - at < SNAPSHOT_EVERY) continue;
      while (!cancelled && at < run.head_seq) {
        at = Math.min(run.head_seq, at + slice);
        // stateAt stores every snapshot it folds past.
        stateAt(ledger, run.run_id, at);
        written += 1;
        opts.onProgress?.({ run_id: run.run_id, done: at, total: run.head_seq });
        await tick();
      }
    }
    return written;
  })().catch(() => 0); // A closed or busy ledger ends the job: snapshots are a cache.
  return { cancel: () => void (cancelled = true), done };
}
