import {
  CURRENT_V,
  canonicalJson,
  checkPayload,
  depthOverValue,
  KIND_RE,
  MAX_DEPTH,
  type NewEvent,
} from '../../shared/protocol';
import { credentialsRedactor, redactCredentials, type Redactor } from '../../shared/redact';
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
  checkSize(item.kind, json);
  return json;
}

function checkSize(kind: string, json: string): void {
  // length counts UTF-16 units, at most 3 UTF-8 bytes each: byteLength only when it may be over.
  if (json.length * 3 > MAX_PAYLOAD_BYTES && Buffer.byteLength(json) > MAX_PAYLOAD_BYTES) {
    throw new ProofloopError(
      'too_large',
      `payload of ${kind} is ${Buffer.byteLength(json)} bytes of canonical JSON, over the ${MAX_PAYLOAD_BYTES}-byte limit of one event: ` +
        'store large content as an artifact and reference it by digest',
    );
  }
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
  return finishValue(kind, v, JSON.parse(canonical) as Record<string, unknown>, canonical);
}

/**
 * finishPayload of the value `canonical` parses to; `checked`: see prepareItem. `unredactable`:
 * the caller found that redaction would replace nothing in it (Redactor.mayRedactString and
 * mayRedactKey said so of each of its strings and keys), so the redaction walk is not taken.
 */
function finishValue(
  kind: string,
  v: number,
  value: Record<string, unknown>,
  canonical: string,
  checked = false,
  unredactable = false,
): { payload: Record<string, unknown>; json: string } {
  const r = unredactable ? { value, hits: 0 } : redactCredentials(value);
  if (!checked || r.hits > 0) {
    const c = checkPayload(kind, v, r.value);
    if (!c.ok) throw new ProofloopError('bad_args', c.message);
  }
  return { payload: r.value, json: r.hits > 0 ? canonicalJson(r.value) : canonical };
}

/**
 * An item as the ledger stores it (checkShape, canonicalPayload, then finishPayload): its
 * payload's canonical JSON, credentials redacted, checked against its kind's schema; throws as
 * those do. For producers that prepare items off the ledger's thread (the OTLP receiver's decode
 * thread), whose texts RunWriter.appendSerialized then takes as they are.
 *
 * A payload that is plain JSON already (see plainSorted) is redacted and checked as it is, in
 * canonical key order, instead of as its canonical text parses: the same value, so the same
 * placeholders and verdicts, without the parse (~10 µs an event of the receiver's 0.8 KB payloads).
 *
 * While it sorts, it asks the ledger's redactor of every string and key whether it may replace
 * anything there; when none may, the redaction walk is not taken (its result would be the value
 * itself): measured ~10% of the decode thread's time on the receiver's payloads, which hold no
 * credentials but keys such as `input_tokens`.
 *
 * `checked`: the producer has just checked this very payload against its kind's schema
 * (checkPayload with the same kind and v, as the OTLP mapping does to keep a refused item as an
 * event of its own kind): the check is then repeated only when redaction changed the payload.
 */
export function prepareItem(item: NewEvent, opts: { checked?: boolean } = {}): string {
  checkShape(item);
  const v = item.v ?? CURRENT_V;
  redactor ??= credentialsRedactor();
  mayRedact = false;
  const sorted = plainSorted(item.payload, 1, undefined);
  if (sorted === NOT_PLAIN) return finishPayload(item.kind, v, canonicalPayload(item)).json;
  const canonical = JSON.stringify(sorted);
  checkSize(item.kind, canonical);
  const value = sorted as Record<string, unknown>;
  return finishValue(item.kind, v, value, canonical, opts.checked, !mayRedact).json;
}

let redactor: Redactor | null = null;
/** Whether the redactor may replace something in the value plainSorted walks (set as it walks). */
let mayRedact = false;

const NOT_PLAIN = Symbol('not plain');
/** Deeper payloads take the general path (canonicalPayload refuses past MAX_DEPTH). */
const PLAIN_DEPTH = 64;

/**
 * The value with its objects' keys in canonical order (what is in order already is shared), when
 * JSON.parse of its canonical text would give that very value back: strings, booleans, finite
 * numbers but -0, null, arrays without holes, objects of Object's prototype whose keys neither start
 * with a digit (enumerated first whatever the order) nor are `__proto__`. Anything else (undefined,
 * functions, Dates and toJSON, Maps, …): NOT_PLAIN.
 */
function plainSorted(v: unknown, depth: number, key: string | undefined): unknown {
  switch (typeof v) {
    case 'string':
      if (!mayRedact && redactor!.mayRedactString(v, key)) mayRedact = true;
      return v;
    case 'boolean':
      return v;
    case 'number':
      return Number.isFinite(v) && !Object.is(v, -0) ? v : NOT_PLAIN;
    case 'object':
      break;
    default:
      return NOT_PLAIN;
  }
  if (v === null) return v;
  if (depth >= PLAIN_DEPTH) return NOT_PLAIN;
  if (Array.isArray(v)) {
    if (Object.getPrototypeOf(v) !== Array.prototype) return NOT_PLAIN;
    let out: unknown[] | null = null;
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      // An array's items are redacted under its key, as the redactor walks them.
      const s = plainSorted(x, depth + 1, key);
      if (s === NOT_PLAIN) return NOT_PLAIN;
      if (s !== x) (out ??= v.slice())[i] = s;
    }
    return out ?? v;
  }
  if (Object.getPrototypeOf(v) !== Object.prototype) return NOT_PLAIN;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  let inOrder = true;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const c = k.charCodeAt(0);
    if ((c >= 48 && c <= 57) || k === '__proto__') return NOT_PLAIN;
    if (i > 0 && keys[i - 1]! > k) inOrder = false;
    if (!mayRedact && redactor!.mayRedactKey(k)) mayRedact = true;
  }
  if (!inOrder) keys.sort();
  let out: Record<string, unknown> | null = inOrder ? null : {};
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const x = o[k];
    const s = plainSorted(x, depth + 1, k);
    if (s === NOT_PLAIN) return NOT_PLAIN;
    if (out) out[k] = s;
    else if (s !== x) {
      out = {};
      for (let j = 0; j < i; j++) out[keys[j]!] = o[keys[j]!];
      out[k] = s;
    }
  }
  return out ?? o;
}
