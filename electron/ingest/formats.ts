import {
  HASH_RE,
  KIND_RE,
  MAX_SEQ,
  ZERO_HASH,
  canonicalJson,
  checkEvent,
  checkPayload,
} from '../../shared/protocol';
import { redactCredentials } from '../../shared/redact';
import { digestEventCanonical, linkHash as link } from '../crypto';

/**
 * The three line formats the importer reads, told apart line by line:
 * - `proofloop`: ProofLoop's own envelope `{seq, run_id, kind, v, at, payload, prev, hash[, digest]}`.
 *   Chained: the chain is checked, never recomputed.
 * - `seed000` (seed article 000): `{seq, run_id, kind, at, payload}` without v/prev/hash. Read as an
 *   unchained run: `v` defaults to 1, digest and chain are computed on import.
 * - `seed004` (seed article 004): `{event_id, event_type, aggregate_id, payload, timestamp, version}`.
 *   One run per aggregate_id, seq by file order per aggregate (assigned by the sequencer), unchained.
 *
 * Mapping to protocol v1 (the schema's required fields are filled from what the line has, so that a
 * valid seed file is not reported as invalid; the original type and id are kept in `_source`):
 *   seed004 event_type   kind             filled when absent
 *   agent_started     →  run_started      task_id ← aggregate_id, goal ← task ?? '', agent ← {name: model ?? 'unknown'}
 *   tool_invoked      →  tool_invoked     call_id ← event_id, tool ← 'unknown', args ← {}
 *   tool_result       →  tool_returned    call_id ← event_id, status ← 'ok', duration_ms ← 0
 *   model_response    →  model_responded  content ← ''
 *   context_updated   →  context_updated  op ← 'updated'
 *   agent_completed   →  run_completed    outcome ← 'completed'
 *   agent_failed      →  run_failed       reason ← error ?? 'unknown'
 *   anything else     →  the same name (an unknown kind: kept and shown)
 *   and payload._source = {event_type, event_id, version}; `at` ← timestamp; v ← 1.
 *   seed000 kind        filled when absent
 *   run_started      →  task_id ← run_id, goal ← '', agent ← {name: 'unknown'}
 *   model_proposed   →  call_id ← 'seq-<n>', tool ← 'unknown', args ← the other payload fields
 *                       (seed 000 writes {tool, path}: args = {path})
 *   tool_invoked     →  same as model_proposed
 * The digest covers the converted payload, which is what the ledger stores and verifies.
 */
export type Format = 'proofloop' | 'seed000' | 'seed004';

export interface ParsedEvent {
  t: 'ev';
  fmt: Format;
  /** The run the line belongs to as the file names it: run_id, or aggregate_id for seed004. */
  src: string;
  /** 0 for seed004 until the sequencer numbers it. */
  seq: number;
  kind: string;
  v: number;
  at: string;
  /** What is stored: the payload after credential redaction. */
  payload: Record<string, unknown>;
  json: string;
  /** seed004 only: the unredacted converted payload, digested once the seq is known. */
  orig: Record<string, unknown> | null;
  /**
   * Over the unredacted event; null for seed004 until sequenced, and for an unredacted event that
   * came back from a parse worker (the ledger stores a digest only beside a redacted payload).
   */
  digest: string | null;
  redacted: boolean;
  /** proofloop only: the carried chain fields and whether hash = sha256(prev + digest). */
  prev: string | null;
  hash: string | null;
  hashOk: boolean;
}

export interface ParsedBad {
  t: 'bad';
  code: 'broken_json' | 'invalid_event';
  message: string;
  seq: number | null;
  src: string | null;
}

export type Parsed = ParsedEvent | ParsedBad;

type Obj = Record<string, unknown>;

const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);
const posInt = (x: unknown): x is number => typeof x === 'number' && Number.isSafeInteger(x) && x > 0;

/**
 * The hash of the last line whose hash was checked: nearly every line's prev is the hash of the
 * line before, so its check is one compare instead of a regular expression (~0.3 µs a line).
 */
let lastHash = ZERO_HASH;
const isHash = (x: unknown): boolean => typeof x === 'string' && (x === lastHash || HASH_RE.test(x));

/**
 * A conservative copy of EnvelopeSchema: when it says yes, the schema says yes too. When it says
 * no, the schema is asked (for its message, and in case this check was stricter).
 */
