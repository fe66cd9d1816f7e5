import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { durationMs, isoOf } from '../../electron/otlp/map-util';

// The receiver reads 64-bit nanosecond times from their decimal digits without BigInt; these are
// the BigInt forms they replaced, for every length of digits a uint64 has.
const isoRef = (ns: string) => {
  if (ns === '0' || ns === '') return undefined;
  const d = new Date(Number(BigInt(ns) / 1_000_000n));
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
};
const durationRef = (a: string, b: string) => {
  const d = Number(BigInt(b) - BigInt(a)) / 1e6;
  return d > 0 && Number.isFinite(d) ? Math.round(d * 1000) / 1000 : 0;
};
const ns = fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }).map(String);

describe('OTLP nanosecond times', () => {
  it('as ISO times, as BigInt division gives them', () => {
    fc.assert(
      fc.property(ns, (t) => {
        expect(isoOf(t)).toBe(isoRef(t));
      }),
      { numRuns: 5000 },
    );
    for (const t of ['0', '1', '999999', '1000000', '1700000000000123456', '18446744073709551615'])
      expect(isoOf(t)).toBe(isoRef(t));
  });

  it('as ISO times for runs of nearby times (the second written last is reused)', () => {
    const near = fc.tuple(
      fc.bigInt({ min: 0n, max: 8_640_000_000_000_000_000_000n }),
      fc.array(fc.bigInt({ min: -3_000_000_000n, max: 3_000_000_000n }), { minLength: 1, maxLength: 20 }),
    );
    fc.assert(
      fc.property(near, ([t, steps]) => {
        for (const d of steps) {
          const ns = String(t + d < 0n ? 0n : t + d);
          expect(isoOf(ns)).toBe(isoRef(ns));
        }
      }),
      { numRuns: 2000 },
    );
    // The last millisecond a Date holds, and the one after it.
    expect(isoOf('8640000000000000999999')).toBe('+275760-09-13T00:00:00.000Z');
    expect(isoOf('8640000000000001000000')).toBeUndefined();
  });

  it('as durations in ms, as BigInt subtraction gives them', () => {
    const later = fc
      .tuple(ns, fc.bigInt({ min: -(10n ** 15n), max: 10n ** 15n }))
      .map(([a, d]) => [a, String(BigInt(a) + d < 0n ? 0n : BigInt(a) + d)] as const);
    fc.assert(
      fc.property(fc.oneof(later, fc.tuple(ns, ns)), ([a, b]) => {
        expect(durationMs(a, b)).toBe(durationRef(a, b));
      }),
      { numRuns: 5000 },
    );
  });
});
