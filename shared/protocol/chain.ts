import { canonicalJson, stringifiable } from './canonical';

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
  return digestParts(e.seq, e.run_id, e.kind, e.v, e.at, e.payload, sha256);
}

/**
 * The same digest from its parts, without building the wrapper object (this runs for every event
 * appended, imported, exported and verified): the wrapper's keys are written in their JCS order
 * (at, kind, payload, run_id, seq, v) around the payload's canonical JSON. A unit test checks it
 * against the reference library on random events.
 */
export function digestParts(
  seq: number,
  runId: string,
  kind: string,
  v: number,
  at: string,
  payload: unknown,
  sha256: Sha256Hex,
): string {
  // The whole wrapper in one JSON.stringify when it can write it canonically (its keys are in JCS
  // order already): one flat string, measured faster to build and hash than the pieces joined.
  const sorted = stringifiable(payload);
  if (
    sorted !== undefined &&
    typeof runId === 'string' &&
    typeof kind === 'string' &&
    typeof at === 'string' &&
    Number.isFinite(seq) &&
    Number.isFinite(v)
  )
    return sha256(JSON.stringify({ at, kind, payload: sorted, run_id: runId, seq, v }));
  return digestCanonical(seq, runId, kind, v, at, canonicalJson(payload), sha256);
}

/**
 * The canonical JSON of an event's digested fields around its payload, which goes between the two
 * (`at` and `kind` sort before `payload`, `run_id`, `seq` and `v` after): the one place the digest's
 * envelope is written, for a payload given as text here and as bytes in electron/crypto.ts.
 */
export function digestEnvelope(
  seq: number,
  runId: string,
  kind: string,
  v: number,
  at: string,
): [before: string, after: string] {
  return [
    '{"at":' + JSON.stringify(at) + ',"kind":' + JSON.stringify(kind) + ',"payload":',
    ',"run_id":' + runIdJson(runId) + ',"seq":' + canonicalNumber(seq) + ',"v":' + canonicalNumber(v) + '}',
  ];
}

/**
 * A number's canonical JSON: for a finite number, String() writes what JSON.stringify writes (both
 * are ECMAScript's Number::toString; -0 is "0"), without canonicalJson's walk (~0.1 µs each, twice
 * an event).
 */
function canonicalNumber(n: number): string {
  if (typeof n !== 'number') return canonicalJson(n);
  if (!Number.isFinite(n)) throw new TypeError(`${n} is not allowed in canonical JSON`);
  return String(n);
}

/** The run id's JSON string, kept for the next event: nearly every event digested in a row is of one run. */
let lastRunId = '';
let lastRunIdJson = '""';
function runIdJson(runId: string): string {
  if (typeof runId !== 'string') return JSON.stringify(runId);
  if (runId !== lastRunId) {
    lastRunIdJson = JSON.stringify(runId);
    lastRunId = runId;
  }
  return lastRunIdJson;
}

/** digestParts for a payload whose canonical JSON is already in hand (the ledger stores that text). */
export function digestCanonical(
  seq: number,
  runId: string,
  kind: string,
  v: number,
  at: string,
  payloadCanonical: string,
  sha256: Sha256Hex,
): string {
  const [before, after] = digestEnvelope(seq, runId, kind, v, at);
  return sha256(before + payloadCanonical + after);
}

/**
 * hash = sha256(prev + digest). The link depends on the digest, not on the content, so a redacted
 * event that carries its original digest still links.
 */
export function chainLink(prev: string, digest: string, sha256: Sha256Hex): string {
  return sha256(prev + digest);
}