function envelopeLooksValid(o: Obj, hashLinkedLater: boolean): boolean {
  const runId = o.run_id;
  const at = o.at;
  const kind = o.kind;
  return (
    posInt(o.seq) &&
    o.seq <= MAX_SEQ &&
    typeof runId === 'string' &&
    runId.length >= 1 &&
    runId.length <= 200 &&
    typeof kind === 'string' &&
    KIND_RE.test(kind) &&
    posInt(o.v) &&
    typeof at === 'string' &&
    at.length >= 1 &&
    isObj(o.payload) &&
    isHash(o.prev) &&
    (hashLinkedLater ? typeof o.hash === 'string' && o.hash.length === 64 : isHash(o.hash)) &&
    (o.digest === undefined || (typeof o.digest === 'string' && HASH_RE.test(o.digest)))
  );
}

/**
 * null when the envelope and (known kind) payload are valid, else the message. With
 * `hashLinkedLater` the 64-hex check of `hash` is left to the caller: a hash equal to the SHA-256
 * the caller computes for the link is hex by construction, so only one that does not link needs
 * the regex (~0.3 µs a line saved; see parseLine).
 */
function check(o: Obj, hashLinkedLater = false): string | null {
  if (envelopeLooksValid(o, hashLinkedLater)) {
    const p = checkPayload(o.kind as string, o.v as number, o.payload as Obj);
    return p.ok ? null : p.message;
  }
  const r = checkEvent(o);
  return r.ok ? null : r.message;
}

const SEED004_KINDS: Record<string, string> = {
  agent_started: 'run_started',
  tool_result: 'tool_returned',
  model_response: 'model_responded',
  agent_completed: 'run_completed',
  agent_failed: 'run_failed',
};

function fillSeed000(kind: string, runId: string, seq: number, p: Obj): Obj {
  switch (kind) {
    case 'run_started':
      if (typeof p.task_id === 'string' && typeof p.goal === 'string' && isObj(p.agent)) return p;
      return { ...p, task_id: p.task_id ?? runId, goal: p.goal ?? '', agent: p.agent ?? { name: 'unknown' } };
    case 'model_proposed':
    case 'tool_invoked': {
      if (typeof p.call_id === 'string' && typeof p.tool === 'string' && 'args' in p) return p;
      const { call_id: _c, tool: _t, tokens: _k, ...rest } = p;
      return {
        ...p,
        call_id: p.call_id ?? `seq-${seq}`,
        tool: p.tool ?? 'unknown',
        args: 'args' in p ? p.args : rest,
      };
    }
    default:
      return p;
  }
}

function fillSeed004(
  type: string,
  kind: string,
  aggregate: string,
  eventId: unknown,
  version: unknown,
  p: Obj,
): Obj {
  const out: Obj = { ...p };
  const callId = typeof eventId === 'string' && eventId ? eventId : 'unknown';
  switch (kind) {
    case 'run_started':
      out.task_id ??= aggregate;
      out.goal ??= typeof p.task === 'string' ? p.task : '';
      out.agent ??= { name: typeof p.model === 'string' ? p.model : 'unknown' };
      break;
    case 'tool_invoked':
      out.call_id ??= callId;
      out.tool ??= 'unknown';
      if (!('args' in out)) out.args = {};
      break;
    case 'tool_returned':
      out.call_id ??= callId;
      out.status ??= 'ok';
      out.duration_ms ??= 0;
      break;
    case 'model_responded':
      out.content ??= '';
      break;
    case 'context_updated':
      out.op ??= 'updated';
      break;
    case 'run_completed':
      out.outcome ??= 'completed';
      break;
    case 'run_failed':
      out.reason ??= typeof p.error === 'string' ? p.error : 'unknown';
      break;
  }
  out._source = { event_type: type, event_id: eventId ?? null, version: version ?? null };
  return out;
}

/**
 * The payload as stored: after credential redaction, as canonical JSON (RFC 8785), the very text
 * its digest covers when nothing was redacted, so the digest's serialisation is not done twice.
 */
function redact(payload: Obj, canonical: string | null): { payload: Obj; json: string; redacted: boolean } {
  const r = redactCredentials(payload);
  if (r.hits > 0) {
    const json = canonicalJson(r.value);
    return { payload: JSON.parse(json) as Obj, json, redacted: true };
  }
  return { payload, json: canonical ?? canonicalJson(payload), redacted: false };
}

const bad = (code: ParsedBad['code'], message: string, o?: Obj | null): ParsedBad => ({
  t: 'bad',
  code,
  message,
  seq: o && posInt(o.seq) ? o.seq : null,
  src:
    o && typeof o.run_id === 'string'
      ? o.run_id
      : o && typeof o.aggregate_id === 'string'
        ? o.aggregate_id
        : null,
});

