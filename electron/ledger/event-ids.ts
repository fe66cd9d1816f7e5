import { MAX_SEQ } from '../../shared/protocol';

/**
 * The events table's key since migration 3: one rowid per event, the run's number in the high bits
 * and its seq in the low 32 (SQLite derives `run_no` and `seq` from it as virtual columns). A run's
 * seqs from..to are the ids eventId(run, from)..eventId(run, to), so reads by seq name `id` and
 * order by it: a condition on the virtual `seq` column would scan.
 */
const SPAN = 2 ** 32;
/** Below this run number, run_no * 2^32 + seq is an exact double; above it the id is a BigInt. */
const EXACT_RUNS = 2 ** 21;

export function eventId(runNo: number, seq: number): number | bigint {
  return runNo < EXACT_RUNS ? runNo * SPAN + seq : (BigInt(runNo) << 32n) + BigInt(seq);
}

const clamp = (seq: number) => Math.min(Math.max(seq, 0), MAX_SEQ);

/** The first and last id of seqs from..to (clamped to the seqs a run can have) of one run. */
export function idRange(runNo: number, from: number, to: number): [number | bigint, number | bigint] {
  return [eventId(runNo, clamp(from)), eventId(runNo, clamp(to))];
}

/** The WHERE term that idRange's two values bind. */
export const ID_RANGE = 'id BETWEEN ? AND ?';

/** The ids of a run's seqs before `seq`. */
export const idsBefore = (runNo: number, seq: number) => idRange(runNo, 1, seq - 1);

/** The hash of the last event of an ID_RANGE: the `prev` of the seq after it. */
export const LAST_HASH_SQL = `SELECT hash FROM events WHERE ${ID_RANGE} ORDER BY id DESC LIMIT 1`;

/** The id of one seq of a run; null for a number that is no seq (it could be another run's id). */
export function idOfSeq(runNo: number, seq: number): number | bigint | null {
  return Number.isInteger(seq) && seq >= 1 && seq <= MAX_SEQ ? eventId(runNo, seq) : null;
}
