/**
 * Normalisation for the run diff (DESIGN.md, "Diff"): two runs of the same deterministic agent must
 * compare equal "but for ids, times and durations". What is left out or rewritten:
 * - run ids: a string equal to the run's id, or containing it (a workspace path; ids of 6+
 *   characters), gets `<run>`;
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

const ISO_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?$/;

export const CALL_MASK = '#';

/** Whether a key is left out (DROP_KEY, spelled out: this runs for every key of every payload). */
function dropped(k: string, dropSeqs: boolean | undefined): boolean {
  if (k === 'at' || k === 'time' || k === 'timestamp' || k === 'duration_ms' || k === 'elapsed_ms')
    return true;
  if (k.endsWith('_at')) return true;
  return dropSeqs === true && (k === 'seq' || k.endsWith('_seq'));
}

function sortedKeys(o: Record<string, unknown>): string[] {
  const keys = Object.keys(o);
  for (let i = 1; i < keys.length; i++) if (keys[i - 1]! > keys[i]!) return keys.sort();
  return keys;
}

export interface NormaliseContext {
  runId: string;
  /** call id → per-run ordinal, filled by first appearance (not when maskCalls). */
  calls: Map<string, number>;
  /** When true call ids become `#` (for comparison); else `#n` (for people). */
  maskCalls: boolean;
  /** Drop `seq` and `*_seq` keys too (used for the final-state diff, where seqs shift with inserts). */
  dropSeqs?: boolean;
}

export function newContext(runId: string, maskCalls = true): NormaliseContext {
  return { runId, calls: new Map(), maskCalls };
}

/** The per-run number of a call id (1, 2, …), numbered by first appearance. */
export function callNumber(id: string, ctx: NormaliseContext): number {
  let n = ctx.calls.get(id);
  if (n === undefined) {
    n = ctx.calls.size + 1;
    ctx.calls.set(id, n);
  }
  return n;
}

function callRef(id: string, ctx: NormaliseContext): string {
  // Masked, the ordinal is not written: no need to number the call (a Map lookup per call id,
  // measured ~4% of preparing a run for the diff).
  return ctx.maskCalls ? CALL_MASK : `#${callNumber(id, ctx)}`;
}

function normString(s: string, ctx: NormaliseContext): string {
  if (s === ctx.runId) return '<run>';
  // Inside longer strings (a workspace path) only a run id long enough not to match by chance.
  if (ctx.runId.length >= 6 && s.includes(ctx.runId)) s = s.split(ctx.runId).join('<run>');
  // An ISO time starts with four digits and a dash: test that before the regex.
  if (s.length >= 16 && s.length <= 40 && s.charCodeAt(4) === 45 && ISO_TIME.test(s)) return '<time>';
  return s;
}

/**
 * A normalised copy of a value: rules above applied, object keys in sorted order. Measured: building
 * the copy and letting the native JSON.stringify write it is ~1.5× faster than writing the text in
 * JS, mostly because the flat string it returns is cheaper to intern.
 */
export function normaliseValue(value: unknown, ctx: NormaliseContext, key: string | null = null): unknown {
  if (value === null) return null;
  switch (typeof value) {
    case 'string':
      return key === 'call_id' ? callRef(value, ctx) : normString(value, ctx);
    case 'number':
      return Number.isFinite(value) ? value : null;
    case 'boolean':
      return value;
    case 'object': {
      if (Array.isArray(value)) {
        const out: unknown[] = new Array(value.length);
        for (let i = 0; i < value.length; i++) {
          const v: unknown = value[i];
          out[i] = v === undefined || typeof v === 'function' ? null : normaliseValue(v, ctx, null);
        }
        return out;
      }
      const o = value as Record<string, unknown>;
      // A payload key `__proto__` is a key like any other: fromEntries defines own properties
      // (assigning it on a {} would set the prototype instead).
      const out: [string, unknown][] = [];
      for (const k of sortedKeys(o)) {
        if (dropped(k, ctx.dropSeqs)) continue;
        const v = o[k];
        if (v === undefined || typeof v === 'function') continue;
        out.push([k, normaliseValue(v, ctx, k)]);
      }
      return Object.fromEntries(out);
    }
    default:
      return null;
  }
}

/** The canonical JSON text of a normalised value (sorted keys). */
export function normaliseJson(value: unknown, ctx: NormaliseContext, key: string | null = null): string {
  return JSON.stringify(normaliseValue(value, ctx, key)) ?? 'null';
}

/** The normalised payload of an event of `kind`, as canonical JSON text. */
export function normalisePayload(
  kind: string,
  payload: Record<string, unknown>,
  ctx: NormaliseContext,
): string {
  return JSON.stringify(normalisedPayload(kind, payload, ctx));
}

/** The normalised payload of an event of `kind`. */
export function normalisedPayload(
  kind: string,
  payload: Record<string, unknown>,
  ctx: NormaliseContext,
): unknown {
  let p = payload;
  if (kind === 'run_started' && ('of' in p || 'mode' in p)) {
    const { of: _of, mode: _mode, ...rest } = p;
    p = rest;
  } else if (kind === 'budget_exhausted' && p.budget === 'wall_ms' && 'used' in p) {
    const { used: _used, ...rest } = p;
    p = rest;
  }
  return normaliseValue(p, ctx);
}
