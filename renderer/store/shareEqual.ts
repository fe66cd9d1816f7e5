/**
 * Returns `next` with every subtree that deep-equals the one at the same place in `prev` replaced
 * by `prev`'s object. States arrive as fresh JSON on every step; sharing what did not change lets
 * the memoised tree nodes of the state panel skip all but the changed branches.
 */
export function shareEqual<T>(prev: unknown, next: T): T {
  if (prev === next) return next;
  if (prev === null || next === null || typeof prev !== 'object' || typeof next !== 'object') return next;
  if (Array.isArray(prev) !== Array.isArray(next)) return next;
  if (Array.isArray(next)) {
    const p = prev as unknown[];
    const out = next.map((v, i) => shareEqual(p[i], v));
    return (out.length === p.length && out.every((v, i) => v === p[i]) ? p : out) as T;
  }
  const p = prev as Record<string, unknown>;
  const n = next as Record<string, unknown>;
  const keys = Object.keys(n);
  let same = keys.length === Object.keys(p).length;
  const out: Record<string, unknown> = {};
  for (const k of keys) {
    out[k] = shareEqual(p[k], n[k]);
    if (out[k] !== p[k]) same = false;
  }
  return (same ? p : out) as T;
}