export function detectFormat(o: Obj): Format {
  if ('event_type' in o || 'aggregate_id' in o) return 'seed004';
  if ('prev' in o || 'hash' in o) return 'proofloop';
  return 'seed000';
}

/** Parses, converts, validates, redacts and digests one line (its text, without the newline). */
export function parseLine(text: string): Parsed {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    return bad('broken_json', `not JSON: ${(e as Error).message}`);
  }
  if (!isObj(raw)) return bad('invalid_event', 'a line must be a JSON object');
  const fmt = detectFormat(raw);
  if (fmt === 'proofloop') {
    const msg = check(raw, true);
    if (msg !== null) return bad('invalid_event', msg, raw);
    const seq = raw.seq as number;
    const runId = raw.run_id as string;
    const kind = raw.kind as string;
    const v = raw.v as number;
    const at = raw.at as string;
    const orig = raw.payload as Obj;
    const carried = raw.digest as string | undefined;
    const canonical = canonicalJson(orig);
    const digest = carried ?? digestEventCanonical(seq, runId, kind, v, at, canonical);
    const prev = raw.prev as string;
    const hash = raw.hash as string;
    const hashOk = link(prev, digest) === hash;
    if (!hashOk && !HASH_RE.test(hash)) {
      const r = checkEvent(raw);
      return bad('invalid_event', r.ok ? 'hash must be 64 hex digits' : r.message, raw);
    }
    lastHash = hash;
    const r = redact(orig, canonical);
    return {
      t: 'ev',
      fmt,
      src: runId,
      seq,
      kind,
      v,
      at,
      payload: r.payload,
      json: r.json,
      orig: null,
      digest,
      redacted: r.redacted || carried !== undefined,
      prev,
      hash,
      hashOk,
    };
  }
  if (fmt === 'seed000') {
    const seq = raw.seq;
    const runId = raw.run_id;
    const kind = raw.kind;
    const payload = isObj(raw.payload)
      ? fillSeed000(String(kind), String(runId), posInt(seq) ? seq : 0, raw.payload)
      : raw.payload;
    const env: Obj = {
      seq,
      run_id: runId,
      kind,
      v: raw.v ?? 1,
      at: raw.at,
      payload,
      prev: ZERO_HASH,
      hash: ZERO_HASH,
    };
    const msg = check(env);
    if (msg !== null) return bad('invalid_event', msg, raw);
    const e = env as { seq: number; run_id: string; kind: string; v: number; at: string; payload: Obj };
    const canonical = canonicalJson(e.payload);
    const digest = digestEventCanonical(e.seq, e.run_id, e.kind, e.v, e.at, canonical);
    const r = redact(e.payload, canonical);
    return {
      t: 'ev',
      fmt,
      src: e.run_id,
      seq: e.seq,
      kind: e.kind,
      v: e.v,
      at: e.at,
      payload: r.payload,
      json: r.json,
      orig: null,
      digest,
      redacted: r.redacted,
      prev: null,
      hash: null,
      hashOk: true,
    };
  }
  // seed004
  const type = raw.event_type;
  const aggregate = raw.aggregate_id;
  if (typeof type !== 'string' || typeof aggregate !== 'string' || aggregate.length === 0) {
    return bad('invalid_event', 'seed 004 event: event_type and aggregate_id must be non-empty strings', raw);
  }
  if (!isObj(raw.payload)) return bad('invalid_event', 'seed 004 event: payload must be an object', raw);
  if (typeof raw.timestamp !== 'string' || raw.timestamp.length === 0) {
    return bad('invalid_event', 'seed 004 event: timestamp must be a non-empty string', raw);
  }
  const kind = SEED004_KINDS[type] ?? type;
  const payload = fillSeed004(type, kind, aggregate, raw.event_id, raw.version, raw.payload);
  const env: Obj = {
    seq: 1,
    run_id: aggregate,
    kind,
    v: 1,
    at: raw.timestamp,
    payload,
    prev: ZERO_HASH,
    hash: ZERO_HASH,
  };
  const msg = check(env);
  if (msg !== null) return bad('invalid_event', msg, raw);
  const r = redact(payload, null);
  return {
    t: 'ev',
    fmt,
    src: aggregate,
    seq: 0,
    kind,
    v: 1,
    at: raw.timestamp,
    payload: r.payload,
    json: r.json,
    orig: payload,
    digest: null,
    redacted: r.redacted,
    prev: null,
    hash: null,
    hashOk: true,
  };
}
