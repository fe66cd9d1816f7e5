import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { NewEvent } from '../../shared/protocol';
import { canonicalPayload, checkShape, finishPayload, prepareItem } from '../../electron/ledger/prepare';

// prepareItem (the OTLP decode thread's one step) must store what the ledger's own steps store:
// checkShape, canonicalPayload, then finishPayload of that text; and refuse what they refuse.
function reference(item: NewEvent): string {
  checkShape(item);
  return finishPayload(item.kind, item.v ?? 1, canonicalPayload(item)).json;
}
const outcome = (f: () => string): { json: string } | { error: string } => {
  try {
    return { json: f() };
  } catch (e) {
    return { error: `${(e as Error).name}: ${(e as Error).message}` };
  }
};
const same = (item: NewEvent) =>
  expect(outcome(() => prepareItem(item))).toEqual(outcome(() => reference(item)));

const secret = fc.constantFrom(
  `sk-proj-${'A'.repeat(24)}`,
  `sk-proj-${'B'.repeat(24)}`,
  'Bearer abcdefghijklmnopqrstuvwxyz012345',
  'https://user:hunter22@example.com/x',
  'password=correct-horse-battery',
  'plain text',
  // What the trigger takes but no detector replaces (the walk is taken and changes nothing).
  'tokens used: 12',
  'input_tokens',
  'AKIA is a prefix',
);
// JSON values with secrets among their strings and keys, in any key order.
const { value } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string(),
    secret,
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(
      fc.oneof(
        fc.string(),
        secret,
        fc.constantFrom('token', 'api_key', 'input_tokens', 'authorization', 'Set-Cookie', 'b', 'a'),
      ),
      tie('value'),
      {
        maxKeys: 5,
      },
    ),
  ),
}));

describe('prepareItem', () => {
  it('stores and refuses as checkShape, canonicalPayload and finishPayload on random payloads', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('otel_span', 'tool_returned', 'model_proposed', 'model_responded'),
        fc.dictionary(fc.oneof(fc.string(), fc.constantFrom('status', 'call_id', 'tool', 'content')), value, {
          maxKeys: 6,
        }),
        (kind, payload) => {
          same({ kind, payload });
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('numbers placeholders in canonical key order, whatever order the payload was built in', () => {
    const a = `sk-proj-${'A'.repeat(24)}`;
    const b = `sk-proj-${'B'.repeat(24)}`;
    for (const payload of [
      { z: a, y: b },
      { y: b, z: a },
      { n: { z: a }, m: [b] },
    ]) {
      same({ kind: 'otel_span', payload });
      expect(prepareItem({ kind: 'otel_span', payload })).not.toContain('sk-proj-');
    }
  });

  it('gives what is not plain JSON to the general path, with the same result', () => {
    const nullProto = Object.assign(Object.create(null) as Record<string, unknown>, { b: 1, a: 'x' });
    const protoKey = JSON.parse('{"__proto__": {"token": "abc12345"}, "a": 1}') as Record<string, unknown>;
    let deep: Record<string, unknown> = { leaf: true };
    for (let i = 0; i < 300; i++) deep = { d: deep };
    let fairlyDeep: Record<string, unknown> = { leaf: `sk-proj-${'C'.repeat(24)}` };
    for (let i = 0; i < 100; i++) fairlyDeep = { d: fairlyDeep };
    const payloads: Record<string, unknown>[] = [
      { when: new Date(Date.UTC(2026, 0, 1)), gone: undefined, z: 1 },
      { list: [1, undefined, () => 1], f: () => 1 },
      { zero: -0, n: [-0] },
      { '10': 'ten', '9': 'nine', a: 'sk-proj-' + 'D'.repeat(24) },
      { x: { toJSON: () => ({ secret: 'password=hunter2222' }) } },
      { nested: nullProto },
      protoKey,
      { m: new Map([['a', 1]]) },
      fairlyDeep,
      deep,
      { bad: NaN },
      { big: 'x'.repeat(1 << 20) },
    ];
    for (const payload of payloads) same({ kind: 'otel_span', payload });
    same({ kind: 'tool_returned', payload: { call_id: 'c' } }); // the schema check
    same({ kind: 'Bad Kind', payload: {} });
    same({ kind: 'otel_span', payload: [] as unknown as Record<string, unknown> });
  });
});
