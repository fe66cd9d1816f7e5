import type { FoldEvent } from '../../shared/state';
import type { Db } from '../ledger/open';

/**
 * What the diff reads of each event of a run: seq, kind, v and payload, in chunks, rows as arrays
 * (less to build). Takes a bare database handle so the diff worker can use it too.
 */
export function* diffEvents(db: Db, runId: string, to: number, chunk = 20_000): Generator<FoldEvent> {
  const runNo = db.prepare('SELECT run_no FROM runs WHERE run_id = ?').pluck().get(runId) as
    number | undefined;
  if (runNo === undefined) return;
  const range = db
    .prepare(
      'SELECT seq, kind, v, payload FROM events WHERE run_no = ? AND seq >= ? AND seq <= ? ORDER BY seq',
    )
    .raw(true);
  for (let lo = 1; lo <= to; lo += chunk) {
    const rows = range.all(runNo, lo, Math.min(to, lo + chunk - 1)) as [number, string, number, string][];
    for (const [seq, kind, v, payload] of rows) {
      yield { seq, run_id: runId, kind, v, at: '', payload: JSON.parse(payload) as Record<string, unknown> };
    }
  }
}
