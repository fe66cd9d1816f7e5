import { describe, expect, it } from 'vitest';
import { median, ratioInterval } from '../../bench/ratio';
import { mulberry32 } from '../../shared/prng';

describe('the peer bench ratio and its interval', () => {
  it('takes the lower middle of an even count', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2);
    expect(median([])).toBeNull();
  });

  it('holds the ratio when rounds agree, narrowly, and is wider when they swing', () => {
    const r = mulberry32(7);
    const noisy = (base: number, swing: number) =>
      Array.from({ length: 40 }, () => base * (1 + swing * (r() * 2 - 1)));
    const steady = ratioInterval(noisy(700, 0.01), noisy(800, 0.01));
    expect(steady[0]).toBeLessThanOrEqual(0.875);
    expect(steady[1]).toBeGreaterThanOrEqual(0.875);
    expect(steady[1] - steady[0]).toBeLessThan(0.03);
    const swinging = ratioInterval(noisy(700, 0.3), noisy(800, 0.3));
    expect(swinging[0]).toBeLessThan(swinging[1]);
    expect(swinging[1] - swinging[0]).toBeGreaterThan(steady[1] - steady[0]);
  });

  it('gives the same interval for the same rounds', () => {
    const a = [610, 640, 700, 720, 810];
    const b = [600, 690, 705, 760, 900];
    expect(ratioInterval(a, b)).toEqual(ratioInterval(a, b));
  });
});
