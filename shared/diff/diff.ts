import { diffArrays } from 'diff';
import { isKnownKind, upcast } from '../protocol';
import { changesCapped } from '../state/changes';
import type { Change, FoldEvent, RunState } from '../state/types';
import { callOrdinal, newContext, normaliseJson, normalisedPayload } from './normalise';

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

/** The per-run sequence, interned: `ids[i]` equal on both sides ⇔ same kind and normalised payload. */
interface Side {
  seqs: number[];
  ids: number[];
  kinds: string[];
  calls: (string | undefined)[];
}

/**
 * One run read for the diff: per event its seq, kind, comparison key (kind and normalised payload
 * as one JSON string) and call ordinal. Plain data, so a worker thread can prepare one side while
 * the main thread prepares the other.
 */
export interface PreparedSide {
  run_id: string;
  seqs: number[];
  keys: string[];
  kinds: string[];
  calls: (string | undefined)[];
  final_state?: RunState | null;
}

/**
 * Interns keys to small integers. Keyed by a 53-bit hash computed here (two 32-bit FNV-style
 * hashes), every hit verified against the stored key: measured ~1.5× faster than a Map keyed by
 * the ~250-character strings themselves, which V8 hashes and compares in full.
 */
class Interner {
  private readonly byHash = new Map<number, number>();
  /** Next id with the same hash (collision chain), -1 at the end. */
  private readonly next: number[] = [];
  readonly keys: string[] = [];
  id(key: string): number {
    let h1 = 0x811c9dc5;
    let h2 = 0x01234567;
    for (let i = 0; i < key.length; i++) {
      const c = key.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 16777619);
      h2 = Math.imul(h2 ^ c, 0x5bd1e995);
    }
    const h = (h1 >>> 0) * 2097152 + ((h2 >>> 11) & 0x1fffff);
    const first = this.byHash.get(h);
    for (let n = first ?? -1; n >= 0; n = this.next[n]!) if (this.keys[n] === key) return n;
    const id = this.keys.length;
    this.keys.push(key);
    this.next.push(first ?? -1);
    this.byHash.set(h, id);
    return id;
  }
}

export function prepareSide(side: DiffSide): PreparedSide {
  const ctx = newContext(side.run_id, true);
  const shown = newContext(side.run_id, false);
  const out: PreparedSide = {
    run_id: side.run_id,
    seqs: [],
    keys: [],
    kinds: [],
    calls: [],
    final_state: side.final_state,
  };
  const kindNames = new Map<string, string>();
  for (const e of side.events) {
    // Old payload versions are compared as the current version they upcast to.
    const raw = e.payload && typeof e.payload === 'object' ? e.payload : {};
    const payload = isKnownKind(e.kind) ? upcast(e.kind, e.v, raw).payload : raw;
    // One flat string per event (kind and normalised payload): cheap to intern.
    out.keys.push(JSON.stringify([e.kind, normalisedPayload(e.kind, payload, ctx)]));
    out.seqs.push(e.seq);
    let k = kindNames.get(e.kind);
    if (k === undefined) kindNames.set(e.kind, (k = e.kind));
    out.kinds.push(k);
    const callId = typeof payload.call_id === 'string' ? payload.call_id : undefined;
    out.calls.push(callId === undefined ? undefined : callOrdinal(callId, shown));
  }
  return out;
}

function readSide(side: PreparedSide, interner: Interner): Side {
  const ids = new Array<number>(side.keys.length);
  for (let i = 0; i < side.keys.length; i++) ids[i] = interner.id(side.keys[i]!);
  return { seqs: side.seqs, ids, kinds: side.kinds, calls: side.calls };
}

function payloadOf(interner: Interner, id: number): unknown {
  return (JSON.parse(interner.keys[id]!) as [string, unknown])[1];
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
  leftSide: DiffSide | PreparedSide,
  rightSide: DiffSide | PreparedSide,
  options: DiffOptions = {},
): RunDiff {
  const opt = { ...DIFF_DEFAULTS, ...options };
  const interner = new Interner();
  const left = 'keys' in leftSide ? leftSide : prepareSide(leftSide);
  const right = 'keys' in rightSide ? rightSide : prepareSide(rightSide);
  const L = readSide(left, interner);
  const R = readSide(right, interner);
  const al = align(L.ids, R.ids, opt.maxEditLength, interner.keys.length);

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
    const lc = i === null ? undefined : L.calls[i];
    const rc = j === null ? undefined : R.calls[j];
    if (lc !== undefined) row.left_call = lc;
    if (rc !== undefined) row.right_call = rc;
    return row;
  };
  const onlyLeft = (i: number): DiffRow =>
    withCalls(
      {
        type: 'only_left',
        left_seq: L.seqs[i]!,
        right_seq: null,
        count: 1,
        left_kind: L.kinds[i]!,
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
        right_kind: R.kinds[j]!,
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
      left_kind: L.kinds[i]!,
      right_kind: R.kinds[j]!,
    };
    if (!same && rows.length < opt.maxRows) {
      row.changes = changesCapped(payloadOf(interner, L.ids[i]!), payloadOf(interner, R.ids[j]!), {
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
        left_kind: L.kinds[li]!,
        right_kind: R.kinds[ri]!,
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
        if (R.kinds[j] === L.kinds[li]) {
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
