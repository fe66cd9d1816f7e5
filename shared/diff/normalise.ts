/**
 * Normalisation for the run diff (DESIGN.md, "Diff"): two runs of the same deterministic agent must
 * compare equal "but for ids, times and durations". What is left out or rewritten:
 * - run ids: a string equal to the run's id, or containing it (a workspace path), gets `<run>`;
 *   `run_started.of` (the source run) and `run_started.mode` (live/rerun/replay) are left out:
 *   they say how the run came to be, not what it did;
 * - call ids: every `call_id` value is numbered per run by first appearance (`#1`, `#2`, …) in the
 *   payload shown; the alignment and the same/changed test compare call references as equal
 *   (`#`), because one inserted call would shift every later number and turn the rest of the run
 *   into "changed";
 * - times: keys `at`, `time`, `timestamp` and `*_at`, and any ISO-8601 timestamp string, are dropped
 *   or become `<time>`;
 * - durations: keys `duration_ms` and `elapsed_ms`, and `used` of a `wall_ms` budget_exhausted.
 * Object keys are sorted, so key order never makes a difference.
 */

const DROP_KEY = /^(?:at|time|timestamp|duration_ms|elapsed_ms)$|_at$/;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?$/;

export const CALL_MASK = '#';

export interface NormaliseContext {
  runId: string;
  /** call id → per-run ordinal, filled by first appearance. */
  calls: Map<string, number>;
  /** When true call ids become `#` (for comparison); else `#n` (for people). */
  maskCalls: boolean;
  /** Drop `seq` and `*_seq` keys too (used for the final-state diff, where seqs shift with inserts). */
  dropSeqs?: boolean;
}

export function newContext(runId: string, maskCalls = true): NormaliseContext {
  return { runId, calls: new Map(), maskCalls };
}

function callRef(id: string, ctx: NormaliseContext): string {
  let n = ctx.calls.get(id);
  if (n === undefined) {
    n = ctx.calls.size + 1;
    ctx.calls.set(id, n);
  }
  return ctx.maskCalls ? CALL_MASK : `#${n}`;
}

function normString(s: string, ctx: NormaliseContext): string {
  if (ctx.runId && s.includes(ctx.runId)) s = s.split(ctx.runId).join('<run>');
  if (s.length >= 16 && s.length <= 40 && ISO_TIME.test(s)) return '<time>';
  return s;
}

/**
 * The canonical JSON text of a normalised value, built in one pass (sorted keys, like RFC 8785 for
 * the values a payload holds). Faster than normalising to a copy and canonicalising it.
 */
export function normaliseJson(value: unknown, ctx: NormaliseContext, key: string | null = null): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      if (key === 'call_id') return JSON.stringify(callRef(value, ctx));
      return JSON.stringify(normString(value, ctx));
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (Array.isArray(value)) {
        let out = '[';
        for (let i = 0; i < value.length; i++) {
          if (i) out += ',';
          const v: unknown = value[i];
          out += v === undefined || typeof v === 'function' ? 'null' : normaliseJson(v, ctx, null);
        }
        return out + ']';
      }
      const o = value as Record<string, unknown>;
      const keys = Object.keys(o).sort();
      let out = '{';
      let first = true;
      for (const k of keys) {
        if (DROP_KEY.test(k)) continue;
        if (ctx.dropSeqs && (k === 'seq' || k.endsWith('_seq'))) continue;
        const v = o[k];
        if (v === undefined || typeof v === 'function') continue;
        out += (first ? '' : ',') + JSON.stringify(k) + ':' + normaliseJson(v, ctx, k);
        first = false;
      }
      return out + '}';
    }
    default:
      return 'null';
  }
}

/** The normalised payload of an event of `kind`, as canonical JSON text. */
export function normalisePayload(kind: string, payload: Record<string, unknown>, ctx: NormaliseContext): string {
  let p = payload;
  if (kind === 'run_started' && ('of' in p || 'mode' in p)) {
    const { of: _of, mode: _mode, ...rest } = p;
    p = rest;
  } else if (kind === 'budget_exhausted' && p.budget === 'wall_ms' && 'used' in p) {
    const { used: _used, ...rest } = p;
    p = rest;
  }
  return normaliseJson(p, ctx);
}
