import { isKnownKind, TERMINAL_KINDS, upcast, type KnownKind } from '../protocol';
import { interpret, isSessionFormat } from '../formats';
import { countUsage, overBudgets, withUse } from './budget';
import {
  STATE_CAPS,
  type CallRecord,
  type Capped,
  type ContextEntry,
  type FoldEvent,
  type Note,
  type NoteCode,
  type RunState,
} from './types';

/**
 * Stamped on every stored snapshot. Bump it whenever evolve, the state's shape or STATE_CAPS change:
 * snapshots of another version are ignored (and may be deleted), so no stale cache answers.
 */
export const PROJECTION_VERSION = 'state-4';

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

// ---- small pure helpers (defensive: imported events may be invalid, the fold never throws) ----

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
/** An own property only: a kind named `constructor` must not find Object.prototype.constructor. */
const own = (o: Record<string, number>, k: string): number =>
  Object.prototype.hasOwnProperty.call(o, k) ? (o[k] ?? 0) : 0;

function clip(s: string, max: number = STATE_CAPS.text): string {
  return s.length > max ? s.slice(0, max) + '…' : s;
}

function clipOrNull(v: unknown): string | null {
  const s = str(v);
  return s === null ? null : clip(s);
}

/** Args as proposed when small, else a bounded excerpt of their JSON. */
function boundedArgs(args: unknown, json: string): unknown {
  if (args === undefined || json === '') return null;
  return json.length <= STATE_CAPS.text ? args : { excerpt: clip(json), chars: json.length };
}

/** A copy of a capped list with `item` appended, dropping the oldest beyond `cap`. */
function push<T, L extends Capped<T>>(list: L, item: T, cap: number): L {
  const items = list.items.length >= cap ? list.items.slice(list.items.length - cap + 1) : list.items.slice();
  items.push(item);
  const total = list.total + 1;
  return { ...list, items, total, dropped: total - items.length };
}

/*
 * Important: the helpers below take `s`, the fresh top-level copy that evolve made for this event,
 * and assign its fields. They never write into an object reachable from the input state: every
 * nested object they change is replaced by a new one (so unchanged parts stay shared).
 */
type Draft = RunState;

function note(s: Draft, e: FoldEvent, code: NoteCode, message: string): void {
  const n: Note = { seq: e.seq, kind: e.kind, code, message };
  s.notes = push(s.notes, n, STATE_CAPS.notes);
}

/** Index of the call in the kept window, newest first (the calls an event names are usually recent). */
function findCall(s: RunState, callId: string): number {
  const items = s.calls.items;
  for (let i = items.length - 1; i >= 0; i--) if (items[i]!.call_id === callId) return i;
  return -1;
}

function isOpen(c: CallRecord): boolean {
  return c.status !== 'denied' && c.status !== 'returned' && c.status !== 'timed_out';
}

function replaceCall(s: Draft, i: number, next: CallRecord): void {
  const prev = s.calls.items[i]!;
  const items = s.calls.items.slice();
  items[i] = next;
  const open = s.calls.open + (isOpen(next) ? 1 : 0) - (isOpen(prev) ? 1 : 0);
  s.calls = { ...s.calls, items, open };
}

function addContext(s: Draft, entry: ContextEntry): void {
  s.context = push(s.context, entry, STATE_CAPS.context);
}

function addError(s: Draft, e: FoldEvent, callId: string | null, message: string): void {
  s.errors = push(
    s.errors,
    { seq: e.seq, kind: e.kind, call_id: callId, message: clip(message) },
    STATE_CAPS.errors,
  );
}

/**
 * Looks up the call an event names; when it is not in the window, notes it and returns -1.
 * With calls dropped from the window, "never proposed" cannot be told from "proposed long ago".
 */
function callFor(s: Draft, e: FoldEvent, callId: string): number {
  const i = findCall(s, callId);
  if (i >= 0) return i;
  const msg =
    s.calls.dropped > 0
      ? `call ${callId} is not among the ${s.calls.items.length} most recent calls: never proposed, or proposed before them`
      : `call ${callId} was never proposed`;
  note(s, e, 'unknown_call', msg);
  return -1;
}

// ---- the fold ----

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
    last_at: typeof event.at === 'string' ? event.at : state.last_at,
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
    // A session begins with its first record.
    s.status = 'running';
    if (s.started_at === null && typeof event.at === 'string') {
      const ms = Date.parse(event.at);
      s.started_at = event.at;
      s.started_ms = Number.isFinite(ms) ? ms : null;
    }
    if (kind === 'run_started') return fold(s, event, kind, p);
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

type FieldType = 'string' | 'call' | 'number' | 'int' | 'boolean' | 'object';

