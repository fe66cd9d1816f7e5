/**
 * An empty object without a prototype, for state keyed by names that come from files (run ids,
 * aggregate ids, kinds, payload keys): on a `{}`, `o['__proto__']`, `o.constructor` or
 * `o.toString` read Object.prototype's members before anything was stored under them, and
 * `o['__proto__'] = x` sets the prototype instead of a key. A Map is the other safe choice; this is
 * for state that is serialised as JSON. Data handed on as plain objects (a run's state) is built
 * with Object.fromEntries, which defines own properties. The lint rule in eslint.config.js refuses
 * `{}` in their place.
 */
export function dict<T>(from?: Record<string, T> | null): Record<string, T> {
  const out = Object.create(null) as Record<string, T>;
  // JSON.parse makes own properties (a "__proto__" key included), so copying them is safe.
  if (from) for (const k of Object.keys(from)) out[k] = from[k]!;
  return out;
}
