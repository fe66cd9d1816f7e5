import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { canonicalJson, canonicalJsonReference } from '../../shared/protocol/canonical';
import { digestEvent } from '../../electron/crypto';

describe('canonical JSON (RFC 8785)', () => {
  it('agrees with the reference library on random JSON values', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(canonicalJson(v)).toBe(canonicalJsonReference(v));
      }),
      { numRuns: 2000 },
    );
  });

  it('agrees on objects with unicode keys, undefined members and toJSON', () => {
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.string({ unit: 'binary' }),
          fc.option(fc.double({ noNaN: true, noDefaultInfinity: true }), { nil: undefined }),
        ),
        (o) => {
          expect(canonicalJson(o)).toBe(canonicalJsonReference(o));
        },
      ),
    );
    const d = new Date(0);
    expect(canonicalJson({ d })).toBe(canonicalJsonReference({ d }));
  });

  it('agrees on the shapes its fast path hands to JSON.stringify or not', () => {
    const cases: unknown[] = [
      { b: { d: 1, c: [{ z: 1, y: 2 }, 'x'] }, a: null },
      { a: 1, b: { c: 2 } },
      [{ b: 1, a: 2 }, [{ d: 1, c: 2 }]],
      { '10': 'a', '9': 'b', x: 1 },
      { '!': 1, '1': 2 },
      { nested: { '2': 1, '10': 2 } },
      JSON.parse('{"__proto__": {"b": 1, "a": 2}, "z": 0}'),
      JSON.parse('{"z": 0, "__proto__": 1}'),
      { d: new Date(0), a: 1 },
      { u: undefined, b: [undefined, 1], a: 1 },
      // More keys than the insertion sort takes, out of order, and a few in reverse.
      Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${(i * 17) % 40}`, i])),
      { e: 1, d: 2, c: 3, b: 4, a: 5, B: 6, é: 7, '': 8 },
    ];
    for (const c of cases) expect(canonicalJson(c)).toBe(canonicalJsonReference(c));
    expect(() => canonicalJson({ b: 1, a: [NaN] })).toThrow(/not allowed/);
  });

  it('agrees on random objects with unsorted and integer-like keys', () => {
    const key = fc.oneof(
      fc.string({ maxLength: 4 }),
      fc.nat({ max: 120 }).map(String),
      fc.constant('__proto__'),
    );
    const { tree } = fc.letrec((tie) => ({
      tree: fc.oneof({ depthSize: 'small' }, tie('leaf'), tie('obj'), tie('arr')),
      leaf: fc.oneof(
        fc.string(),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.boolean(),
        fc.constant(null),
      ),
      obj: fc.array(fc.tuple(key, tie('tree')), { maxLength: 6 }).map((kv) => {
        const o: Record<string, unknown> = {};
        for (const [k, v] of kv)
          Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
        return o;
      }),
      arr: fc.array(tie('tree'), { maxLength: 4 }),
    }));
    fc.assert(
      fc.property(tree, (v) => {
        expect(canonicalJson(v)).toBe(canonicalJsonReference(v));
      }),
      { numRuns: 3000 },
    );
  });

  it('writes the RFC 8785 examples as the RFC does', () => {
    expect(canonicalJson({ b: 1, a: [1e21, 'é', { z: null, y: 0.1 }] })).toBe(
      '{"a":[1e+21,"é",{"y":0.1,"z":null}],"b":1}',
    );
    expect(
      canonicalJson({
        '\u20ac': 'Euro Sign',
        '\r': 'Carriage Return',
        '\ufb33': 'Hebrew',
        '1': 'One',
        '\u0080': 'Control',
        '\ud83d\ude00': 'Emoji',
        '\u00f6': 'Latin',
      }),
    ).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin","\u20ac":"Euro Sign","\ud83d\ude00":"Emoji","\ufb33":"Hebrew"}',
    );
    expect(canonicalJson([333333333.3333333, 1e-7, -0, Number.MIN_VALUE])).toBe(
      '[333333333.3333333,1e-7,0,5e-324]',
    );
  });

  it('refuses values without a canonical form', () => {
    expect(() => canonicalJson(NaN)).toThrow(/not allowed/);
    expect(() => canonicalJson({ x: Infinity })).toThrow(/not allowed/);
    expect(() => canonicalJson(undefined)).toThrow(/no JSON form/);
  });
});

describe('event digest', () => {
  it('equals sha256 of the reference canonical JSON of {seq, run_id, kind, v, at, payload}', () => {
    const sha = (t: string) => createHash('sha256').update(t, 'utf8').digest('hex');
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 40 }),
        fc.string({ minLength: 1 }),
        fc.string(),
        fc.integer({ min: 1, max: 5 }),
        fc.string(),
        fc.dictionary(fc.string(), fc.jsonValue()),
        (seq, run_id, kind, v, at, payload) => {
          const p = JSON.parse(JSON.stringify(payload)) as Record<string, unknown>;
          expect(digestEvent(seq, run_id, kind, v, at, p)).toBe(
            sha(canonicalJsonReference({ seq, run_id, kind, v, at, payload: p })),
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it('is the same on both of its paths (the whole wrapper stringified, or canonicalJson of the payload)', () => {
    const sha = (t: string) => createHash('sha256').update(t, 'utf8').digest('hex');
    const reference = (payload: unknown) =>
      sha(canonicalJsonReference({ seq: 7, run_id: 'r"1', kind: 'k', v: 2, at: 'é\u2028', payload }));
    const payloads: unknown[] = [
      { b: 1, a: [{ d: null, c: 'x' }] }, // unsorted keys: sorted copies, one stringify
      { '1': 'a', b: { '0': true } }, // integer-like keys: canonicalJson writes it
      { at: new Date(0) }, // toJSON: canonicalJson writes it
      { x: undefined, y: 1e21, z: -0 },
      'text',
      12.5,
      null,
      [3, { b: 1, a: 2 }],
    ];
    for (const payload of payloads)
      expect(digestEvent(7, 'r"1', 'k', 2, 'é\u2028', payload)).toBe(reference(payload));
    expect(() => digestEvent(7, 'r', 'k', 2, 'a', { x: NaN })).toThrow(/not allowed/);
    expect(() => digestEvent(7, 'r', 'k', 2, 'a', undefined)).toThrow(/no JSON form/);
  });
});
