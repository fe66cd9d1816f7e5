/**
 * Counts and orderings without ICU: a page's first `toLocaleString()` or `localeCompare()` loads
 * ICU's number or collation data, 10–20 ms each on this machine's Chromium, and the runs list made
 * both while it drew its first rows. What the list orders are ISO times (code-unit order is time
 * order), statuses and ids (code-unit order: capitals before small letters).
 */

/** A whole number with its thousands grouped: 1234567 → "1,234,567". */
export function count(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const neg = n < 0;
  const digits = String(Math.trunc(Math.abs(n)));
  let out = '';
  for (let i = digits.length; i > 0; i -= 3)
    out = digits.slice(Math.max(0, i - 3), i) + (out ? ',' + out : '');
  return (neg ? '-' : '') + out;
}

/** Code-unit order of two strings (ISO times order as times). */
export const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
