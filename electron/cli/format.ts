import { InvalidArgumentError } from 'commander';

/** Small helpers for human (terminal) output. */
export function table(
  rows: readonly (readonly (string | number | null | undefined)[])[],
  header: readonly string[],
): string {
  const all = [header, ...rows].map((r) => r.map((c) => (c === null || c === undefined ? '' : String(c))));
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  return all
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

export function oneLine(value: unknown, max = 100): string {
  const s = typeof value === 'string' ? value : JSON.stringify(value);
  const flat = (s ?? '').replace(/\s+/g, ' ');
  return flat.length > max ? flat.slice(0, max - 1) + '…' : flat;
}

/** A commander option parser for whole numbers from `min` up, with an error naming the option. */
export function intOption(name: string, min = 0) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min)
      throw new InvalidArgumentError(`${name} must be a whole number ≥ ${min}`);
    return n;
  };
}