/**
 * The required fields of each v1 payload (shared/protocol/kinds.ts), checked by hand: the zod
 * schemas say the same, but parsing one per fold costs more than the rest of evolve. Used only to
 * note an invalid event; the fold reads every field defensively either way.
 */
const REQUIRED: { readonly [K in KnownKind]: readonly (readonly [string, FieldType])[] } = {
  run_started: [
    ['task_id', 'string'],
    ['goal', 'string'],
    ['agent', 'object'],
  ],
  model_proposed: [
    ['call_id', 'call'],
    ['tool', 'string'],
  ],
  action_allowed: [
    ['call_id', 'call'],
    ['rule', 'string'],
  ],
  action_denied: [
    ['call_id', 'call'],
    ['rule', 'string'],
    ['reason', 'string'],
  ],
  tool_invoked: [
    ['call_id', 'call'],
    ['tool', 'string'],
  ],
  tool_returned: [
    ['call_id', 'call'],
    ['status', 'string'],
    ['duration_ms', 'number'],
  ],
  tool_timed_out: [
    ['call_id', 'call'],
    ['timeout_ms', 'number'],
  ],
  model_responded: [['content', 'string']],
  context_updated: [['op', 'string']],
  file_changed: [['path', 'string']],
  budget_exhausted: [
    ['budget', 'string'],
    ['limit', 'number'],
    ['used', 'number'],
  ],
  judge_verdict: [['passed', 'boolean']],
  run_completed: [['outcome', 'string']],
  run_failed: [['reason', 'string']],
  run_resumed: [['from_seq', 'int']],
  event_annotated: [
    ['target_seq', 'int'],
    ['note', 'string'],
  ],
};

