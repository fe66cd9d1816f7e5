import { diffArrays } from 'diff';
import { changesCapped } from '../state/changes';
import type { Change, FoldEvent, RunState } from '../state/types';
import { callNumber, newContext, normaliseJson, type NormaliseContext } from './normalise';
import { isKnownKind, upcast } from '../protocol';
import { KeyTable, payloadKey, type KeyedSide } from './stored';

export type RowType = 'same' | 'changed' | 'only_left' | 'only_right';

/**
 * One aligned row. Consecutive `same` events are one row with `count` > 1 (a 100,000-event rerun
 * that matches is one row, not 100,000); every other row is one event (or one pair, for `changed`).
 */
export interface DiffRow {
  type: RowType;
  /** Seq on each side; null on the side an only_* row does not have. */
  left_seq: number | null;
  right_seq: number | null;
  count: number;
  left_kind: string | null;
  right_kind: string | null;
  /** The call ids of the pair, numbered per run (`#3`), when the events name a call. */
  left_call?: string;
  right_call?: string;
  /** For `changed` rows: the normalised payload difference (paths with old and new values). */
  changes?: Change[];
}

export interface FirstDivergence {
  type: Exclude<RowType, 'same'>;
  /** Seq of the diverging event on each side; on the side that has none, the seq at which that run
   * continues (null when it has ended). */
  left_seq: number | null;
  right_seq: number | null;
  left_kind: string | null;
  right_kind: string | null;
}

export interface RunDiff {
  left: { run_id: string; events: number };
  right: { run_id: string; events: number };
  identical: boolean;
  counts: { same: number; changed: number; only_left: number; only_right: number };
  /** The first row where the runs behave differently (a differing run_started is not one: see settings). */
  first_divergence: FirstDivergence | null;
  /** How the two run_started payloads differ (agent variant, seed, budget…), or null when alike. */
  settings: Change[] | null;
  rows: DiffRow[];
  /** Rows left off beyond max_rows (their counts are in `counts`). */
  rows_left_off: number;
  /** The difference of the two final states (ids, times, durations and seqs left out). */
  state_changes: Change[];
  state_changes_left_off: number;
  /** How the alignment was computed, and what was cut to keep it bounded (null: nothing). */
  alignment: {
    method: 'myers' | 'positional';
    common_prefix: number;
    common_suffix: number;
    edit_length: number | null;
  };
  truncated: { reason: string } | null;
}

export interface DiffSide {
  run_id: string;
  events: Iterable<FoldEvent>;
  final_state?: RunState | null;
}

export interface DiffOptions {
  /** Largest edit script (inserted + deleted events) Myers may search for in one stretch between
   * anchors; beyond it that stretch is aligned by position. Bounds time by O(N · maxEditLength). */
  maxEditLength?: number;
  /** Rows returned at most (counts stay exact). */
  maxRows?: number;
  /** Payload changes listed per changed row at most. */
  maxChangesPerRow?: number;
  maxStateChanges?: number;
  /** How far ahead a removed event looks for an added event of its kind to pair with, inside a hunk. */
  pairWindow?: number;
}

export const DIFF_DEFAULTS: Required<DiffOptions> = {
  maxEditLength: 2_000,
  maxRows: 5_000,
  maxChangesPerRow: 50,
  maxStateChanges: 200,
  pairWindow: 64,
};

/** Both runs' events over one set of key ids: `ids[i]` equal on both sides ⇔ events compare equal. */
interface Side {
  seqs: Float64Array;
  ids: number[];
  kindOf: Int32Array;
  kinds: string[];
  callOf: Int32Array;
}

/** The payload as compared: a non-object counts as `{}`; old versions of known kinds are upcast. */
function upcastPayload(kind: string, v: number, payload: unknown): Record<string, unknown> {
  const raw = payload && typeof payload === 'object' ? (payload as Record<string, unknown>) : {};
  return isKnownKind(kind) ? upcast(kind, v, raw).payload : raw;
}

/**
 * The comparison key of one event: kind and normalised payload (old payload versions compared as the
 * current version they upcast to), as JSON text.
 */
export function eventKey(kind: string, v: number, payload: unknown, ctx: NormaliseContext): string {
  return payloadKey(kind, upcastPayload(kind, v, payload), ctx);
}

