import { mulberry32 } from '../shared/prng';

/** The median (the lower middle of an even count); null of none. */
export const median = (xs: number[]): number | null =>
  [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] ?? null;

/**
 * A 95% interval of the ratio of the medians of `a` and `b`: one round of either viewer swings by
 * ±15% on this shared machine, and a single ratio of medians says nothing of that. Drawn with a
 * fixed seed, so the same rounds give the same interval.
 */
export function ratioInterval(a: number[], b: number[], draws = 2000): [number, number] {
  const r = mulberry32(2029);
  const resample = (xs: number[]) => xs.map(() => xs[Math.floor(r() * xs.length)]!);
  const ratios: number[] = [];
  for (let i = 0; i < draws; i++) ratios.push(median(resample(a))! / median(resample(b))!);
  ratios.sort((x, y) => x - y);
  return [ratios[Math.floor(draws * 0.025)]!, ratios[Math.ceil(draws * 0.975) - 1]!];
}
