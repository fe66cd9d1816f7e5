import {
  canonicalJson,
  checkPayload,
  depthOverValue,
  KIND_RE,
  MAX_DEPTH,
  type NewEvent,
} from '../../shared/protocol';
import { redactCredentials } from '../../shared/redact';
import { ProofloopError } from '../../shared/result';

/**
 * What an appended item goes through before its seq and chain link are known, shared by the
 * ledger's own thread and the append helper (append-helper.ts), so that a batch gives the same
 * rows whichever thread prepared it.
 *
 * The order is: the item's shape, then its canonical JSON, then redaction and the schema check on
 * the payload as that JSON parses. Redacting and checking the JSON form (rather than the caller's
 * object) means exactly what is stored is what was scanned and checked: no Dates, no undefined
 * members, no key order of the caller's (credential placeholders are numbered in key order).
 */

export function checkKind(kind: string): void {
  if (typeof kind !== 'string' || !KIND_RE.test(kind))
    throw new ProofloopError('bad_args', `kind "${kind}" must be a snake_case name`);
}

/** The checks that need nothing but the item: a snake_case kind and an object payload. */
export function checkShape(item: NewEvent): void {
  checkKind(item.kind);
  const p = item.payload as unknown;
  if (p === null || typeof p !== 'object' || Array.isArray(p)) {
    throw new ProofloopError('bad_args', `payload of ${item.kind} must be a JSON object`);
  }
}

/**
 * The largest payload one event may carry, as canonical JSON. An event is a record, not a file:
 * whole outputs and file contents are artifacts (`<run>/artifacts/<sha256>`, as the runner stores
 * tool outputs), referenced from the event by digest with a bounded excerpt.
 */
export const MAX_PAYLOAD_BYTES = 1 << 20;

/** The payload's RFC 8785 text; a payload without one (a NaN, a cycle, a BigInt) is bad_args. */
export function canonicalPayload(item: NewEvent): string {
  // Important: before canonical JSON and the redactor, which recurse into the payload.
  if (depthOverValue(item.payload))
    throw new ProofloopError('bad_args', `payload of ${item.kind} nests deeper than ${MAX_DEPTH} levels`);
  let json: string;
  try {
    json = canonicalJson(item.payload);
  } catch (e) {
    throw new ProofloopError('bad_args', `payload of ${item.kind}: ${(e as Error).message}`);
  }
  // length counts UTF-16 units, at most 3 UTF-8 bytes each: byteLength only when it may be over.
  if (json.length * 3 > MAX_PAYLOAD_BYTES && Buffer.byteLength(json) > MAX_PAYLOAD_BYTES) {
    throw new ProofloopError(
      'too_large',
      `payload of ${item.kind} is ${Buffer.byteLength(json)} bytes of canonical JSON, over the ${MAX_PAYLOAD_BYTES}-byte limit of one event: ` +
        'store large content as an artifact and reference it by digest',
    );
  }
  return json;
}

/**
 * The payload as stored: credentials redacted (secrets never enter the ledger: this runs before
 * the digest is taken), checked against its kind's schema. `json` is the canonical text the
 * digest covers: `canonical` itself unless something was redacted.
 */
export function finishPayload(
  kind: string,
  v: number,
  canonical: string,
): { payload: Record<string, unknown>; json: string } {
  const r = redactCredentials(JSON.parse(canonical) as Record<string, unknown>);
  const checked = checkPayload(kind, v, r.value);
  if (!checked.ok) throw new ProofloopError('bad_args', checked.message);
  return { payload: r.value, json: r.hits > 0 ? canonicalJson(r.value) : canonical };
}