/**
 * Prepares one run for the diff the straightforward way: each event's payload upcast, normalised and
 * written as JSON with its kind (its comparison key), and its call id numbered. The reference for
 * the fast way from stored payload text (prepareStored in ./stored), and the way for events in hand.
 */
export function prepareSide(side: DiffSide, table = new KeyTable([side.run_id])): KeyedSide {
  const ctx = newContext(side.run_id, true);
  const shown = newContext(side.run_id, false);
  const seqs: number[] = [];
  const keyOf: number[] = [];
  const kindOf: number[] = [];
  const callOf: number[] = [];
  const callIds: string[] = [];
  const kinds: string[] = [];
  const kindIds = new Map<string, number>();
  for (const e of side.events) {
    keyOf.push(table.id(eventKey(e.kind, e.v, e.payload, ctx), e.kind));
    seqs.push(e.seq);
    let k = kindIds.get(e.kind);
    if (k === undefined) {
      kindIds.set(e.kind, (k = kinds.length));
      kinds.push(e.kind);
    }
    kindOf.push(k);
    const payload = upcastPayload(e.kind, e.v, e.payload);
    const callId = typeof payload.call_id === 'string' ? payload.call_id : undefined;
    if (callId === undefined) callOf.push(0);
    else {
      const n = shown.calls.size;
      const o = callNumber(callId, shown);
      if (o > n) callIds.push(callId);
      callOf.push(o);
    }
  }
  return {
    run_id: side.run_id,
    seqs: Float64Array.from(seqs),
    kindOf: Int32Array.from(kindOf),
    kinds,
    keyOf: Int32Array.from(keyOf),
    keys: table.keys,
    callOf: Int32Array.from(callOf),
    callIds,
    final_state: side.final_state,
  };
}

/**
 * Puts both runs' events over one set of key ids. Runs prepared with one KeyTable share it already;
 * otherwise (one run prepared in a worker thread) the right run's keys are looked up among the
 * left's, distinct keys only. A Map keyed by the key text: measured faster here than the FNV-style
 * hash in JS this replaced (V8 hashes a flat string natively and caches the hash in it).
 */
function commonIds(left: KeyedSide, right: KeyedSide): { L: Side; R: Side; keys: string[] } {
  const side = (s: KeyedSide, map: ArrayLike<number> | null): Side => {
    const ids = new Array<number>(s.keyOf.length);
    for (let i = 0; i < ids.length; i++) ids[i] = map ? map[s.keyOf[i]!]! : s.keyOf[i]!;
    return { seqs: s.seqs, ids, kindOf: s.kindOf, kinds: s.kinds, callOf: s.callOf };
  };
  if (left.keys === right.keys) return { L: side(left, null), R: side(right, null), keys: left.keys };
  const keys = left.keys.slice();
  const index = new Map<string, number>();
  for (let i = 0; i < keys.length; i++) index.set(keys[i]!, i);
  const map = new Int32Array(right.keys.length);
  for (let i = 0; i < right.keys.length; i++) {
    const k = right.keys[i]!;
    let id = index.get(k);
    if (id === undefined) {
      id = keys.length;
      keys.push(k);
      index.set(k, id);
    }
    map[i] = id;
  }
  return { L: side(left, null), R: side(right, map), keys };
}

function payloadOf(keys: readonly string[], id: number): unknown {
  return (JSON.parse(keys[id]!) as [string, unknown])[1];
}

/** Alignment ops over the two id arrays: runs of equal / removed / added. */
type Op = { op: 'eq' | 'del' | 'ins'; n: number };

