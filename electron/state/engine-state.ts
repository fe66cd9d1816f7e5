import { ProofloopError } from '../../shared/result';
import { diffRunEvents, type DiffOptions, type RunDiff } from '../../shared/diff';
import {
  changes as stateChanges,
  evolve,
  initialState,
  type Change,
  type FoldEvent,
  type RunState,
} from '../../shared/state';
import type { LedgerEngine } from '../ledger/engine';
import type { RunRow, StoredEvent } from '../ledger/types';
import { SNAPSHOT_EVERY } from './snapshots';

/**
 * State, changes and diff through the engine interface: what the service answers on a team ledger
 * (PostgreSQL). A runs folder keeps its faster embedded paths (snapshots.ts with its recent states,
 * diff-runs.ts with its worker thread), which read SQLite directly.
 */

const PAGE = 5000;

async function requireRun(engine: LedgerEngine, runId: string): Promise<RunRow> {
  const run = await engine.run(runId);
  if (!run) throw new ProofloopError('not_found', `no run "${runId}" in ${engine.location}`);
  return run;
}

function checkSeq(run: RunRow, seq: number, min: number): void {
  if (!Number.isInteger(seq) || seq < min)
    throw new ProofloopError('bad_args', `seq must be a whole number ≥ ${min}, got ${seq}`);
  if (seq > run.head_seq)
    throw new ProofloopError(
      'bad_args',
      `run ${run.run_id} has ${run.head_seq} events; there is no seq ${seq}`,
    );
}

/** A stored event as the projection folds it: an imported run's events read through its format's view. */
export function foldEventOf(e: StoredEvent, format: string): FoldEvent {
  const f: FoldEvent = { seq: e.seq, run_id: e.run_id, kind: e.kind, v: e.v, at: e.at, payload: e.payload };
  if (format !== 'proofloop') {
    f.fmt = format;
    if (e.source) f.source = e.source;
  }
  return f;
}

/** The run's events from..to, a page at a time (a run of a million events is never one reply). */
async function* pages(engine: LedgerEngine, runId: string, from: number, to: number) {
  for (let lo = from; lo <= to; lo += PAGE) {
    const events = await engine.read(runId, { from: lo, to: Math.min(to, lo + PAGE - 1) });
    yield events;
    if (events.length === 0) return;
  }
}

export interface EngineStateAt {
  seq: number;
  state: RunState;
  via: 'snapshot' | 'fold';
  folded: number;
}

/** state.at on an engine: its nearest snapshot plus folds; `full`: folded from seq 1 here. */
export async function engineStateAt(
  engine: LedgerEngine,
  runId: string,
  seq: number,
  opts: { full?: boolean } = {},
): Promise<EngineStateAt> {
  const run = await requireRun(engine, runId);
  checkSeq(run, seq, 0);
  if (!opts.full) {
    const r = await engine.stateAt(runId, seq);
    const via = r.via === 'snapshot' ? 'snapshot' : 'fold';
    // The engine folds from the snapshot at or below seq; snapshots lie at multiples of SNAPSHOT_EVERY.
    return { seq: r.seq, state: r.state, via, folded: via === 'snapshot' ? r.seq % SNAPSHOT_EVERY : r.seq };
  }
  let state = initialState(runId);
  for await (const events of pages(engine, runId, 1, seq)) {
    for (const e of events) state = evolve(state, foldEventOf(e, run.format));
  }
  return { seq, state, via: 'fold', folded: seq };
}

/** state.changes on an engine: the state before seq, and what the event at seq changes in it. */
export async function engineChangesAt(
  engine: LedgerEngine,
  runId: string,
  seq: number,
): Promise<{ seq: number; kind: string; changes: Change[] }> {
  const run = await requireRun(engine, runId);
  checkSeq(run, seq, 1);
  const [before, event] = await Promise.all([engine.stateAt(runId, seq - 1), engine.event(runId, seq)]);
  if (!event) throw new ProofloopError('not_found', `run ${runId} has no seq ${seq}`);
  const e = foldEventOf(event, run.format);
  return { seq, kind: e.kind, changes: stateChanges(before.state, evolve(before.state, e)) };
}

/**
 * runs.diff on an engine: both runs read a page at a time, then the one diff (shared/diff) that a
 * runs folder's diff uses too, with each run's final state from the engine.
 */
export async function engineDiff(
  engine: LedgerEngine,
  left: string,
  right: string,
  opts: DiffOptions = {},
): Promise<RunDiff> {
  const side = async (runId: string) => {
    const run = await requireRun(engine, runId);
    const events: FoldEvent[] = [];
    // As the embedded diff reads them (diff-read.ts): seq, kind, v and payload; times set aside.
    for await (const page of pages(engine, runId, 1, run.head_seq)) {
      for (const e of page)
        events.push({ seq: e.seq, run_id: runId, kind: e.kind, v: e.v, at: '', payload: e.payload });
    }
    const final = await engine.stateAt(runId, run.head_seq);
    return { run_id: runId, events, final_state: final.state };
  };
  const [l, r] = await Promise.all([side(left), side(right)]);
  return diffRunEvents(l, r, opts);
}
