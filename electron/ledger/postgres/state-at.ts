import { ProofloopError } from '../../../shared/result';
import {
  PROJECTION_VERSION,
  evolve,
  initialState,
  type FoldEvent,
  type RunState,
} from '../../../shared/state';
import { SNAPSHOT_EVERY, decodeState, encodeState } from '../../state/snapshots';
import type { PostgresEngine } from './engine';

/**
 * The nearest stored snapshot ≤ seq, then the events after it folded; snapshots met on the way
 * at multiples of SNAPSHOT_EVERY are stored (a cache: a reader role, which may not, goes without).
 * One round trip when a snapshot is near (STATE_SQL: the run, its snapshot and the events after
 * it); a longer fold reads on in pages.
 */
export async function stateAtPg(
  db: PostgresEngine,
  runId: string,
  seq: number,
): Promise<{ seq: number; state: RunState; via: string }> {
  const first = await db.prepared<StateRow>('proofloop_state_at', STATE_SQL, [
    runId,
    PROJECTION_VERSION,
    Math.max(0, seq),
    FOLD_PAGE,
  ]);
  const header = first.rows[0];
  if (!header || header.seq !== -1)
    throw new ProofloopError('not_found', `no run ${runId} in ${db.location}`);
  const headSeq = Number(header.source);
  const fmt = header.kind;
  const target = Math.max(0, Math.min(seq, headSeq));
  let state: RunState = initialState(runId);
  let done = 0;
  let via = 'fold';
  if (header.v !== null && header.payload !== null) {
    state = decodeState(header.payload);
    done = header.v;
    via = 'snapshot';
  }
  const toStore: { seq: number; state: string }[] = [];
  const fold = (rows: readonly StateRow[]) => {
    for (const r of rows) {
      const e: FoldEvent = {
        seq: r.seq,
        run_id: runId,
        kind: r.kind,
        v: r.v!,
        at: r.at!,
        payload: JSON.parse(r.payload!) as Record<string, unknown>,
      };
      if (fmt !== 'proofloop') {
        e.fmt = fmt;
        if (r.source !== null) e.source = JSON.parse(r.source) as FoldEvent['source'];
      }
      state = evolve(state, e);
      done = r.seq;
      if (r.seq % SNAPSHOT_EVERY === 0) toStore.push({ seq: r.seq, state: encodeState(state) });
    }
  };
  fold(first.rows.slice(1));
  while (done < target) {
    const no = await db.runNo(runId);
    const rows = await db.q<StateRow>(
      `SELECT seq, kind, v, at, convert_from(payload, 'UTF8') AS payload, source FROM events
        WHERE run_no = $1 AND seq BETWEEN $2 AND $3 ORDER BY seq`,
      [no, done + 1, Math.min(target, done + FOLD_PAGE)],
    );
    if (rows.rows.length === 0) break;
    fold(rows.rows);
  }
  if (toStore.length > 0) {
    const no = await db.runNo(runId);
    await db
      .q(
        `INSERT INTO snapshots (run_no, seq, version, state)
       SELECT $1, s, $2, t FROM unnest($3::bigint[], $4::text[]) AS u(s, t) ON CONFLICT DO NOTHING`,
        [no, PROJECTION_VERSION, toStore.map((s) => s.seq), toStore.map((s) => s.state)],
      )
      .catch(() => undefined);
  }
  return { seq: target, state, via };
}

/** Events folded a round trip by stateAt. */
const FOLD_PAGE = 5000;

/** A row of STATE_SQL: the header (seq -1), then events. */
interface StateRow {
  seq: number;
  kind: string;
  v: number | null;
  at: string | null;
  /** An event's payload as text; the header's: the snapshot's state. */
  payload: string | null;
  source: string | null;
}

/**
 * The state at $3 of run $1 in one round trip: first a header row (seq -1: kind the run's format,
 * v and payload the nearest snapshot's seq and state of projection $2, NULL without one, source the
 * run's head seq), then up to $4 events after that snapshot, to $3 or the head. No run: no rows.
 * Payloads come as text (convert_from): bytea would travel as hex, twice the bytes, and be decoded here.
 */
const STATE_SQL = `WITH r AS (SELECT run_no, head_seq, format FROM runs WHERE run_id = $1),
  s AS (SELECT sn.seq, sn.state FROM r, LATERAL (SELECT seq, state FROM snapshots
          WHERE run_no = r.run_no AND version = $2 AND seq <= LEAST($3, r.head_seq) ORDER BY seq DESC LIMIT 1) sn)
SELECT -1::bigint AS seq, r.format AS kind, s.seq::int AS v, NULL::text AS at,
       s.state AS payload, r.head_seq::text AS source
  FROM r LEFT JOIN s ON true
UNION ALL
SELECT e.seq, e.kind, e.v, e.at, convert_from(e.payload, 'UTF8'), e.source
  FROM r, events e
 WHERE e.run_no = r.run_no
   AND e.seq > COALESCE((SELECT seq FROM s), 0)
   AND e.seq <= LEAST($3, r.head_seq, COALESCE((SELECT seq FROM s), 0) + $4)
ORDER BY seq`;
