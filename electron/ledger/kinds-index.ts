import { ID_RANGE, idRange } from './event-ids';

/**
 * The kinds left out of the `events_by_rare_kind` partial index (migration 2): the ones every step
 * of a run writes. A read of other kinds only names that index's WHERE term verbatim (RARE_TERM),
 * which is how SQLite knows the partial index covers the query.
 */
export const BULK_KINDS: readonly string[] = [
  'model_proposed',
  'action_allowed',
  'tool_invoked',
  'tool_returned',
  'model_responded',
  'context_updated',
];

// A chain of <> rather than NOT IN (…): SQLite evaluates it on every insert, and the chain measured
// ~0.7 µs a row cheaper than the list (3.3 against 4.0 µs a row, 2.4 without any kind index).
export const RARE_TERM = BULK_KINDS.map((k) => `kind <> '${k}'`).join(' AND ');

const bulk = new Set(BULK_KINDS);

/**
 * The read of some kinds of one run in seq order, and its parameters. Rare kinds go through the
 * partial index, named (INDEXED BY: without ANALYZE statistics the planner may prefer the rowid,
 * which walks the whole run); bulk kinds are dense enough to be found in id (seq) order.
 */
export function kindsQuery(
  columns: string,
  kinds: readonly string[],
): { sql: string; params: (runNo: number, from: number, to: number, limit: number) => unknown[] } {
  const marks = kinds.map(() => '?').join(', ');
  if (kinds.every((k) => !bulk.has(k))) {
    return {
      sql: `SELECT ${columns} FROM events INDEXED BY events_by_rare_kind
        WHERE run_no = ? AND kind IN (${marks}) AND ${RARE_TERM} AND seq >= ? AND seq <= ?
        ORDER BY seq LIMIT ?`,
      params: (runNo, from, to, limit) => [runNo, ...kinds, from, to, limit],
    };
  }
  return {
    sql: `SELECT ${columns} FROM events WHERE ${ID_RANGE} AND kind IN (${marks}) ORDER BY id LIMIT ?`,
    params: (runNo, from, to, limit) => [...idRange(runNo, from, to), ...kinds, limit],
  };
}
