import { canonicalJson } from './canonical';

/** SHA-256 of a UTF-8 string as lowercase hex. Injected: Node's crypto in main, WebCrypto-free JS elsewhere. */
export type Sha256Hex = (input: string) => string;

export const ZERO_HASH = '0'.repeat(64);
export const HASH_RE = /^[0-9a-f]{64}$/;

/** The fields a digest covers: the envelope without its chain fields. */
export interface DigestFields {
  seq: number;
  run_id: string;
  kind: string;
  v: number;
  at: string;
  payload: unknown;
}

/** digest = sha256(JCS({seq, run_id, kind, v, at, payload})) */
export function eventDigest(e: DigestFields, sha256: Sha256Hex): string {
  return sha256(
    canonicalJson({ seq: e.seq, run_id: e.run_id, kind: e.kind, v: e.v, at: e.at, payload: e.payload }),
  );
}

/**
 * hash = sha256(prev + digest). The link depends on the digest, not on the content, so a redacted
 * event that carries its original digest still links.
 */
export function chainLink(prev: string, digest: string, sha256: Sha256Hex): string {
  return sha256(prev + digest);
}
