import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { Statement } from 'better-sqlite3';
import type { Db } from '../ledger/open';
import { ID_RANGE, idOfSeq, idRange } from '../ledger/event-ids';
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

/**
 * K: a snapshot of the state is stored every K events, so the state at any seq is the nearest
 * snapshot ≤ seq plus at most K−1 folds. Chosen by measurement (`npx tsx bench/state.ts`, 1,000,000
 * realistic events, 2 shared cores). A lookup costs ~0.6 ms (read + inflate + parse the snapshot)
 * plus ~8 µs per event folded (read, parse, evolve); a stored snapshot is ~23 KB (a ~74 KB state,
 * compressed) against ~270 bytes of ledger per event. Measured:
 *   K=1000, plain JSON snapshots: storage 28% of the ledger, p99 24 ms (a loaded machine);
 *   K=500, compressed: storage 18%, p50 2.4 ms, p99 5.2 ms (then ~4.6 ms after trimming evolve);
 *   K=250 would put storage near 37%.
 * K=500 missed p99 on a later run (6.7 ms), so the state's detail windows were halved (50 recent
 * calls, 20 context entries, 30 files and notes: state-2), shrinking a late state to ~45 KB and its
 * snapshot to ~15 KB, which makes room for K=300: storage 21.5%, p50 1.9 ms, p99 3.8 ms.
 */
export const SNAPSHOT_EVERY = 300;

/**
 * A snapshot is stored as base64 of raw deflate (level 1) of the state's JSON: the JSON of a late-run
 * state is ~74 KB and compresses to ~17 KB (~23 KB in base64: the column is TEXT), which is what
 * keeps snapshots every 300 events under the storage goal; inflating costs ~0.2 ms. A snapshot that
 * is plain JSON (it starts with `{`, which base64 never does) is read as such.
 */
export function encodeState(state: RunState): string {
  return deflateRawSync(JSON.stringify(state), { level: 1 }).toString('base64');
}

export function decodeState(text: string): RunState {
  if (text.startsWith('{')) return JSON.parse(text) as RunState;
  return JSON.parse(inflateRawSync(Buffer.from(text, 'base64')).toString('utf8')) as RunState;
}

export interface StateAt {
  seq: number;
  state: RunState;
  /** 'snapshot': started from a stored snapshot; 'fold': folded from seq 1. */
  via: 'snapshot' | 'fold' | 'recent';
  /** Events folded after the starting point. */
  folded: number;
  /** The seq of the snapshot started from (0 when folded from the start). */
  from_seq: number;
}

interface Stmts {
  /** The integer key of a run in the events table. */
  key: (runId: string) => number | undefined;
  /** The adapter that read the run: evolve reads its events through that format's view. */
  format: (runId: string) => string | undefined;
  head: Statement<unknown[]>;
  range: Statement<unknown[]>;
  one: Statement<unknown[]>;
  nearest: Statement<unknown[]>;
  insert: Statement<unknown[]>;
  dropOther: Statement<unknown[]>;
}

const cache = new WeakMap<Db, Stmts>();

function stmts(db: Db): Stmts {
  let s = cache.get(db);
  if (!s) {
    // Read only the columns evolve needs, not the chain columns.
    const runNo = db.prepare('SELECT run_no FROM runs WHERE run_id = ?').pluck();
    const fmt = db.prepare('SELECT format FROM runs WHERE run_id = ?').pluck();
    s = {
      key: (runId) => runNo.get(runId) as number | undefined,
      format: (runId) => fmt.get(runId) as string | undefined,
      head: db.prepare('SELECT head_seq FROM runs WHERE run_id = ?'),
      range: db
        .prepare(`SELECT seq, kind, v, at, payload, source FROM events WHERE ${ID_RANGE} ORDER BY id`)
        .raw(true),
      one: db.prepare('SELECT seq, kind, v, at, payload, source FROM events WHERE id = ?').raw(true),
      nearest: db.prepare(
        `SELECT seq, state FROM snapshots WHERE run_id = ? AND version = ? AND seq <= ?
         ORDER BY seq DESC LIMIT 1`,
      ),
      insert: db.prepare('INSERT OR IGNORE INTO snapshots (run_id, seq, version, state) VALUES (?, ?, ?, ?)'),
      dropOther: db.prepare('DELETE FROM snapshots WHERE run_id = ? AND version <> ?'),
    };
    cache.set(db, s);
  }
  return s;
}

