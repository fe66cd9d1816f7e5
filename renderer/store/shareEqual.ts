/**
 * Returns `next` with every subtree that deep-equals the one at the same place in `prev` replaced
 * by `prev`'s object. States arrive as fresh JSON on every step; sharing what did not change lets
 * the memoised tree nodes of the state panel skip all but the changed branches.
 *
 * Keys come from files (`__proto__`, `constructor` are valid keys): `prev`'s are read as own
 * properties only and the copy is built with Object.fromEntries, which defines keys rather than
 * assigning them. Below MAX_DEPTH the subtree is handed on unshared, so the recursion's depth is
 * bounded whatever the input nests (a deep subtree only re-renders whole).
 */
const MAX_DEPTH = 64;

export function shareEqual<T>(prev: unknown, next: T, depth = 0): T {
  if (prev === next) return next;
  if (prev === null || next === null || typeof prev !== 'object' || typeof next !== 'object') return next;
  if (Array.isArray(prev) !== Array.isArray(next) || depth >= MAX_DEPTH) return next;
  if (Array.isArray(next)) {
    const p = prev as unknown[];
    const out = next.map((v, i) => shareEqual(p[i], v, depth + 1));
    return (out.length === p.length && out.every((v, i) => v === p[i]) ? p : out) as T;
  }
  const p = prev as Record<string, unknown>;
  const n = next as Record<string, unknown>;
  const keys = Object.keys(n);
  let same = keys.length === Object.keys(p).length;
  const entries = keys.map((k): [string, unknown] => {
    const before = Object.hasOwn(p, k) ? p[k] : undefined;
    const v = shareEqual(before, n[k], depth + 1);
    if (v !== before || !Object.hasOwn(p, k)) same = false;
    return [k, v];
  });
  return (same ? p : Object.fromEntries(entries)) as T;
}
