import { isKnownKind, TERMINAL_KINDS, upcast } from '../protocol';
import { interpret, isSessionFormat } from '../formats';
import { countUsage } from './budget';
import { clip, isRecord, note, own, push, type Draft } from './draft';
import { fold } from './fold';
import { invalidField } from './required';
import { STATE_CAPS, type FoldEvent, type RunState } from './types';

/**
 * Stamped on every stored snapshot. Bump it whenever evolve, the state's shape or STATE_CAPS change:
 * snapshots of another version are ignored (and may be deleted), so no stale cache answers.
 */
export const PROJECTION_VERSION = 'state-5';

/** The state before any event of a run. */
export function initialState(runId: string): RunState {
  return {
    projection: PROJECTION_VERSION,
    run_id: runId,
    seq: 0,
    status: 'empty',
    why: null,
    ended: null,
    started_at: null,
    started_ms: null,
    last_at: null,
    task: null,
    agent: null,
    step: 0,
    budget: { limits: {}, used: { steps: 0, tokens: 0, wall_ms: 0 }, over: [], exhausted: null },
    usage_recent: [],
    context: { items: [], total: 0, dropped: 0, tokens: null },
    calls: { items: [], total: 0, dropped: 0, open: 0 },
    files: { items: [], total: 0, dropped: 0, changes: 0 },
    denials: { items: [], total: 0, dropped: 0 },
    errors: { items: [], total: 0, dropped: 0 },
    verdicts: { items: [], total: 0, dropped: 0, passed: 0, failed: 0, last: null },
    annotations: { items: [], total: 0, dropped: 0 },
    resumes: { items: [], total: 0, dropped: 0 },
    counts: {},
    unknown: { items: [], total: 0, dropped: 0, kinds: {}, other: 0 },
    notes: { items: [], total: 0, dropped: 0 },
    caps: STATE_CAPS,
  };
}

/**
 * The run state after one more event. Pure: no I/O, clock or randomness; never mutates `state` or
 * `event`; unchanged parts of the state are shared with the input. Events that contradict the state
 * (a result for a call never proposed, an event after the run ended, an invalid payload) are folded
 * as far as they make sense and noted in `state.notes`; nothing throws.
 */
export function evolve(state: RunState, event: FoldEvent): RunState {
  const s: Draft = {
    ...state,
    seq: event.seq,
    // A record without a time (Claude Code's api-request-blob, say) does not blank the last one.
    last_at: typeof event.at === 'string' && event.at !== '' ? event.at : state.last_at,
  };
  s.counts = bump(state.counts, event.kind, state, isKnownKind(event.kind));

  if (event.run_id !== state.run_id) {
    note(s, event, 'run_id_mismatch', `event of run ${event.run_id} folded into run ${state.run_id}`);
  }
  if (event.seq !== state.seq + 1) {
    note(s, event, 'seq_not_next', `seq ${event.seq} follows seq ${state.seq}`);
  }

  const kind = event.kind;
  if (event.fmt !== undefined) countUsage(s, event);
  if (!isKnownKind(kind)) {
    const u = push(state.unknown, { seq: event.seq, kind }, STATE_CAPS.unknown_recent);
    const named = Object.prototype.hasOwnProperty.call(state.unknown.kinds, kind);
    const canName = named || Object.keys(state.unknown.kinds).length < STATE_CAPS.unknown_kinds;
    s.unknown = canName
      ? { ...u, kinds: { ...state.unknown.kinds, [kind]: own(state.unknown.kinds, kind) + 1 } }
      : { ...u, other: u.other + 1 };
    return s;
  }

  const up = upcast(kind, event.v, isRecord(event.payload) ? event.payload : {});
  // An imported format's payload as v1 reads it (defaults it lacks are inferred here, never stored).
  const view =
    event.fmt === undefined
      ? null
      : interpret(event.fmt, kind, up.payload, {
          seq: event.seq,
          run_id: event.run_id,
          source: event.source,
        });
  const p = view ? view.payload : up.payload;
  const bad = invalidField(kind, p);
  if (bad !== null) note(s, event, 'invalid_payload', clip(`payload of ${kind}: ${bad}`));

  const session = isSessionFormat(event.fmt);
  if (session && s.status === 'empty') {
    // A session begins with its first record (a Codex rollout's is its run_started: folded as one).
    if (kind === 'run_started') return fold(s, event, kind, p);
    s.status = 'running';
    if (s.started_at === null && typeof event.at === 'string') {
      const ms = Date.parse(event.at);
      s.started_at = event.at;
      s.started_ms = Number.isFinite(ms) ? ms : null;
    }
  } else if (session && kind === 'run_started') {
    return s; // a resumed session's header: counted, not a restart
  }
  if (kind !== 'run_started') {
    if (s.status === 'empty') note(s, event, 'before_start', `${kind} before run_started`);
    else if (
      (s.status === 'completed' || s.status === 'failed') &&
      kind !== 'event_annotated' &&
      kind !== 'run_resumed'
    ) {
      note(s, event, 'after_end', `${kind} after the run ended (${s.status} at seq ${s.ended?.seq ?? '?'})`);
    }
  }

  return fold(s, event, kind, p);
}

function bump(
  counts: Record<string, number>,
  kind: string,
  state: RunState,
  known: boolean,
): Record<string, number> {
  if (!known && !Object.prototype.hasOwnProperty.call(counts, kind)) {
    // Unknown kind names are unbounded; only the first STATE_CAPS.unknown_kinds get their own count.
    const named = Object.keys(state.unknown.kinds).length;
    if (named >= STATE_CAPS.unknown_kinds)
      return { ...counts, '(other unknown)': own(counts, '(other unknown)') + 1 };
  }
  return { ...counts, [kind]: own(counts, kind) + 1 };
}

/** Folds events into a state (from the initial state of `runId`, or from `from`). */
export function foldEvents(runId: string, events: Iterable<FoldEvent>, from?: RunState): RunState {
  let s = from ?? initialState(runId);
  for (const e of events) s = evolve(s, e);
  return s;
}

/** Whether a kind ends a run (re-exported for readers of the state). */
export const isTerminal = (kind: string): boolean => TERMINAL_KINDS.has(kind);
