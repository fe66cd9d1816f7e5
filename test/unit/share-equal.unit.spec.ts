import { describe, expect, it } from 'vitest';
import { shareEqual } from '../../renderer/store/shareEqual.js';

describe('shareEqual (the state panel keeps unchanged subtrees)', () => {
  it('hands back the previous object for subtrees that did not change, a new one where one did', () => {
    const prev = { a: { x: 1 }, b: { y: [1, 2] } };
    const next = shareEqual(prev, { a: { x: 1 }, b: { y: [1, 3] } });
    expect(next.a).toBe(prev.a);
    expect(next.b).not.toBe(prev.b);
    expect(next).toEqual({ a: { x: 1 }, b: { y: [1, 3] } });
  });

  it('keeps keys named like Object.prototype members as keys, never as the prototype', () => {
    const fresh = () =>
      JSON.parse('{"__proto__":{"polluted":true},"constructor":1,"toString":"s","hasOwnProperty":null}');
    const prev = JSON.parse('{"valueOf":2}');
    const next = shareEqual(prev, fresh());
    expect(Object.keys(next)).toEqual(['__proto__', 'constructor', 'toString', 'hasOwnProperty']);
    expect(Object.getPrototypeOf(next)).toBe(Object.prototype);
    expect((next as { polluted?: boolean }).polluted).toBeUndefined();
    expect(Object.getOwnPropertyDescriptor(next, '__proto__')?.value).toEqual({ polluted: true });
    // The same state again is shared whole, __proto__ key included.
    expect(shareEqual(next, fresh())).toBe(next);
  });

  it('a key missing before is a change even when its new value is undefined-like', () => {
    const prev = { a: 1 };
    const next = shareEqual(prev, { a: 1, constructor: undefined } as unknown as { a: number });
    expect(next).not.toBe(prev);
  });

  it('does not recurse as deep as the input nests', () => {
    const deep = (n: number) => {
      let v: unknown = 0;
      for (let i = 0; i < n; i++) v = { v };
      return v;
    };
    // 100,000 levels would overflow the stack if each level were a call.
    const out = shareEqual(deep(100_000), deep(100_000));
    expect(typeof out).toBe('object');
  });
});
