import canonicalize from 'canonicalize';

/**
 * RFC 8785 (JCS) canonical JSON. Every digest in ProofLoop is taken over this form, so two
 * implementations that agree on RFC 8785 agree on every hash.
 */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError('value has no JSON form (undefined or a function)');
  return text;
}
