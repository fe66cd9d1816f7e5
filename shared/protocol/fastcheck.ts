import { isObj, type Obj } from '../json-read.js';
/**
 * Hand-written checks of the v1 payload schemas of kinds.ts, for the hot paths (append, import).
 * zod stays the reference: `checkPayload` asks it whenever a check here says no (for its message,
 * and so that a check here that is stricter than zod can never reject what zod accepts). What a
 * check here accepts, zod accepts too; test/unit/fastcheck.unit.spec.ts checks that both agree on
 * random payloads. zod 4 semantics mirrored: numbers are finite, `.int()` is a safe integer, an
 * optional key may be absent or undefined, a `z.unknown()` key must be present (`in`), a looseObject
 * is any non-array object and keeps extra keys, a record is a plain object of string keys.
 */

const isStr = (x: unknown): boolean => typeof x === 'string';
const optStr = (x: unknown): boolean => x === undefined || typeof x === 'string';
const nonEmpty = (x: unknown): boolean => typeof x === 'string' && x.length >= 1;
const isNum = (x: unknown): boolean => typeof x === 'number' && Number.isFinite(x);
const nonNeg = (x: unknown): boolean => typeof x === 'number' && Number.isFinite(x) && x >= 0;
const isInt = (x: unknown): boolean => Number.isSafeInteger(x);
const nonNegInt = (x: unknown): boolean => Number.isSafeInteger(x) && (x as number) >= 0;
const optNonNegInt = (x: unknown): boolean => x === undefined || nonNegInt(x);
const HEX64 = /^[0-9a-f]{64}$/;

/** z.record(z.string(), z.number()): a plain object whose own keys are strings with finite numbers. */
function numberRecord(x: unknown): boolean {
  if (typeof x !== 'object' || x === null || Array.isArray(x)) return false;
  const proto = Object.getPrototypeOf(x) as unknown;
  if (proto !== Object.prototype && proto !== null) return false;
  for (const k of Reflect.ownKeys(x)) {
    if (typeof k !== 'string' || !isNum((x as Obj)[k])) return false;
  }
  return true;
}

const checks: Record<string, (p: Obj) => boolean> = {
  run_started: (p) => {
    const a = p.agent;
    const b = p.budget;
    const m = p.mode;
    return (
      isStr(p.task_id) &&
      isStr(p.goal) &&
      isObj(a) &&
      isStr(a.name) &&
      optStr(a.variant) &&
      (a.seed === undefined || isInt(a.seed)) &&
      optStr(p.policy_digest) &&
      (b === undefined || numberRecord(b)) &&
      (m === undefined || m === 'live' || m === 'rerun' || m === 'replay' || m === 'resume') &&
      optStr(p.of)
    );
  },
  model_proposed: (p) => nonEmpty(p.call_id) && isStr(p.tool) && 'args' in p && optNonNegInt(p.tokens),
  action_allowed: (p) => nonEmpty(p.call_id) && isStr(p.rule) && optStr(p.reason),
  action_denied: (p) => nonEmpty(p.call_id) && isStr(p.rule) && isStr(p.reason),
  tool_invoked: (p) => nonEmpty(p.call_id) && isStr(p.tool) && 'args' in p,
  tool_returned: (p) => {
    const d = p.digest;
    return (
      nonEmpty(p.call_id) &&
      isStr(p.status) &&
      nonNeg(p.duration_ms) &&
      optStr(p.excerpt) &&
      (d === undefined || (typeof d === 'string' && HEX64.test(d))) &&
      optNonNegInt(p.bytes)
    );
  },
  tool_timed_out: (p) => nonEmpty(p.call_id) && nonNeg(p.timeout_ms),
  model_responded: (p) => isStr(p.content) && optNonNegInt(p.tokens),
  context_updated: (p) =>
    isStr(p.op) && optNonNegInt(p.tokens_before) && optNonNegInt(p.tokens_after) && optStr(p.digest),
  file_changed: (p) =>
    isStr(p.path) &&
    (p.before === null || optStr(p.before)) &&
    (p.after === null || optStr(p.after)) &&
    optStr(p.patch),
  budget_exhausted: (p) => {
    const b = p.budget;
    return (b === 'steps' || b === 'tokens' || b === 'wall_ms') && isNum(p.limit) && isNum(p.used);
  },
  judge_verdict: (p) =>
    typeof p.passed === 'boolean' &&
    optNonNegInt(p.tests_passed) &&
    optNonNegInt(p.tests_failed) &&
    optStr(p.command) &&
    optStr(p.output_digest),
  run_completed: (p) => isStr(p.outcome),
  run_failed: (p) => isStr(p.reason) && optStr(p.error_type) && optStr(p.stack_digest),
  run_resumed: (p) => nonNegInt(p.from_seq),
  event_annotated: (p) => Number.isSafeInteger(p.target_seq) && (p.target_seq as number) > 0 && isStr(p.note),
};

/**
 * True when the v1 schema of a known kind surely accepts `payload`; false when it may not (then ask
 * zod) or when the kind has no check here. Never true for a payload zod rejects.
 */
export function fastPayloadOk(kind: string, payload: unknown): boolean {
  if (!Object.prototype.hasOwnProperty.call(checks, kind)) return false;
  return isObj(payload) && checks[kind]!(payload);
}

/** The kinds with a check here (the spec checks it covers every kind of kinds.ts). */
export const FAST_KINDS: readonly string[] = Object.keys(checks);