type RawRow = [seq: number, kind: string, v: number, at: string, payload: string, source: string | null];

function rawToFold(r: RawRow, runId: string, fmt: string | undefined): FoldEvent {
  const e: FoldEvent = {
    seq: r[0],
    run_id: runId,
    kind: r[1],
    v: r[2],
    at: r[3],
    payload: JSON.parse(r[4]) as Record<string, unknown>,
  };
  if (fmt !== undefined && fmt !== 'proofloop') {
    e.fmt = fmt;
    if (r[5] !== null) e.source = JSON.parse(r[5]) as FoldEvent['source'];
  }
  return e;
}

/**
 * Folds events from..to into `state`, calling `each` after every event (no generator in the hot
 * path: a lookup folds up to K−1 events and is meant to take a few milliseconds).
 */
function foldRange(
  ledger: Ledger,
  runId: string,
  state: RunState,
  from: number,
  to: number,
  each?: (s: RunState) => void,
  chunk = 10_000,
): RunState {
  const st = stmts(ledger.db);
  const key = st.key(runId);
  if (key === undefined) return state;
  const fmt = st.format(runId);
  for (let lo = from; lo <= to; lo += chunk) {
    const rows = st.range.all(...idRange(key, lo, Math.min(to, lo + chunk - 1))) as RawRow[];
    for (let i = 0; i < rows.length; i++) {
      state = evolve(state, rawToFold(rows[i]!, runId, fmt));
      if (each) each(state);
    }
  }
  return state;
}

export function headSeq(ledger: Ledger, runId: string): number {
  const row = stmts(ledger.db).head.get(runId) as { head_seq: number } | undefined;
  if (!row) throw new ProofloopError('not_found', `no run "${runId}" in ${ledger.folder}`);
  return row.head_seq;
}

