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
  opts: { slice?: number; onProgress?: (p: BackgroundProgress) => void } = {},
): { cancel: () => void; done: Promise<number> } {
  // ~2,000 folds take ~15 ms: calls wait no longer than that for the next slice.
  const slice = opts.slice ?? 2_000;
  let cancelled = false;
  const latest = ledger.db.prepare('SELECT MAX(seq) FROM snapshots WHERE run_id = ? AND version = ?').pluck();
  const tick = () => new Promise<void>((r) => setImmediate(r));
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
