import canonicalize from 'canonicalize';

/**
 * RFC 8785 (JCS) canonical JSON. Every digest in ProofLoop is taken over this form, so two
 * implementations that agree on RFC 8785 agree on every hash.
 *
 * Hand-written for the hot path: the `canonicalize` library (the reference, kept below and
 * checked against this one on random JSON in test/unit/canonical.unit.spec.ts) measured 14.7 µs per
 * typical event here, this one under 1 µs, and digests are taken for every event appended,
 * imported or verified. Same rules: keys sorted by UTF-16 code units (the default sort), strings
 * and finite numbers as ECMAScript's JSON.stringify writes them, undefined members skipped.
 */
export function canonicalJson(value: unknown): string {
  const sorted = sortedForStringify(value);
  const text = sorted === UNSORTABLE ? write(value) : JSON.stringify(sorted);
  if (text === undefined) throw new TypeError('value has no JSON form (undefined or a function)');
  return text;
}

/**
 * The value as JSON.stringify must be given it to write its canonical JSON, also as a member of a
 * larger value (objects with their keys in canonical order, sharing what is in order already), or
 * `undefined` when only canonicalJson can write it (see sortedForStringify) or it has no JSON form.
 * Throws as canonicalJson does for a non-finite number.
 */
export function stringifiable(value: unknown): unknown {
  const t = typeof value;
  if (t !== 'object' && t !== 'string' && t !== 'number' && t !== 'boolean') return undefined;
  const sorted = sortedForStringify(value);
  return sorted === UNSORTABLE ? undefined : sorted;
}

/** A value whose key order JSON.stringify cannot be made to follow (see sortedForStringify). */
const UNSORTABLE = Symbol('unsortable');

const startsWithDigit = (k: string): boolean => {
  const c = k.charCodeAt(0);
  return c >= 48 && c <= 57;
};

/**
 * The value with every object's keys in canonical order, sharing what is already in order, for
 * the native JSON.stringify to write: it writes strings and numbers as RFC 8785 says, flat and
 * fast (measured 0.73 µs a typical payload against 0.80 µs for `write`, whose result is a rope of
 * small strings that costs again wherever it is flattened: hashed, stored, posted). Except where
 * stringify would not follow the order: non-finite numbers (it writes null; they are refused) and
 * objects with a key starting with a digit (integer-like keys are enumerated first, in numeric
 * order), which `write` handles.
 */
function sortedForStringify(v: unknown): unknown {
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new TypeError(`${v} is not allowed in canonical JSON`);
    return v;
  }
  if (v === null || typeof v !== 'object') return v;
  const withToJson = v as { toJSON?: unknown };
  if (typeof withToJson.toJSON === 'function') return UNSORTABLE;
  if (Array.isArray(v)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < v.length; i++) {
      const item: unknown = v[i];
      const s = sortedForStringify(item);
      if (s === UNSORTABLE) return UNSORTABLE;
      if (s !== item) (out ??= v.slice())[i] = s;
    }
    return out ?? v;
  }
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  let inOrder = true;
  let protoKey = false;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    if (startsWithDigit(k)) return UNSORTABLE;
    if (k === '__proto__') protoKey = true;
    if (i > 0 && keys[i - 1]! > k) inOrder = false;
  }
  // Copies are plain objects: V8 builds and stringifies those ~1.6x faster than null-prototype ones
  // (0.76 against 1.2 µs a typical payload). On a plain object `out.__proto__ = …` would set the
  // prototype, not a key: an object with a `__proto__` key (JSON.parse makes it an own key) that
  // needs a copy is left to `write`.
  if (!inOrder) {
    if (protoKey) return UNSORTABLE;
    sortKeys(keys);
  }
  let out: Record<string, unknown> | null = inOrder ? null : {};
  for (const k of keys) {
    const item = o[k];
    const s = sortedForStringify(item);
    if (s === UNSORTABLE) return UNSORTABLE;
    if (out) out[k] = s;
    else if (s !== item) {
      if (protoKey) return UNSORTABLE;
      out = {};
      for (const j of keys) {
        if (j === k) break;
        out[j] = o[j];
      }
      out[k] = s;
    }
  }
  return out ?? o;
}

/**
 * keys.sort() for an object's keys: the same order (UTF-16 code units; keys are distinct), by
 * insertion for the few keys of a typical payload. Array#sort allocated ~0.75 KB a payload here
 * (sampling heap profile of a parse worker: the most of any function), which the worker's small
 * young generation then collects.
 */
function sortKeys(keys: string[]): void {
  if (keys.length > 16) {
    keys.sort();
    return;
  }
  for (let i = 1; i < keys.length; i++) {
    const k = keys[i]!;
    let j = i - 1;
    while (j >= 0 && keys[j]! > k) {
      keys[j + 1] = keys[j]!;
      j -= 1;
    }
    keys[j + 1] = k;
  }
}

function write(v: unknown): string | undefined {
  switch (typeof v) {
    case 'string':
      return JSON.stringify(v);
    case 'number':
      if (!Number.isFinite(v)) throw new TypeError(`${v} is not allowed in canonical JSON`);
      return JSON.stringify(v);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'object': {
      if (v === null) return 'null';
      const withToJson = v as { toJSON?: unknown };
      if (typeof withToJson.toJSON === 'function') return write((withToJson.toJSON as () => unknown)());
      if (Array.isArray(v)) {
        let out = '[';
        for (let i = 0; i < v.length; i++) {
          if (i > 0) out += ',';
          out += write(v[i]) ?? 'null';
        }
        return out + ']';
      }
      const o = v as Record<string, unknown>;
      const keys = Object.keys(o).sort();
      let out = '{';
      let first = true;
      for (const k of keys) {
        const item = write(o[k]);
        if (item === undefined) continue;
        if (!first) out += ',';
        first = false;
        out += JSON.stringify(k) + ':' + item;
      }
      return out + '}';
    }
    case 'bigint':
      throw new TypeError('BigInt is not allowed in canonical JSON');
    default:
      return undefined;
  }
}

/** The reference implementation (the maintained `canonicalize` package), for tests and checks. */
export function canonicalJsonReference(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError('value has no JSON form (undefined or a function)');
  return text;
}