function invalidField(kind: KnownKind, p: Record<string, unknown>): string | null {
  for (const [name, type] of REQUIRED[kind]) {
    const v = p[name];
    let ok: boolean;
    switch (type) {
      case 'string':
        ok = typeof v === 'string';
        break;
      case 'call':
        ok = typeof v === 'string' && v.length > 0;
        break;
      case 'number':
        ok = typeof v === 'number' && Number.isFinite(v);
        break;
      case 'int':
        ok = typeof v === 'number' && Number.isInteger(v) && v >= 0;
        break;
      case 'boolean':
        ok = typeof v === 'boolean';
        break;
      case 'object':
        ok = isRecord(v);
        break;
    }
    if (!ok)
      return `${name}: ${v === undefined ? 'missing' : `not a valid ${type === 'call' ? 'call id' : type}`}`;
  }
  if (kind === 'run_started' && typeof (p.agent as Record<string, unknown>).name !== 'string')
    return 'agent.name: missing';
  return null;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
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

function fold(s: Draft, e: FoldEvent, kind: KnownKind, p: Record<string, unknown>): RunState {
  switch (kind) {
    case 'run_started': {
      if (s.status !== 'empty') note(s, e, 'started_twice', `run_started again (run was ${s.status})`);
      const agent = isRecord(p.agent) ? p.agent : {};
      const limits: Record<string, number> = {};
      if (isRecord(p.budget))
        for (const [k, v] of Object.entries(p.budget)) if (num(v) !== null) limits[k] = v as number;
      s.status = 'running';
      s.why = null;
      s.ended = null;
      if (s.started_at === null) {
        const ms = Date.parse(e.at);
        s.started_at = e.at;
        s.started_ms = Number.isFinite(ms) ? ms : null;
      }
      s.task = {
        task_id: str(p.task_id) ?? '',
        goal: clip(str(p.goal) ?? ''),
        policy_digest: str(p.policy_digest),
        mode: str(p.mode),
        of: str(p.of),
      };
      s.agent = { name: str(agent.name) ?? '', variant: str(agent.variant), seed: num(agent.seed) };
      s.budget = { ...s.budget, limits, over: overBudgets(limits, s.budget.used) };
      withUse(s, e.at, 0, 0);
      return s;
    }
    case 'model_proposed': {
      const callId = str(p.call_id) ?? `(seq ${e.seq})`;
      const tokens = num(p.tokens);
      const argsJson = safeJson(p.args);
      if (findCall(s, callId) >= 0) note(s, e, 'duplicate_call', `call ${callId} proposed again`);
      const call: CallRecord = {
        call_id: callId,
        n: s.calls.total + 1,
        tool: str(p.tool) ?? '',
        args: boundedArgs(p.args, argsJson),
        status: 'proposed',
        proposed_seq: e.seq,
        tokens,
        decision: null,
        invoked_seq: null,
        result: null,
        timed_out: null,
        duration_ms: null,
      };
      // The window keeps the most recent calls; an evicted open call stops counting as open.
      const evicted = s.calls.items.length >= STATE_CAPS.calls ? s.calls.items[0]! : null;
      const calls = push(s.calls, call, STATE_CAPS.calls);
      calls.open = s.calls.open + 1 - (evicted && isOpen(evicted) ? 1 : 0);
      s.calls = calls;
      addContext(s, {
        seq: e.seq,
        kind,
        role: 'model',
        text: clip(`${call.tool} ${argsJson}`),
        tokens,
      });
      withUse(s, e.at, tokens ?? 0, 1);
      return s;
    }
    case 'action_allowed':
    case 'action_denied': {
      const allowed = kind === 'action_allowed';
      const callId = str(p.call_id) ?? '';
      const rule = str(p.rule) ?? '';
      const reason = clipOrNull(p.reason);
      const i = callFor(s, e, callId);
      let tool: string | null = null;
      if (i >= 0) {
        const c = s.calls.items[i]!;
        tool = c.tool;
        if (c.decision) {
          note(
            s,
            e,
            'decided_twice',
            `call ${callId} was already ${c.decision.allowed ? 'allowed' : 'denied'} at seq ${c.decision.seq}`,
          );
        }
        const status = allowed ? (c.status === 'proposed' ? 'allowed' : c.status) : 'denied';
        replaceCall(s, i, { ...c, status, decision: { allowed, rule, reason, seq: e.seq } });
      }
      if (!allowed) {
        s.denials = push(
          s.denials,
          { seq: e.seq, call_id: callId, tool, rule, reason: reason ?? '' },
          STATE_CAPS.denials,
        );
      }
      withUse(s, e.at, 0, 0);
      return s;
    }
    case 'tool_invoked': {
      const callId = str(p.call_id) ?? '';
      const i = callFor(s, e, callId);
      if (i >= 0) {
        const c = s.calls.items[i]!;
        if (!c.decision || !c.decision.allowed) {
          note(
            s,
            e,
            'invoked_without_allow',
            `call ${callId} invoked but ${c.decision ? 'denied' : 'never allowed'}`,
          );
        }
        replaceCall(s, i, { ...c, status: 'running', invoked_seq: e.seq });
      }
      withUse(s, e.at, 0, 0);
      return s;
    }
    case 'tool_returned':
    case 'tool_timed_out': {
      const returned = kind === 'tool_returned';
      const callId = str(p.call_id) ?? '';
      const status = returned ? (str(p.status) ?? '') : 'timed_out';
      const excerpt = returned ? clipOrNull(p.excerpt) : null;
      const timeoutMs = returned ? 0 : (num(p.timeout_ms) ?? 0);
      const i = callFor(s, e, callId);
      if (i >= 0) {
        const c = s.calls.items[i]!;
        if (c.result || c.timed_out) {
          note(
            s,
            e,
            'result_twice',
            `call ${callId} already ended at seq ${c.result?.seq ?? c.timed_out?.seq}`,
          );
        } else if (c.invoked_seq === null && !isSessionFormat(e.fmt)) {
          // A session transcript records the call and its result, not the host's invocation.
          note(s, e, 'result_without_invoke', `call ${callId} ended without being invoked`);
        }
        replaceCall(
          s,
          i,
          returned
            ? {
                ...c,
                status: 'returned',
                result: { status, excerpt, bytes: num(p.bytes), seq: e.seq },
                duration_ms: num(p.duration_ms),
              }
            : {
                ...c,
                status: 'timed_out',
                timed_out: { timeout_ms: timeoutMs, seq: e.seq },
                duration_ms: timeoutMs,
              },
        );
      }
      if (returned) {
        addContext(s, {
          seq: e.seq,
          kind,
          role: 'tool',
          text: clip(`${status}${excerpt ? ': ' + excerpt : ''}`),
          tokens: null,
        });
        if (status !== 'ok' && status !== 'success')
          addError(s, e, callId, `call ${callId} returned ${status}${excerpt ? ': ' + excerpt : ''}`);
      } else {
        addError(s, e, callId, `call ${callId} timed out after ${timeoutMs} ms`);
      }
      withUse(s, e.at, 0, 0);
      return s;
    }
    case 'model_responded': {
      const tokens = num(p.tokens);
      addContext(s, { seq: e.seq, kind, role: 'model', text: clip(str(p.content) ?? ''), tokens });
      withUse(s, e.at, tokens ?? 0, 0);
      return s;
    }
    case 'context_updated': {
      const before = num(p.tokens_before);
      const after = num(p.tokens_after);
      const op = str(p.op) ?? '';
      const text = before !== null || after !== null ? `${op} ${before ?? '?'} → ${after ?? '?'} tokens` : op;
      addContext(s, { seq: e.seq, kind, role: 'context', text: clip(text), tokens: after });
      if (after !== null) s.context = { ...s.context, tokens: after };
      withUse(s, e.at, 0, 0);
      return s;
    }
    case 'file_changed': {
      const path = str(p.path) ?? '';
      const after = str(p.after);
      const patch = clipOrNull(p.patch);
      const items = s.files.items;
      let i = -1;
      for (let j = items.length - 1; j >= 0; j--) {
        if (items[j]!.path === path) {
          i = j;
          break;
        }
      }
      if (i >= 0) {
        const f = items[i]!;
        // The most recently changed file moves to the end, so the window keeps recent activity.
        const next = items.slice(0, i).concat(items.slice(i + 1));
        next.push({ ...f, changes: f.changes + 1, last_seq: e.seq, after, patch });
        s.files = { ...s.files, items: next, changes: s.files.changes + 1 };
      } else {
        const rec = {
          path,
          changes: 1,
          first_seq: e.seq,
          last_seq: e.seq,
          before: str(p.before),
          after,
          patch,
        };
        s.files = { ...push(s.files, rec, STATE_CAPS.files), changes: s.files.changes + 1 };
      }
      withUse(s, e.at, 0, 0);
      return s;
    }
    case 'budget_exhausted': {
      const budget = str(p.budget) ?? '';
      const limit = num(p.limit) ?? 0;
      const used = num(p.used) ?? 0;
      withUse(s, e.at, 0, 0);
      s.budget = { ...s.budget, exhausted: { budget, limit, used, seq: e.seq } };
      if (s.status === 'running') s.why = `budget ${budget} exhausted: used ${used} of ${limit}`;
      addError(s, e, null, `budget ${budget} exhausted: used ${used} of ${limit}`);
      return s;
    }
    case 'judge_verdict': {
      const passed = p.passed === true;
      const v = {
        seq: e.seq,
        passed,
        tests_passed: num(p.tests_passed),
        tests_failed: num(p.tests_failed),
        command: clipOrNull(p.command),
      };
      const list = push(s.verdicts, v, STATE_CAPS.verdicts);
      s.verdicts = {
        ...list,
        passed: list.passed + (passed ? 1 : 0),
        failed: list.failed + (passed ? 0 : 1),
        last: v,
      };
      withUse(s, e.at, 0, 0);
      return s;
    }
    case 'run_completed':
    case 'run_failed': {
      const completed = kind === 'run_completed';
      const outcome = clipOrNull(p.outcome);
      const reason = clipOrNull(p.reason);
      const errorType = str(p.error_type);
      withUse(s, e.at, 0, 0);
      s.status = completed ? 'completed' : 'failed';
      s.ended = { seq: e.seq, kind, outcome, reason, error_type: errorType };
      s.why = completed
        ? `completed: ${outcome ?? '(no outcome)'}`
        : `failed: ${reason ?? '(no reason)'}${errorType ? ` (${errorType})` : ''}`;
      if (!completed)
        addError(s, e, null, `run failed: ${reason ?? ''}${errorType ? ` (${errorType})` : ''}`);
      return s;
    }
    case 'run_resumed': {
      const fromSeq = num(p.from_seq) ?? 0;
      s.resumes = push(s.resumes, { seq: e.seq, from_seq: fromSeq }, STATE_CAPS.resumes);
      if (s.status === 'completed' || s.status === 'failed') {
        note(s, e, 'after_end', `run resumed after it ${s.status} at seq ${s.ended?.seq ?? '?'}`);
      }
      if (s.status !== 'empty') {
        s.status = 'running';
        s.why = null;
        s.ended = null;
      }
      withUse(s, e.at, 0, 0);
      return s;
    }
    case 'event_annotated': {
      const target = num(p.target_seq) ?? 0;
      if (target > e.seq) note(s, e, 'annotates_future', `annotation of seq ${target}, which comes later`);
      s.annotations = push(
        s.annotations,
        { seq: e.seq, target_seq: target, note: clip(str(p.note) ?? '') },
        STATE_CAPS.annotations,
      );
      return s;
    }
    default: {
      const unreachable: never = kind;
      return unreachable;
    }
  }
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? '';
  } catch {
    return '';
  }
}

/** Folds events into a state (from the initial state of `runId`, or from `from`). */
export function foldEvents(runId: string, events: Iterable<FoldEvent>, from?: RunState): RunState {
  let s = from ?? initialState(runId);
  for (const e of events) s = evolve(s, e);
  return s;
}

/** Whether a kind ends a run (re-exported for readers of the state). */
export const isTerminal = (kind: string): boolean => TERMINAL_KINDS.has(kind);