/** Pairs (i in a, j in b) of ids that occur exactly once in each run, longest increasing in both. */
function uniqueAnchors(a: readonly number[], b: readonly number[], idCount: number): [number, number][] {
  const countA = new Uint8Array(idCount);
  const countB = new Uint8Array(idCount);
  const posB = new Int32Array(idCount);
  for (const id of a) if (countA[id]! < 2) countA[id]! += 1;
  for (let j = 0; j < b.length; j++) {
    const id = b[j]!;
    if (countB[id]! < 2) countB[id]! += 1;
    posB[id] = j;
  }
  const pairs: [number, number][] = [];
  for (let i = 0; i < a.length; i++) {
    const id = a[i]!;
    if (countA[id] === 1 && countB[id] === 1) pairs.push([i, posB[id]!]);
  }
  // Longest increasing subsequence of the b positions (patience sorting, O(n log n)).
  const tails: number[] = [];
  const prev = new Int32Array(pairs.length).fill(-1);
  for (let k = 0; k < pairs.length; k++) {
    const j = pairs[k]![1];
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (pairs[tails[mid]!]![1] < j) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0) prev[k] = tails[lo - 1]!;
    tails[lo] = k;
  }
  const out: [number, number][] = [];
  for (let k = tails.length ? tails[tails.length - 1]! : -1; k >= 0; k = prev[k]!) out.push(pairs[k]!);
  return out.reverse();
}

interface Alignment {
  ops: Op[];
  method: 'myers' | 'positional';
  prefix: number;
  suffix: number;
  edit: number | null;
  reason: string | null;
}

/**
 * Aligns two id sequences. The library (jsdiff's Myers, O((N+M)·D)) does the alignment; measured on
 * two 100,000-event runs that differ in 1% of events (D ≈ 1,800), one diffArrays call over the whole
 * middle alone cost ~340 ms of CPU, and ten times that at 10%. So the sequences are first cut at
 * anchors, events that occur exactly once in each run and in the same order (patience diff: runs
 * are full of unique events, digests and call results), and Myers runs on the stretches between
 * anchors, each bounded by maxEditLength. A stretch that needs a longer edit script is aligned by
 * position (linear) and reported in `reason`.
 */
function align(
  a: readonly number[],
  b: readonly number[],
  maxEditLength: number,
  idCount: number,
): Alignment {
  // The common prefix and suffix are trimmed first: two runs of one task usually share long stretches.
  let prefix = 0;
  const min = Math.min(a.length, b.length);
  while (prefix < min && a[prefix] === b[prefix]) prefix++;
  let suffix = 0;
  while (suffix < min - prefix && a[a.length - 1 - suffix] === b[b.length - 1 - suffix]) suffix++;
  const midA = a.slice(prefix, a.length - suffix);
  const midB = b.slice(prefix, b.length - suffix);
  const ops: Op[] = [];
  if (prefix) pushOp(ops, 'eq', prefix);
  let edit = 0;
  let cutStretches = 0;
  let cutEvents = 0;
  const stretch = (sa: number[], sb: number[]): void => {
    if (sa.length === 0 || sb.length === 0) {
      if (sa.length) pushOp(ops, 'del', sa.length);
      if (sb.length) pushOp(ops, 'ins', sb.length);
      edit += sa.length + sb.length;
      return;
    }
    // ids are small integers, so jsdiff's default === comparison is the key comparison.
    const result = diffArrays(sa, sb, { maxEditLength });
    if (result) {
      for (const c of result) {
        pushOp(ops, c.added ? 'ins' : c.removed ? 'del' : 'eq', c.count);
        if (c.added || c.removed) edit += c.count;
      }
      return;
    }
    // Bounded fallback: row i against row i, linear in time and memory.
    cutStretches += 1;
    cutEvents += sa.length + sb.length;
    const common = Math.min(sa.length, sb.length);
    for (let i = 0; i < common; i++) {
      if (sa[i] === sb[i]) pushOp(ops, 'eq', 1);
      else {
        pushOp(ops, 'del', 1);
        pushOp(ops, 'ins', 1);
        edit += 2;
      }
    }
    if (sa.length > common) pushOp(ops, 'del', sa.length - common);
    if (sb.length > common) pushOp(ops, 'ins', sb.length - common);
    edit += sa.length + sb.length - 2 * common;
  };
  let i0 = 0;
  let j0 = 0;
  for (const [i, j] of uniqueAnchors(midA, midB, idCount)) {
    stretch(midA.slice(i0, i), midB.slice(j0, j));
    pushOp(ops, 'eq', 1);
    i0 = i + 1;
    j0 = j + 1;
  }
  stretch(midA.slice(i0), midB.slice(j0));
  if (suffix) pushOp(ops, 'eq', suffix);
  const reason = cutStretches
    ? `${cutStretches} stretch${cutStretches === 1 ? '' : 'es'} between matching events (${cutEvents} events) ` +
      `needed more than ${maxEditLength} inserted or deleted events and ${cutStretches === 1 ? 'was' : 'were'} aligned by position`
    : null;
  return {
    ops,
    method: cutStretches ? 'positional' : 'myers',
    prefix,
    suffix,
    edit: cutStretches ? null : edit,
    reason,
  };
}

