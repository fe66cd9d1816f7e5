import type { Statement } from 'better-sqlite3';
import type { Db } from '../ledger/open';
import type { Ledger } from '../ledger';
import { ProofloopError } from '../../shared/result';
import {
  PROJECTION_VERSION,
  changes as stateChanges,
  evolve,
  initialState,
  type Change,
  type FoldEvent,
  type RunState,
} from '../../shared/state';
import { diffRunEvents, type DiffOptions, type RunDiff } from '../../shared/diff';

/**
 * K: a snapshot of the state is stored every K events, so the state at any seq is the nearest
 * snapshot ≤ seq plus at most K−1 folds. Chosen by measurement (`npx tsx bench/state.ts`, 1,000,000
 * realistic events, 2 cores): see the K sweep in the bench output and the comment in bench/state.ts.
 * Smaller K costs storage (a late-run snapshot is ~70–90 KB of JSON, bounded by STATE_CAPS), larger K
 * costs folds per lookup (~1.5 µs to read and fold one event).
 */
export const SNAPSHOT_EVERY = 1000;

export interface StateAt {
  seq: number;
  state: RunState;
  /** 'snapshot': started from a stored snapshot; 'fold': folded from seq 1. */
  via: 'snapshot' | 'fold';
  /** Events folded after the starting point. */
  folded: number;
  /** The seq of the snapshot started from (0 when folded from the start). */
  from_seq: number;
}

interface Stmts {
  head: Statement<unknown[]>;
  range: Statement<unknown[]>;
  one: Statement<unknown[]>;
  nearest: Statement<unknown[]>;
  latest: Statement<unknown[]>;
  insert: Statement<unknown[]>;
  dropOther: Statement<unknown[]>;
}

const cache = new WeakMap<Db, Stmts>();

function stmts(db: Db): Stmts {
  let s = cache.get(db);
  if (!s) {
    s = {
      head: db.prepare('SELECT head_seq FROM runs WHERE run_id = ?'),
      // Only what evolve reads: the chain columns are not needed to fold.
      range: db.prepare(
        'SELECT seq, run_id, kind, v, at, payload FROM events WHERE run_id = ? AND seq >= ? AND seq <= ? ORDER BY seq',
      ),
      one: db.prepare('SELECT seq, run_id, kind, v, at, payload FROM events WHERE run_id = ? AND seq = ?'),
      nearest: db.prepare(
        `SELECT seq, state FROM snapshots WHERE run_id = ? AND version = ? AND seq <= ?
         ORDER BY seq DESC LIMIT 1`,
      ),
      latest: db.prepare('SELECT MAX(seq) AS seq FROM snapshots WHERE run_id = ? AND version = ?'),
      insert: db.prepare('INSERT OR IGNORE INTO snapshots (run_id, seq, version, state) VALUES (?, ?, ?, ?)'),
      dropOther: db.prepare('DELETE FROM snapshots WHERE run_id = ? AND version <> ?'),
    };
    cache.set(db, s);
  }
  return s;
}

interface EventRow {
  seq: number;
  run_id: string;
  kind: string;
  v: number;
  at: string;
  payload: string;
}

function toFold(r: EventRow): FoldEvent {
  return { seq: r.seq, run_id: r.run_id, kind: r.kind, v: r.v, at: r.at, payload: JSON.parse(r.payload) as Record<string, unknown> };
}

/** Events from..to of a run, read in chunks so a long fold holds no statement open while writing. */
export function* foldEventsOf(ledger: Ledger, runId: string, from: number, to: number, chunk = 10_000): Generator<FoldEvent> {
  const st = stmts(ledger.db);
  for (let lo = from; lo <= to; lo += chunk) {
    const rows = st.range.all(runId, lo, Math.min(to, lo + chunk - 1)) as EventRow[];
    for (const r of rows) yield toFold(r);
  }
}

export function headSeq(ledger: Ledger, runId: string): number {
  const row = stmts(ledger.db).head.get(runId) as { head_seq: number } | undefined;
  if (!row) throw new ProofloopError('not_found', `no run "${runId}" in ${ledger.folder}`);
  return row.head_seq;
}

/** The newest usable snapshot ≤ seq of the current projection version (a broken one is skipped). */
function nearestSnapshot(ledger: Ledger, runId: string, seq: number, version: string): { seq: number; state: RunState } | null {
  const st = stmts(ledger.db);
  let at = seq;
  while (at > 0) {
    const row = st.nearest.get(runId, version, at) as { seq: number; state: string } | undefined;
    if (!row) return null;
    try {
      const state = JSON.parse(row.state) as RunState;
      if (state && state.projection === version && state.seq === row.seq && state.run_id === runId) {
        return { seq: row.seq, state };
      }
    } catch {
      // A cache entry that does not parse is no answer: fall back to an older one.
    }
    at = row.seq - 1;
  }
  return null;
}

function writeSnapshots(ledger: Ledger, runId: string, items: readonly { seq: number; json: string }[], version: string): number {
  if (items.length === 0) return 0;
  const st = stmts(ledger.db);
  let n = 0;
  try {
    ledger.db.transaction(() => {
      for (const it of items) n += st.insert.run(runId, it.seq, version, it.json).changes;
    })();
  } catch {
    // Snapshots are a cache: a busy or read-only database costs speed, never an answer.
    return 0;
  }
  return n;
}

export interface StateOptions {
  /** Fold from seq 1, ignoring snapshots. */
  full?: boolean;
  /** Snapshot interval (tests use small ones). */
  every?: number;
  /** Store missing snapshots met on the way (default true, never with `full`). */
  write?: boolean;
  /** @internal projection version to read and write (tests of invalidation). */
  version?: string;
}

