import crypto from 'node:crypto';
import type { Sha256Hex } from '../../shared/protocol';

type HashFn = (algorithm: string, data: string, encoding: 'hex') => string;
// crypto.hash (Node ≥ 20.12) is a one-shot without a Hash object: about twice as fast for short inputs.
const oneShot = (crypto as unknown as { hash?: HashFn }).hash;

export const fastSha256: Sha256Hex = oneShot
  ? (s) => oneShot('sha256', s, 'hex')
  : (s) => crypto.createHash('sha256').update(s, 'utf8').digest('hex');

/**
 * RFC 8785 canonical JSON of a value that came out of JSON.parse (so: no undefined, functions,
 * toJSON or non-finite numbers). Same output as shared/protocol's canonicalJson, without its
 * per-value closures; test/integration/bundle.int.spec.ts checks the two agree.
 */
export function canonicalParsed(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) {
    let s = '[';
    for (let i = 0; i < v.length; i++) s += (i ? ',' : '') + canonicalParsed(v[i]);
    return s + ']';
  }
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o).sort();
  let s = '{';
  let first = true;
  for (const k of keys) {
    const x = o[k];
    if (x === undefined) continue;
    s += (first ? '' : ',') + JSON.stringify(k) + ':' + canonicalParsed(x);
    first = false;
  }
  return s + '}';
}

/** digest = sha256(JCS({seq, run_id, kind, v, at, payload})), keys already in JCS order. */
export function fastEventDigest(e: {
  seq: number;
  run_id: string;
  kind: string;
  v: number;
  at: string;
  payload: unknown;
}): string {
  return fastSha256(
    `{"at":${JSON.stringify(e.at)},"kind":${JSON.stringify(e.kind)},"payload":${canonicalParsed(e.payload)},` +
      `"run_id":${JSON.stringify(e.run_id)},"seq":${canonicalParsed(e.seq)},"v":${canonicalParsed(e.v)}}`,
  );
}
