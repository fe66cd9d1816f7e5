/**
 * Narrowing what an untrusted JSON value holds: the one set every format reader, the gateways and
 * the agents' transcript readers use, so they agree on what counts as an object, a string, a number.
 */
export type Obj = Record<string, unknown>;

/** A JSON object: not null, not an array. */
export const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);

/** A string, else null. */
export const str = (x: unknown): string | null => (typeof x === 'string' ? x : null);

/** A non-empty string, else null: for ids and names, where '' names nothing. */
export const nonEmpty = (x: unknown): string | null => (typeof x === 'string' && x !== '' ? x : null);

/** A finite number, else null. */
export const num = (x: unknown): number | null => (typeof x === 'number' && Number.isFinite(x) ? x : null);
