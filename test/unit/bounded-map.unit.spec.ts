import { describe, expect, it } from 'vitest';
import { BoundedMap } from '../../electron/bounded-map';
import { RunMapState } from '../../electron/otlp/map-util';

describe('BoundedMap', () => {
  it('forgets its oldest key first once full, telling of each, and keeps the newest', () => {
    const gone: [string, number][] = [];
    const m = new BoundedMap<string, number>(3, (k, v) => gone.push([k, v]));
    for (const [i, k] of ['a', 'b', 'c', 'd', 'e'].entries()) m.set(k, i);
    expect(m.size).toBe(3);
    expect(gone).toEqual([
      ['a', 0],
      ['b', 1],
    ]);
    expect(['a', 'b', 'c', 'd', 'e'].map((k) => m.get(k))).toEqual([undefined, undefined, 2, 3, 4]);
  });

  it('a key set again keeps its place in the order (its first insertion), with the new value', () => {
    const m = new BoundedMap<string, number>(2);
    m.set('a', 1).set('b', 2).set('a', 10);
    m.set('c', 3); // 'a' is still the oldest
    expect([m.has('a'), m.get('b'), m.get('c'), m.size]).toEqual([false, 2, 3, 2]);
  });

  it('holds exactly the last `max` distinct keys over many wraps of its ring, and starts over after clear', () => {
    const m = new BoundedMap<number, number>(1000);
    for (let i = 0; i < 25_500; i++) m.set(i, i * 2);
    expect(m.size).toBe(1000);
    expect(m.has(24_499)).toBe(false);
    for (let i = 24_500; i < 25_500; i++) expect(m.get(i)).toBe(i * 2);
    m.clear();
    expect(m.size).toBe(0);
    for (let i = 0; i < 1500; i++) m.set(i, i);
    expect([m.size, m.has(499), m.has(500)]).toEqual([1000, false, true]);
  });
});

describe('token bookkeeping of a long run', () => {
  it('forgets the oldest counted spans past 20,000, and the parent links that pointed at them', () => {
    const st = new RunMapState();
    for (let i = 0; i < 20_010; i++) st.noteCounted(`s${i}`, `p${i}`);
    expect(st.counted.size).toBe(20_000);
    expect([st.counted.has('s9'), st.counted.has('s10')]).toEqual([false, true]);
    // The link from a forgotten span's parent goes with it; one re-pointed since is kept.
    expect(st.countedUnder.has('p0')).toBe(false);
    st.noteCounted('s20010', 'p15');
    for (let i = 20_011; i < 20_030; i++) st.noteCounted(`s${i}`, null);
    expect(st.counted.has('s15')).toBe(false);
    expect(st.countedUnder.get('p15')).toBe('s20010');
  });
});
