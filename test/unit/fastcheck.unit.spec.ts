import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type * as z from '../../shared/zod';
import { KNOWN_KINDS, payloadSchemas } from '../../shared/protocol/kinds';
import { FAST_KINDS, fastPayloadOk } from '../../shared/protocol/fastcheck';
import { checkPayload } from '../../shared/protocol/validate';

/** Keys of a zod (loose) object schema. */
const keysOf = (s: unknown): string[] => Object.keys((s as { shape: Record<string, unknown> }).shape);

const HEX = 'ab'.repeat(32);
const edge = fc.constantFrom<unknown>(
  undefined,
  null,
  true,
  false,
  0,
  -0,
  1,
  -1,
  7,
  1.5,
  -1e-300,
  NaN,
  Infinity,
  -Infinity,
  2 ** 53,
  2 ** 53 - 1,
  -(2 ** 53 - 1),
  1e300,
  '',
  'x',
  'live',
  'rerun',
  'replay',
  'resume',
  'other',
  'steps',
  'tokens',
  'wall_ms',
  HEX,
  HEX.toUpperCase(),
  HEX.slice(1),
  `${HEX}0`,
  [],
  {},
);
const agentKeys = keysOf(payloadSchemas.run_started.shape.agent);
/** Any value: right and wrong types for every field type the schemas use, absent ones included. */
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: edge },
  fc.string(),
  fc.double(),
  fc.integer(),
  fc.boolean(),
  fc.array(fc.jsonValue(), { maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 3 }), fc.oneof(fc.double(), edge), { maxKeys: 3 }),
  fc.record(Object.fromEntries(agentKeys.map((k) => [k, edge])), { requiredKeys: [] }),
);

/** A valid payload of every kind with its optional fields present, mutated field by field below. */
const FULL: Record<string, Record<string, unknown>> = {
  run_started: {
    task_id: 't',
    goal: 'g',
    agent: { name: 'n', variant: 'v', seed: 3 },
    policy_digest: 'd',
    budget: { steps: 4, tokens: 1.5 },
    mode: 'rerun',
    of: 'r',
  },
  model_proposed: { call_id: 'c', tool: 't', args: { path: 'x' }, tokens: 4 },
  action_allowed: { call_id: 'c', rule: 'r', reason: 'why' },
  action_denied: { call_id: 'c', rule: 'r', reason: 'why' },
  tool_invoked: { call_id: 'c', tool: 't', args: [1] },
  tool_returned: { call_id: 'c', status: 'ok', duration_ms: 2.5, excerpt: 'e', digest: HEX, bytes: 9 },
  tool_timed_out: { call_id: 'c', timeout_ms: 100 },
  model_responded: { content: 'c', tokens: 1 },
  context_updated: { op: 'append', tokens_before: 1, tokens_after: 2, digest: 'd' },
  file_changed: { path: 'p', before: 'b', after: null, patch: '@@' },
  budget_exhausted: { budget: 'wall_ms', limit: 10, used: 11.5 },
  judge_verdict: { passed: true, tests_passed: 1, tests_failed: 0, command: 'c', output_digest: 'o' },
  run_completed: { outcome: 'passed' },
  run_failed: { reason: 'r', error_type: 'E', stack_digest: 's' },
  run_resumed: { from_seq: 0 },
  event_annotated: { target_seq: 2, note: 'n' },
};
const KEEP = Symbol('keep');
const DROP = Symbol('drop');
const edit = fc.oneof(
  { weight: 6, arbitrary: fc.constant<unknown>(KEEP) },
  { weight: 1, arbitrary: fc.constant<unknown>(DROP) },
  { weight: 2, arbitrary: anyValue },
);
function mutate(base: Record<string, unknown>): fc.Arbitrary<Record<string, unknown>> {
  const keys = Object.keys(base);
  return fc.record(Object.fromEntries(keys.map((k) => [k, edit]))).chain((edits) => {
    const out: Record<string, unknown> = {};
    const nested: fc.Arbitrary<[string, unknown]>[] = [];
    for (const k of keys) {
      const e = edits[k];
      if (e === DROP) continue;
      out[k] = e === KEEP ? base[k] : e;
      const b = base[k];
      if (e === KEEP && b !== null && typeof b === 'object' && !Array.isArray(b))
        nested.push(mutate(b as Record<string, unknown>).map((m) => [k, m] as [string, unknown]));
    }
    if (nested.length === 0) return fc.constant(out);
    return fc.tuple(...nested).map((pairs) => {
      const o = { ...out };
      for (const [k, m] of pairs) o[k] = m;
      return o;
    });
  });
}

function payloadOf(kind: string): fc.Arbitrary<unknown> {
  const keys = keysOf(payloadSchemas[kind as keyof typeof payloadSchemas]);
  const obj = fc
    .tuple(
      fc.record(Object.fromEntries(keys.map((k) => [k, anyValue])), { requiredKeys: [] }),
      fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue(), { maxKeys: 2 }),
    )
    .map(([known, extra]) => ({ ...extra, ...known }));
  return fc.oneof({ weight: 9, arbitrary: mutate(FULL[kind]!) }, { weight: 5, arbitrary: obj }, edge);
}

describe('fast payload checks', () => {
  it('cover every known kind', () => {
    expect([...FAST_KINDS].sort()).toEqual([...KNOWN_KINDS].sort());
    expect(Object.keys(FULL).sort()).toEqual([...KNOWN_KINDS].sort());
    for (const k of KNOWN_KINDS) expect(payloadSchemas[k].safeParse(FULL[k]).success).toBe(true);
  });

  for (const kind of KNOWN_KINDS) {
    it(`agree with the zod schema of ${kind} on random payloads`, () => {
      const schema = payloadSchemas[kind] as z.ZodMiniType;
      fc.assert(
        fc.property(payloadOf(kind), (p) => {
          const ref = schema.safeParse(p);
          expect(fastPayloadOk(kind, p)).toBe(ref.success);
          if (p !== null && typeof p === 'object' && !Array.isArray(p)) {
            const c = checkPayload(kind, 1, p as Record<string, unknown>);
            expect(c.ok).toBe(ref.success);
          }
        }),
        { numRuns: 3000 },
      );
    });
  }

  it('agree on valid payloads built from the right field types', () => {
    const ok = {
      run_started: {
        task_id: 't',
        goal: '',
        agent: { name: 'n', seed: 3 },
        budget: { steps: 4 },
        mode: 'live',
      },
      model_proposed: { call_id: 'c', tool: 't', args: undefined, tokens: 0 },
      tool_returned: { call_id: 'c', status: 'ok', duration_ms: 0.5, digest: HEX, bytes: 3 },
      file_changed: { path: 'p', before: null, after: 'x' },
      budget_exhausted: { budget: 'steps', limit: -1.5, used: 2 },
      event_annotated: { target_seq: 1, note: '' },
    } as Record<string, Record<string, unknown>>;
    for (const [kind, p] of Object.entries(ok)) {
      expect(fastPayloadOk(kind, p)).toBe(true);
      expect(payloadSchemas[kind as keyof typeof payloadSchemas].safeParse(p).success).toBe(true);
    }
  });

  it('leave the message to zod', () => {
    const c = checkPayload('model_responded', 1, { content: 3 });
    expect(c).toEqual({ ok: false, message: expect.stringContaining('payload of model_responded: content') });
  });
});