/** The newest usable snapshot ≤ seq of the current projection version (a broken one is skipped). */
function nearestSnapshot(
  ledger: Ledger,
  runId: string,
  seq: number,
  version: string,
): { seq: number; state: RunState } | null {
  const st = stmts(ledger.db);
  let at = seq;
  while (at > 0) {
    const row = st.nearest.get(runId, version, at) as { seq: number; state: string } | undefined;
    if (!row) return null;
    try {
      const state = decodeState(row.state);
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

function writeSnapshots(
  ledger: Ledger,
  runId: string,
  items: readonly { seq: number; json: string }[],
  version: string,
): number {
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
  /** Also start from a state computed moments ago, when nearer than the snapshot (the service's stepping). */
  recent?: boolean;
  /** @internal projection version to read and write (tests of invalidation). */
  version?: string;
}

/**
 * The state of a run at `seq`: the nearest snapshot ≤ seq plus the folds after it, or (full) the
 * fold of events 1..seq. Both give the same state. Snapshots it passes that are missing are stored.
 */
export function stateAt(ledger: Ledger, runId: string, seq: number, opts: StateOptions = {}): StateAt {
  const head = headSeq(ledger, runId);
  if (!Number.isInteger(seq) || seq < 0)
    throw new ProofloopError('bad_args', `seq must be a whole number ≥ 0, got ${seq}`);
  if (seq > head)
    throw new ProofloopError('bad_args', `run ${runId} has ${head} events; there is no seq ${seq}`);
  const every = opts.every ?? SNAPSHOT_EVERY;
  const version = opts.version ?? PROJECTION_VERSION;
  const snap = opts.full ? null : nearestSnapshot(ledger, runId, seq, version);
  // A state computed moments ago (stepping through a run asks for seq, then seq−1 and seq+1) may be
  // nearer than the snapshot: states are immutable and events never change, so it stays valid.
  const recent = opts.full || !opts.recent ? null : recentStates(ledger).nearest(runId, version, seq);
  const useRecent = recent !== null && recent.seq >= (snap?.seq ?? 0);
  let state = useRecent ? recent.state : snap ? snap.state : initialState(runId);
  const start = useRecent ? recent.seq : snap ? snap.seq : 0;
  const write = !opts.full && opts.write !== false;
  const pending: { seq: number; json: string }[] = [];
  state = foldRange(
    ledger,
    runId,
    state,
    start + 1,
    seq,
    write
      ? (s) => void (s.seq % every === 0 && pending.push({ seq: s.seq, json: encodeState(s) }))
      : undefined,
  );
  writeSnapshots(ledger, runId, pending, version);
  if (opts.recent && !opts.full) recentStates(ledger).put(runId, version, seq, state);
  const via = useRecent ? 'recent' : snap ? 'snapshot' : 'fold';
  return { seq, state, via, folded: seq - start, from_seq: start };
}

/** The last few states computed per ledger, for stepping: a small LRU keyed by run, version and seq. */
class RecentStates {
  private readonly entries = new Map<
    string,
    { runId: string; version: string; seq: number; state: RunState }
  >();
  constructor(private readonly max = 64) {}

  put(runId: string, version: string, seq: number, state: RunState): void {
    const key = `${version}\u0000${runId}\u0000${seq}`;
    this.entries.delete(key);
    this.entries.set(key, { runId, version, seq, state });
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
  }

  /** The cached state with the largest seq ≤ `seq`, or null. */
  nearest(runId: string, version: string, seq: number): { seq: number; state: RunState } | null {
    let best: { seq: number; state: RunState } | null = null;
    for (const e of this.entries.values()) {
      if (e.runId === runId && e.version === version && e.seq <= seq && (!best || e.seq > best.seq)) best = e;
    }
    return best;
  }
}

const recentByDb = new WeakMap<Db, RecentStates>();
function recentStates(ledger: Ledger): RecentStates {
  let r = recentByDb.get(ledger.db);
  if (!r) recentByDb.set(ledger.db, (r = new RecentStates()));
  return r;
}

/** What changed at `seq`: the difference between the state at seq−1 and at seq. */
export function changesAt(
  ledger: Ledger,
  runId: string,
  seq: number,
  opts: StateOptions = {},
): { seq: number; kind: string; changes: Change[] } {
  if (!Number.isInteger(seq) || seq < 1)
    throw new ProofloopError('bad_args', `seq must be a whole number ≥ 1, got ${seq}`);
  const before = stateAt(ledger, runId, seq - 1, opts).state;
  const st = stmts(ledger.db);
  const key = st.key(runId);
  const id = key === undefined ? null : idOfSeq(key, seq);
  const row = id === null ? undefined : (st.one.get(id) as RawRow | undefined);
  if (!row) throw new ProofloopError('not_found', `run ${runId} has no seq ${seq}`);
  const event = rawToFold(row, runId, st.format(runId));
  return { seq, kind: event.kind, changes: stateChanges(before, evolve(before, event)) };
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
  state = foldRange(ledger, runId, state, (snap?.seq ?? 0) + 1, head, (s) => {
    if (s.seq % every === 0) pending.push({ seq: s.seq, json: encodeState(s) });
    if (pending.length >= 50) {
      written += writeSnapshots(ledger, runId, pending, version);
      pending = [];
    }
  });
  written += writeSnapshots(ledger, runId, pending, version);
  return { written, head, state };
}

/**
 * Keeps snapshots written as runs grow: folds appended events in memory (one state per recently
 * active run) and stores a snapshot at every multiple of K. Any surprise (events not following the
 * cached state, another process appending) falls back to maintainSnapshots from the database.
 * Returns the unsubscribe function.
 */
export function attachSnapshotter(
  ledger: Ledger,
  opts: { every?: number; maxRuns?: number } = {},
): () => void {
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
        // Folded as a read folds them (rawToFold): an imported or received run's events with its
        // format, which says how they read (an OTLP run's calls are known without proposals).
        const fmt = stmts(ledger.db).format(runId);
        const withFmt = fmt !== undefined && fmt !== 'proofloop';
        for (const e of events) {
          state = evolve(state, withFmt ? { ...e, fmt } : e);
          if (e.seq % every === 0) pending.push({ seq: e.seq, json: encodeState(state) });
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
