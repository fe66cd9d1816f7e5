import { describe, expect, it } from 'vitest';
import { byText, count } from '../../renderer/ui/numbers';

describe('count (thousands grouped without ICU)', () => {
  it('groups as en-US toLocaleString does, for the counts the page shows', () => {
    for (const n of [0, 7, 999, 1000, 1234, 99_999, 100_000, 1_234_567, 10_000_000_000, -1234, -999])
      expect(count(n), String(n)).toBe(n.toLocaleString('en-US'));
  });
  it('drops a fraction and leaves non-finite numbers readable', () => {
    expect(count(1234.9)).toBe('1,234');
    expect(count(Number.NaN)).toBe('NaN');
    expect(count(Number.POSITIVE_INFINITY)).toBe('Infinity');
  });
});

describe('byText', () => {
  it('orders ISO times as times, and is a consistent comparator', () => {
    const times = ['2026-12-03T10:00:00.500Z', '2026-12-03T09:59:59Z', '2025-01-01T00:00:00Z'];
    expect([...times].sort(byText)).toEqual([times[2], times[1], times[0]]);
    expect(byText('a', 'a')).toBe(0);
    expect(byText('a', 'b')).toBe(-byText('b', 'a'));
  });
});