function pushOp(ops: Op[], op: Op['op'], n: number): void {
  const last = ops[ops.length - 1];
  if (last && last.op === op) last.n += n;
  else ops.push({ op, n });
}

/**
 * Diffs two runs: aligns their event sequences (Myers over kind + normalised payload), classifies
 * rows, finds the first divergence, diffs the payloads of changed rows and the two final states.
 * Bounded: the edit script is searched up to `maxEditLength`, rows are capped at `maxRows`; what was
 * cut is said in `truncated` / `*_left_off`. Pure (no I/O, no clock).
 */
export function diffRunEvents(
  leftSide: DiffSide | KeyedSide,
  rightSide: DiffSide | KeyedSide,
  options: DiffOptions = {},
): RunDiff {
  const opt = { ...DIFF_DEFAULTS, ...options };
  let left: KeyedSide;
  let right: KeyedSide;
  if ('events' in leftSide && 'events' in rightSide) {
    // One table for both: their keys then share ids.
    const table = new KeyTable([leftSide.run_id, rightSide.run_id]);
    left = prepareSide(leftSide, table);
    right = prepareSide(rightSide, table);
  } else {
    left = 'events' in leftSide ? prepareSide(leftSide) : leftSide;
    right = 'events' in rightSide ? prepareSide(rightSide) : rightSide;
  }
  const { L, R, keys } = commonIds(left, right);
  const kindL = (i: number): string => L.kinds[L.kindOf[i]!]!;
  const kindR = (j: number): string => R.kinds[R.kindOf[j]!]!;
  const al = align(L.ids, R.ids, opt.maxEditLength, keys.length);

  const counts = { same: 0, changed: 0, only_left: 0, only_right: 0 };
  const rows: DiffRow[] = [];
  let leftOff = 0;
  let first: FirstDivergence | null = null;
  let settings: Change[] | null = null;
  const emit = (row: DiffRow): void => {
    if (row.type === 'same') counts.same += row.count;
    else counts[row.type] += 1;
    // Two run_started events that differ say the runs were set up differently (variant, seed,
    // budget): by design when comparing variants. That is reported in `settings`; the first
    // divergence is the first event where the runs behave differently.
    const isSettings =
      row.type === 'changed' && row.left_kind === 'run_started' && row.right_kind === 'run_started';
    if (isSettings && settings === null) settings = row.changes ?? [];
    if (row.type !== 'same' && !first && !isSettings) {
      first = {
        type: row.type,
        left_seq: row.left_seq ?? L.seqs[li] ?? null,
        right_seq: row.right_seq ?? R.seqs[ri] ?? null,
        left_kind: row.left_kind,
        right_kind: row.right_kind,
      };
    }
    const last = rows[rows.length - 1];
    if (row.type === 'same' && last && last.type === 'same' && leftOff === 0) {
      last.count += row.count;
      return;
    }
    if (rows.length < opt.maxRows) rows.push(row);
    else leftOff += 1;
  };
  const withCalls = (row: DiffRow, i: number | null, j: number | null): DiffRow => {
    const lc = i === null ? 0 : L.callOf[i]!;
    const rc = j === null ? 0 : R.callOf[j]!;
    if (lc) row.left_call = `#${lc}`;
    if (rc) row.right_call = `#${rc}`;
    return row;
  };
  const onlyLeft = (i: number): DiffRow =>
    withCalls(
      {
        type: 'only_left',
        left_seq: L.seqs[i]!,
        right_seq: null,
        count: 1,
        left_kind: kindL(i),
        right_kind: null,
      },
      i,
      null,
    );
  const onlyRight = (j: number): DiffRow =>
    withCalls(
      {
        type: 'only_right',
        left_seq: null,
        right_seq: R.seqs[j]!,
        count: 1,
        left_kind: null,
        right_kind: kindR(j),
      },
      null,
      j,
    );
  const pair = (i: number, j: number): DiffRow => {
    const same = L.ids[i] === R.ids[j];
    const row: DiffRow = {
      type: same ? 'same' : 'changed',
      left_seq: L.seqs[i]!,
      right_seq: R.seqs[j]!,
      count: 1,
      left_kind: kindL(i),
      right_kind: kindR(j),
    };
    if (!same && rows.length < opt.maxRows) {
      row.changes = changesCapped(payloadOf(keys, L.ids[i]!), payloadOf(keys, R.ids[j]!), {
        max: opt.maxChangesPerRow,
      }).changes;
    }
    return withCalls(row, i, j);
  };

  let li = 0;
  let ri = 0;
  const ops = al.ops;
  for (let k = 0; k < ops.length; k++) {
    const o = ops[k]!;
    if (o.op === 'eq') {
      emit({
        type: 'same',
        left_seq: L.seqs[li]!,
        right_seq: R.seqs[ri]!,
        count: o.n,
        left_kind: kindL(li),
        right_kind: kindR(ri),
      });
      li += o.n;
      ri += o.n;
      continue;
    }
    // A hunk: the deleted and inserted events between two equal stretches. A deleted event pairs
    // with the next inserted event of the same kind (within pairWindow) as a `changed` row.
    let nDel = 0;
    let nIns = 0;
    while (k < ops.length && ops[k]!.op !== 'eq') {
      if (ops[k]!.op === 'del') nDel += ops[k]!.n;
      else nIns += ops[k]!.n;
      k++;
    }
    k--;
    const delEnd = li + nDel;
    const insEnd = ri + nIns;
    while (li < delEnd) {
      let match = -1;
      const limit = Math.min(insEnd, ri + opt.pairWindow);
      for (let j = ri; j < limit; j++) {
        if (kindR(j) === kindL(li)) {
          match = j;
          break;
        }
      }
      if (match < 0) {
        emit(onlyLeft(li));
        li++;
        continue;
      }
      while (ri < match) {
        emit(onlyRight(ri));
        ri++;
      }
      emit(pair(li, ri));
      li++;
      ri++;
    }
    while (ri < insEnd) {
      emit(onlyRight(ri));
      ri++;
    }
  }

  let stateChanges: Change[] = [];
  let stateLeftOff = 0;
  if (left.final_state && right.final_state) {
    const c = changesCapped(normaliseState(left.final_state), normaliseState(right.final_state), {
      max: opt.maxStateChanges,
    });
    stateChanges = c.changes;
    stateLeftOff = c.truncated;
  }

  const cut: string[] = [];
  if (al.reason) cut.push(al.reason);
  if (leftOff)
    cut.push(`${leftOff} rows beyond the first ${opt.maxRows} were left off (counts include them)`);
  const identical = counts.changed + counts.only_left + counts.only_right === 0;
  return {
    left: { run_id: left.run_id, events: L.ids.length },
    right: { run_id: right.run_id, events: R.ids.length },
    identical,
    counts,
    first_divergence: first,
    settings,
    rows,
    rows_left_off: leftOff,
    state_changes: stateChanges,
    state_changes_left_off: stateLeftOff,
    alignment: {
      method: al.method,
      common_prefix: al.prefix,
      common_suffix: al.suffix,
      edit_length: al.edit,
    },
    truncated: cut.length ? { reason: cut.join('; ') } : null,
  };
}

/**
 * A final state as compared: call ids as their ordinal in the run, without the run id, times,
 * durations and seqs (seqs shift with every inserted event and would drown what differs).
 */
export function normaliseState(s: RunState): unknown {
  const ctx = newContext(s.run_id, false);
  ctx.dropSeqs = true;
  // Number calls by their ordinal in the run (call.n), so both states name the same call alike.
  for (const c of s.calls.items) ctx.calls.set(c.call_id, c.n);
  const { run_id: _r, projection: _p, caps: _c, started_ms: _s, budget, ...rest } = s;
  const { wall_ms: _w, ...used } = budget.used;
  // As for run_started payloads: how the run came to be (mode, source run) is not what it did.
  const task = rest.task
    ? { task_id: rest.task.task_id, goal: rest.task.goal, policy_digest: rest.task.policy_digest }
    : null;
  const json = normaliseJson({ ...rest, task, budget: { ...budget, used } }, ctx);
  return JSON.parse(json);
}
