/**
 * The gateway's one JSON walker (gateway/canonical.ts normaliseJson), shared by the Anthropic and
 * Responses dialects: a request's keys are kept, dropped or replaced by the dialect's rule, every
 * string goes through the text rule, the depth is the agent's to choose, and a key named like an
 * Object.prototype member is a key like any other (else two requests differing only in it would
 * have one digest, and a replay would serve the wrong answer).
 */
import { describe, expect, it } from 'vitest';
import {
  callId,
  canonicalDigests,
  normaliseJson,
  type KeyRule,
} from '../../electron/runner/gateway/canonical';

const upper = (s: string) => s.toUpperCase();
const walk: KeyRule = () => 'walk';

describe('normaliseJson', () => {
  it('applies the key rule: drop, replace, walk; item marks an array element', () => {
    const ids = new Map<string, string>();
    const seenItem: [string, boolean][] = [];
    const out = normaliseJson(
      { meta: { id: 'x', note: 'a' }, input: [{ id: 'item-1', call_id: 'c-9', text: 'b' }], cache: 1 },
      upper,
      (k, x, _o, item) => {
        seenItem.push([k, item]);
        if (k === 'cache') return 'drop';
        if (k === 'id' && item) return 'drop';
        if (k === 'call_id') return { value: callId(String(x), ids) };
        return 'walk';
      },
    );
    expect(out).toEqual({ meta: { id: 'X', note: 'A' }, input: [{ call_id: 'call_1', text: 'B' }] });
    expect(seenItem).toContainEqual(['id', false]); // meta's id: not an array element, kept
    expect(seenItem).toContainEqual(['id', true]);
  });

  it('keeps a __proto__ key as a key: two requests differing only in it digest apart', () => {
    const a = JSON.parse('{"model":"m","__proto__":{"polluted":"yes"}}') as unknown;
    const b = JSON.parse('{"model":"m"}') as unknown;
    const na = normaliseJson(a, upper, walk) as Record<string, unknown>;
    expect(Object.keys(na).sort()).toEqual(['__proto__', 'model']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const digest = (v: unknown) => canonicalDigests({ head: v, messages: [] } as never).all;
    expect(digest(na)).not.toBe(digest(normaliseJson(b, upper, walk)));
  });

  it('walks 100,000 levels of nesting without recursion', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    let out = normaliseJson(deep, upper, walk);
    let depth = 0;
    while (Array.isArray(out)) {
      out = out[0];
      depth++;
    }
    expect([depth, out]).toEqual([100_000, 'LEAF']);
  });
});