/**
 * The state of a run at `seq`: the nearest snapshot ≤ seq plus the folds after it, or (full) the
 * fold of events 1..seq. Both give the same state. Snapshots it passes that are missing are stored.
 */
export function stateAt(ledger: Ledger, runId: string, seq: number, opts: StateOptions = {}): StateAt {
  const head = headSeq(ledger, runId);
  if (!Number.isInteger(seq) || seq < 0) throw new ProofloopError('bad_args', `seq must be a whole number ≥ 0, got ${seq}`);
  if (seq > head) throw new ProofloopError('bad_args', `run ${runId} has ${head} events; there is no seq ${seq}`);
  const every = opts.every ?? SNAPSHOT_EVERY;
  const version = opts.version ?? PROJECTION_VERSION;
  const snap = opts.full ? null : nearestSnapshot(ledger, runId, seq, version);
  let state = snap ? snap.state : initialState(runId);
  const start = snap ? snap.seq : 0;
  const write = !opts.full && opts.write !== false;
  const pending: { seq: number; json: string }[] = [];
  for (const e of foldEventsOf(ledger, runId, start + 1, seq)) {
    state = evolve(state, e);
    if (write && e.seq % every === 0) pending.push({ seq: e.seq, json: JSON.stringify(state) });
  }
  writeSnapshots(ledger, runId, pending, version);
  return { seq, state, via: snap ? 'snapshot' : 'fold', folded: seq - start, from_seq: start };
}

/** What changed at `seq`: the difference between the state at seq−1 and at seq. */
export function changesAt(
  ledger: Ledger,
  runId: string,
  seq: number,
  opts: StateOptions = {},
): { seq: number; kind: string; changes: Change[] } {
  if (!Number.isInteger(seq) || seq < 1) throw new ProofloopError('bad_args', `seq must be a whole number ≥ 1, got ${seq}`);
  const before = stateAt(ledger, runId, seq - 1, opts).state;
  const row = stmts(ledger.db).one.get(runId, seq) as EventRow | undefined;
  if (!row) throw new ProofloopError('not_found', `run ${runId} has no seq ${seq}`);
  const after = evolve(before, toFold(row));
  return { seq, kind: row.kind, changes: stateChanges(before, after) };
}

/**
 * Brings a run's snapshots up to its head: folds from the newest snapshot and stores one every K
 * events. Snapshots of other projection versions are deleted (they would be ignored anyway).
 * Returns the state at the head, so a caller can keep folding in memory.
 */
export function maintainSnapshots(
  ledger: Ledger,
  runId: string,
  opts: { every?: number; version?: string } = {},
): { written: number; head: number; state: RunState } {
  const every = opts.every ?? SNAPSHOT_EVERY;
  const version = opts.version ?? PROJECTION_VERSION;
  const st = stmts(ledger.db);
  try {
    st.dropOther.run(runId, version);
  } catch {
    // Busy: stale versions stay until next time; they are never read.
  }
  const head = headSeq(ledger, runId);
  const snap = nearestSnapshot(ledger, runId, head, version);
  let state = snap ? snap.state : initialState(runId);
  let written = 0;
  let pending: { seq: number; json: string }[] = [];
  for (const e of foldEventsOf(ledger, runId, (snap?.seq ?? 0) + 1, head)) {
    state = evolve(state, e);
    if (e.seq % every === 0) pending.push({ seq: e.seq, json: JSON.stringify(state) });
    if (pending.length >= 50) {
      written += writeSnapshots(ledger, runId, pending, version);
      pending = [];
    }
  }
  written += writeSnapshots(ledger, runId, pending, version);
  return { written, head, state };
}

/**
 * Keeps snapshots written as runs grow: folds appended events in memory (one state per recently
 * active run) and stores a snapshot at every multiple of K. Any surprise (events not following the
 * cached state, another process appending) falls back to maintainSnapshots from the database.
 * Returns the unsubscribe function.
 */
export function attachSnapshotter(ledger: Ledger, opts: { every?: number; maxRuns?: number } = {}): () => void {
  const every = opts.every ?? SNAPSHOT_EVERY;
  const maxRuns = opts.maxRuns ?? 32;
  const live = new Map<string, RunState>();
  return ledger.onAppend((runId, events) => {
    try {
      if (events.length === 0) return;
      let state = live.get(runId);
      live.delete(runId);
      if (!state || state.seq + 1 !== events[0]!.seq) {
        state = maintainSnapshots(ledger, runId, { every }).state;
      } else {
        const pending: { seq: number; json: string }[] = [];
        for (const e of events) {
          state = evolve(state, e);
          if (e.seq % every === 0) pending.push({ seq: e.seq, json: JSON.stringify(state) });
        }
        writeSnapshots(ledger, runId, pending, PROJECTION_VERSION);
      }
      live.set(runId, state);
      if (live.size > maxRuns) live.delete(live.keys().next().value as string);
    } catch {
      // Never fail an append for a cache: the next stateAt folds what is missing.
      live.delete(runId);
    }
  });
}

/** Diffs two runs of the ledger (see shared/diff): events aligned, first divergence, final states. */
export function diffRuns(ledger: Ledger, left: string, right: string, opts: DiffOptions = {}): RunDiff {
  const headL = headSeq(ledger, left);
  const headR = headSeq(ledger, right);
  return diffRunEvents(
    { run_id: left, events: foldEventsOf(ledger, left, 1, headL), final_state: stateAt(ledger, left, headL).state },
    { run_id: right, events: foldEventsOf(ledger, right, 1, headR), final_state: stateAt(ledger, right, headR).state },
    opts,
  );
}
