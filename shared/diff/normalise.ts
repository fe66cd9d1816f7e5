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
 * - durations: keys `duration_ms` and `elapsed_ms`, and `used` of a `wall_ms` budget_exhausted;
 * - a real agent's raw records (real-run.ts; agentView below): where an event carries, beside the
 *   content address of what was exchanged (the bytes as they were, with that run's own paths, ids,
 *   token and times), a digest of the same content with what is run-specific replaced (the one list:
 *   electron/runner/gateway/canonical.ts normaliseText), it is compared by the latter.
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

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | null =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : null;
const without = (o: Obj, keys: readonly string[]): Obj => {
  const out: Obj = Object.create(null) as Obj;
  for (const k of Object.keys(o)) if (!keys.includes(k)) out[k] = o[k];
  return out;
};

/**
 * A real agent's event as two runs are compared (see the header), or the payload itself:
 * - model_responded with `request.canonical`: the request is its canonical digest (not its stored
 *   manifest's digest, bytes or parts); with `answer.canonical` the answer is that and its status
 *   (not its bytes' digest), and `content` and `calls` (the answer's text excerpt and call ids, which
 *   the canonical digest covers) are left out. `usage` and `tokens` are left out too: they count
 *   the raw bytes, which hold what the canonical forms replace. A subagent's hand-back says how long
 *   it took (`duration_ms: 854`), so a subagent that took 1,012 ms in the other run made every later
 *   request a byte longer and its input tokens one more, with the same canonical request;
 * - tool_returned with `result_digest`: `digest`, `bytes`, `artifact` and `excerpt` left out;
 * - agent_exited: the agent's own output (`stdout` digest, `stderr_excerpt`: session ids, costs,
 *   timings) left out; its exit code and signal kept;
 * - transcript_linked: `run_id` and `file` (named by the agent's session id) and `events` left out,
 *   `subagent` kept as whether the transcript is a subagent's. How many lines a transcript holds
 *   depends on timing: Claude Code records its session's metadata again (`last-prompt`,
 *   `atis-latch`) at each flush, and two runs alike in every exchange held 57 and 59 lines under
 *   load. What the agent did is compared by the exchanges and calls themselves;
 * - files_redacted: `home.kept` (the transcripts kept, named by the run's workspace, the agent's
 *   session and subagent ids) compared by how many; `home.removed` (how many files of its own the
 *   agent left in its home: caches, whose number varies from run to run) left out;
 * - run_started with an `agent.model_from`: `paths` (the run's own folders) left out;
 * - any event's `agent_id` (the subagent that made a call: Claude Code names each anew per run)
 *   becomes `<agent>`.
 */
function agentView(kind: string, payload: Obj): Obj {
  let p = payload;
  if (typeof p.agent_id === 'string') {
    p = without(p, ['agent_id']);
    p.agent_id = '<agent>';
  }
  switch (kind) {
    case 'model_responded': {
      const req = obj(p.request);
      if (typeof req?.canonical !== 'string') return p;
      const ans = obj(p.answer);
      const byCanonical = typeof ans?.canonical === 'string';
      const out = without(
        p,
        byCanonical
          ? ['request', 'answer', 'content', 'calls', 'usage', 'tokens']
          : ['request', 'usage', 'tokens'],
      );
      out.request = { canonical: req.canonical };
      if (ans) out.answer = byCanonical ? { canonical: ans.canonical, status: ans.status } : ans;
      return out;
    }
    case 'tool_returned':
      return typeof p.result_digest === 'string' ? without(p, ['digest', 'bytes', 'artifact', 'excerpt']) : p;
    case 'agent_exited':
      return without(p, ['stdout', 'stderr_excerpt']);
    case 'transcript_linked': {
      const out = without(p, ['run_id', 'file', 'events']);
      if ('subagent' in p) out.subagent = p.subagent !== null && p.subagent !== undefined;
      return out;
    }
    case 'files_redacted': {
      const home = obj(p.home);
      if (!home || !Array.isArray(home.kept)) return p;
      const out = without(p, ['home']);
      out.home = { ...without(home, ['kept', 'removed']), kept: home.kept.length };
      return out;
    }
    case 'run_started':
      return typeof obj(p.agent)?.model_from === 'string' && 'paths' in p ? without(p, ['paths']) : p;
    default:
      return p;
  }
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
  return normaliseValue(agentView(kind, p), ctx);
}
