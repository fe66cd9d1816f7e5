import { CURRENT_V } from '../../shared/protocol';
import {
  newTrail,
  prepareSide,
  prepareStored,
  storedSide,
  type KeyTable,
  type KeyedSide,
  type StoredChunks,
} from '../../shared/diff';
import type { FoldEvent } from '../../shared/state';
import type { Db } from '../ledger/open';
import { ID_RANGE, idRange } from '../ledger/event-ids';

function runNumber(db: Db, runId: string): number | undefined {
  return db.prepare('SELECT run_no FROM runs WHERE run_id = ?').pluck().get(runId) as number | undefined;
}

/**
 * What the straightforward diff reads of each event of a run (seqs from..to): seq, kind, v and
 * payload, in chunks, rows as arrays (less to build). Takes a bare database handle so the diff
 * worker can use it too.
 */
export function* diffEvents(
  db: Db,
  runId: string,
  to: number,
  from = 1,
  chunk = 20_000,
): Generator<FoldEvent> {
  const runNo = runNumber(db, runId);
  if (runNo === undefined) return;
  const range = db
    .prepare(`SELECT seq, kind, v, payload FROM events WHERE ${ID_RANGE} ORDER BY id`)
    .raw(true);
  for (let lo = from; lo <= to; lo += chunk) {
    const rows = range.all(...idRange(runNo, lo, Math.min(to, lo + chunk - 1))) as [
      number,
      string,
      number,
      string,
    ][];
    for (const [seq, kind, v, payload] of rows) {
      yield { seq, run_id: runId, kind, v, at: '', payload: JSON.parse(payload) as Record<string, unknown> };
    }
  }
}

/**
 * A run's events (seqs from..to) as the fast diff reads them (shared/diff/stored.ts): per chunk, the
 * records of payload text and kind, never parsed, that SQLite concatenates into one string, and
 * their seqs as one JSON array from the same pass over the rows. Measured ~3× faster than the same
 * columns as row arrays, most of that the cost of building 100,000 small arrays; and a few long
 * strings are cheap to send to a worker thread.
 */
export function readStored(db: Db, runId: string, to: number, from = 1, chunk = 50_000): StoredChunks {
  const runNo = runNumber(db, runId);
  const out: StoredChunks = { run_id: runId, chunks: [] };
  if (runNo === undefined) return out;
  // Both aggregates take the rows in one order; group_concat keeps the subquery's order in
  // practice, and storedSide checks the seqs in case it did not.
  const range = db.prepare(
    `SELECT count(*) AS n, json_group_array(seq) AS seqs,
            group_concat(payload || char(31) || kind || iif(v = ?, '', char(29) || v), char(30)) AS text
     FROM (SELECT seq, kind, v, payload FROM events WHERE ${ID_RANGE} ORDER BY id)`,
  );
  for (let lo = from; lo <= to; lo += chunk) {
    out.chunks.push(
      range.get(CURRENT_V, ...idRange(runNo, lo, Math.min(to, lo + chunk - 1))) as StoredChunks['chunks'][0],
    );
  }
  return out;
}

/** Seqs from..to of one run. */
export interface SeqRange {
  runId: string;
  from: number;
  to: number;
}

/**
 * Stretches of the two runs of a diff prepared over one key table (so that their events with one
 * template are normalised once, and the second follows the first's trail, see prepareStored): the
 * fast way from stored payload text (see shared/diff/stored.ts) when it is given or read here and is
 * what that expects, else the straightforward way.
 */
export function prepareRanges(
  db: Db,
  table: KeyTable,
  ranges: readonly SeqRange[],
  stored?: readonly (StoredChunks | null)[],
): KeyedSide[] {
  const trail = newTrail();
  return ranges.map(({ runId, from, to }, i) => {
    const chunks = stored ? stored[i]! : readStored(db, runId, to, from);
    const side = chunks && storedSide(chunks);
    const fast = side && prepareStored(side, table, i === 0 ? { leave: trail } : { follow: trail });
    return fast ?? prepareSide({ run_id: runId, events: diffEvents(db, runId, to, from) }, table);
  });
}
