import * as z from '../zod';
import { HASH_RE } from './chain';
import { MAX_SEQ } from './limits';

export const KIND_RE = /^[a-z][a-z0-9_]{0,63}$/;

/** One event as stored and as written to a JSONL line. */
export const EnvelopeSchema = z.object({
  seq: z.int().check(z.positive(), z.maximum(MAX_SEQ)),
  run_id: z.string().check(z.minLength(1), z.maxLength(200)),
  kind: z.string().check(z.regex(KIND_RE, 'kind must be a snake_case name')),
  v: z.int().check(z.positive()),
  at: z.string().check(z.minLength(1)),
  payload: z.record(z.string(), z.unknown()),
  prev: z.string().check(z.regex(HASH_RE, 'prev must be 64 hex digits')),
  hash: z.string().check(z.regex(HASH_RE, 'hash must be 64 hex digits')),
  /** Present when the payload was redacted: the digest of the original, which the chain links. */
  digest: z.optional(z.string().check(z.regex(HASH_RE))),
});

export type LedgerEvent = z.infer<typeof EnvelopeSchema>;

/** What a writer hands to the ledger: seq, prev, hash and usually `at` are the ledger's to assign. */
export interface NewEvent {
  kind: string;
  payload: Record<string, unknown>;
  v?: number;
  at?: string;
}

/** A copy of the envelope's fields in line order (digest last, when carried), nothing else. */
export function envelopeFields(e: LedgerEvent): LedgerEvent {
  const o: LedgerEvent = {
    seq: e.seq,
    run_id: e.run_id,
    kind: e.kind,
    v: e.v,
    at: e.at,
    payload: e.payload,
    prev: e.prev,
    hash: e.hash,
  };
  if (e.digest !== undefined) o.digest = e.digest;
  return o;
}

/** The JSONL line of an event: key order fixed so mirrors are byte-stable. */
export function toJsonLine(e: LedgerEvent): string {
  return JSON.stringify(envelopeFields(e));
}

/**
 * toJsonLine of an event without a carried digest, built around its payload's JSON text already in
 * hand (appends, mirrors and exports: no second serialisation of the payload). `runIdJson` is
 * JSON.stringify(run_id), which a caller writing many lines of one run makes once.
 */
export function jsonLineAround(
  seq: number,
  runIdJson: string,
  kind: string,
  v: number,
  at: string,
  payloadJson: string,
  prev: string,
  hash: string,
): string {
  return `{"seq":${seq},"run_id":${runIdJson},"kind":${JSON.stringify(kind)},"v":${v},"at":${JSON.stringify(at)},"payload":${payloadJson},"prev":"${prev}","hash":"${hash}"}`;
}
