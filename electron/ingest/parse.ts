import {
  HASH_RE,
  KIND_RE,
  MAX_DEPTH,
  MAX_SEQ,
  ZERO_HASH,
  canonicalJson,
  checkPayload,
  depthOverText,
} from '../../shared/protocol';
import { interpret } from '../../shared/formats';
import { redactCredentials } from '../../shared/redact';
import { digestEventCanonical, linkHash as link } from '../crypto';
import {
  detectFormat,
  formatNamed,
  type FormatAdapter,
  type MapError,
  type MappedEvent,
} from './formats/registry';
import { seed000Format } from './formats/seed000';
import { isObj, type Obj } from '../../shared/json-read.js';

/**
 * One line of a source file to what the importer stores: parsed, named by its format's adapter
 * (electron/ingest/formats/), canonicalised, checked, redacted and digested. Needs no other line,
 * so it runs in parse workers. What the line says is stored as it says it: a payload that fails
 * its kind's schema is still an event, with `invalid` naming why (the importer adds the finding).
 */
export type Format = string;

export interface ParsedEvent {
  t: 'ev';
  fmt: Format;
  /** The run the line belongs to as the file names it ('' when it names none: the file's run). */
  src: string;
  /** 0 for formats without seqs of their own, until the sequencer numbers the event. */
  seq: number;
  kind: string;
  v: number;
  at: string;
  /** What is stored: the payload as written, after credential redaction. */
  payload: Record<string, unknown>;
  json: string;
  /**
   * Unchained formats: the unredacted payload of a redacted event, digested once the seq and run id
   * are known (an unredacted event is digested from `json`).
   */
  orig: Record<string, unknown> | null;
  /** Instead of `orig`: the unredacted payload's canonical JSON in UTF-8, set where `json` no longer is it (outline.ts). */
  origUtf8?: Uint8Array;
  /** Over the unredacted event; null where the sequencer digests it (unchained formats). */
  digest: string | null;
  redacted: boolean;
  /** proofloop only: the carried chain fields and whether hash = sha256(prev + digest). */
  prev: string | null;
  hash: string | null;
  hashOk: boolean;
  /** Why the event fails its envelope's or its kind's schema; null when it passes. */
  invalid: string | null;
  /** Integers in the line that a JSON number (a double) cannot hold: stored rounded, and said so. */
  rounded: string[] | null;
  /** Where in the source record the event came from (a SourceRef), as the JSON text stored. */
  source: string | null;
  /** Facts for the run this event begins (MappedEvent.runMeta): streamed formats only, never packed. */
  runMeta?: Record<string, unknown>;
}

export interface ParsedBad {
  t: 'bad';
  code: 'broken_json' | 'invalid_event';
  message: string;
  seq: number | null;
  src: string | null;
  /** The line's text, bounded and redacted, so the user sees what was there. */
  excerpt: string | null;
  /**
   * The chain fields a line too deep to parse states at its end (ProofLoop's own lines): the link
   * from the next line back to this one is checked with them, though this line's content is not.
   */
  link?: { prev: string; hash: string };
}

/** A record that maps to several events (a message with several content blocks). */
export interface ParsedMulti {
  t: 'multi';
  list: Parsed[];
}

export type Parsed = ParsedEvent | ParsedBad;

const posInt = (x: unknown): x is number => typeof x === 'number' && Number.isSafeInteger(x) && x > 0;

export const EXCERPT_CHARS = 1024;

/** A bad line's text as a finding keeps it: its first 1,024 characters, credentials replaced. */
export function excerptOf(text: string): string {
  const cut = text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS)}…` : text;
  return redactCredentials(cut).value;
}

/**
 * The hash of the last line whose hash was checked: nearly every line's prev is the hash of the
 * line before, so its check is one compare instead of a regular expression (~0.3 µs a line).
 */
let lastHash = ZERO_HASH;
const isHash = (x: unknown): x is string => typeof x === 'string' && (x === lastHash || HASH_RE.test(x));

/**
 * The hot path of a ProofLoop-format line whose envelope is valid: a conservative copy of
 * EnvelopeSchema (when it says yes, the schema says yes too). Anything else takes the general path.
 */
function chainedLooksValid(o: Obj): boolean {
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
    typeof o.hash === 'string' &&
    o.hash.length === 64 &&
    (o.digest === undefined || (typeof o.digest === 'string' && HASH_RE.test(o.digest)))
  );
}

const bad = (code: ParsedBad['code'], message: string, o: Obj | null, text: string | null): ParsedBad => ({
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
  excerpt: text === null ? null : excerptOf(text),
});

/**
 * The seq and run_id a line too deep to parse names near its start, read from its text, so that
 * its seq counts as held by a line (no seq_gap for it) and its finding names it.
 */
function namedNearStart(text: string): Obj | null {
  const head = text.slice(0, 4096);
  const seq = /"seq"\s*:\s*(\d{1,15})/.exec(head);
  if (!seq) return null;
  const run = /"run_id"\s*:\s*"([^"\\]{1,200})"/.exec(head);
  return run ? { seq: Number(seq[1]), run_id: run[1] } : { seq: Number(seq[1]) };
}

/**
 * The `prev` and `hash` a ProofLoop line states as the last members of its top-level object (as its
 * writer puts them), read from its text's end: members followed only by the closing brace belong
 * to the outermost object, and a quote inside a string is escaped, so a payload cannot pose as them.
 */
const STATED_CHAIN = /,\s*((?:"(?:prev|hash|digest)"\s*:\s*"[0-9a-f]{64}"\s*,?\s*){2,3})\}\s*$/;
export function statedLink(text: string): { prev: string; hash: string } | undefined {
  const m = STATED_CHAIN.exec(text.slice(-400));
  if (!m) return undefined;
  const prev = /"prev"\s*:\s*"([0-9a-f]{64})"/.exec(m[1]!);
  const hash = /"hash"\s*:\s*"([0-9a-f]{64})"/.exec(m[1]!);
  return prev && hash ? { prev: prev[1]!, hash: hash[1]! } : undefined;
}

/**
 * Whether JSON text may hold a number of 16 or more digits: outside strings a number follows `:`,
 * `,` or `[` (and whitespace), so this passes over the 64-digit hex hashes and digests, which
 * follow a quote. `\d{16}` alone matched those in every chained line and in payloads carrying a
 * digest, and sent them to the character-by-character scan below (~1.5 µs a line, with its
 * regular expressions: profile of a parse worker).
 */
const MAY_HOLD_LONG_NUMBER = /[:,[]\s*-?\d{16}/;

/**
 * Integer literals of 16 or more digits outside strings that a double does not hold exactly.
 * `text` is JSON that parsed (a line that JSON.parse accepted).
 */
export function roundedIntegers(text: string): string[] | null {
  return MAY_HOLD_LONG_NUMBER.test(text) ? scanRoundedIntegers(text) : null;
}

/** roundedIntegers' scan of every number outside strings, without its pre-check. */
export function scanRoundedIntegers(text: string): string[] | null {
  let out: string[] | null = null;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i += 1;
      else if (c === 34) inString = false;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 45 || (c >= 48 && c <= 57)) {
      let j = i + 1;
      while (j < text.length && /[0-9.eE+-]/.test(text[j]!)) j++;
      const tok = text.slice(i, j);
      if (/^-?\d{16,}$/.test(tok) && !Number.isSafeInteger(Number(tok))) (out ??= []).push(tok);
      i = j - 1;
    }
  }
  return out;
}

/** The members of a valid chained line's envelope (chainedLooksValid), digest included. */
const ENVELOPE_MEMBERS = 9;

/**
 * Whether a valid chained line may hold an integer roundedIntegers reports, without scanning the
 * whole line (its regular expression cost ~0.9 µs a line, ~4.5% of a parse worker): seq and v are
 * safe integers and the other members strings, so such an integer is in the payload, whose
 * canonical JSON then writes 16 digits or more after `:`, `,` or `[` (an integer of 2^53 or more
 * below 1e21) or an exponent (`1e+21`), or in a member the envelope does not have.
 */
function mayHoldRounded(raw: Obj, canonical: string): boolean {
  if (LONG_NUMBER_CANONICAL.test(canonical) || (canonical.includes('e+') && /\de\+/.test(canonical)))
    return true;
  let n = 0;
  for (const _ in raw) n += 1;
  return n > ENVELOPE_MEMBERS || (n === ENVELOPE_MEMBERS && raw.digest === undefined);
}

const LONG_NUMBER_CANONICAL = /[:,[]-?\d{16}/;

/** Parses, names, checks, redacts and digests one line (its text, without the newline). */
export function parseLine(text: string, hint: Format | null = null): Parsed | ParsedMulti {
  // Important: before anything walks the value (canonical JSON and the redactor recurse).
  if (depthOverText(text)) {
    const named = namedNearStart(text);
    const link = named ? statedLink(text) : undefined;
    const b = bad(
      'invalid_event',
      `the line nests objects or arrays deeper than ${MAX_DEPTH} levels`,
      named,
      text,
    );
    if (link) b.link = link;
    return b;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    return bad('broken_json', `not JSON: ${(e as Error).message}`, null, text);
  }
  if (!isObj(raw)) return bad('invalid_event', 'a line must be a JSON object', null, text);
  const adapter: FormatAdapter = (hint !== null ? formatNamed(hint) : detectFormat(raw)) ?? seed000Format;
  if (adapter.name === 'proofloop' && chainedLooksValid(raw)) {
    const fast = parseChained(raw, text);
    if (fast) return fast;
  }
  let mapped: ReturnType<FormatAdapter['map']>;
  try {
    mapped = adapter.map(raw);
  } catch (e) {
    return bad(
      'invalid_event',
      `the ${adapter.label} reader failed on this line: ${(e as Error).message}`,
      raw,
      text,
    );
  }
  if ('error' in mapped) return bad('invalid_event', mapped.error, raw, text);
  if (mapped.length === 0)
    return bad('invalid_event', `the ${adapter.label} reader made no event of this line`, raw, text);
  const rounded = roundedIntegers(text);
  if (mapped.length === 1) return toParsed(adapter.name, mapped[0]!, rounded, text);
  return { t: 'multi', list: mapped.map((m) => toParsed(adapter.name, m, rounded, text)) };
}

/**
 * A part of a whole-file source (document.ts), parsed with its document and mapped by its adapter:
 * checked, redacted and digested as a line would be. `text` is the part as JSON, for the excerpt
 * of a finding. Integers the document's parse rounded are reported once for the document.
 */
export function parseMapped(
  fmt: Format,
  label: string,
  mapped: MappedEvent[] | MapError,
  raw: Obj,
  text: string,
): Parsed | ParsedMulti {
  if ('error' in mapped) return bad('invalid_event', mapped.error, raw, text);
  if (mapped.length === 0)
    return bad('invalid_event', `the ${label} reader made no event of this part`, raw, text);
  if (mapped.length === 1) return toParsed(fmt, mapped[0]!, null, text);
  return { t: 'multi', list: mapped.map((m) => toParsed(fmt, m, null, text)) };
}

/** A valid ProofLoop line: checked, never recomputed (the chain is the source's). */
function parseChained(raw: Obj, text: string): ParsedEvent | null {
  const seq = raw.seq as number;
  const runId = raw.run_id as string;
  const kind = raw.kind as string;
  const v = raw.v as number;
  const at = raw.at as string;
  const orig = raw.payload as Obj;
  const p = checkPayload(kind, v, orig);
  if (!p.ok) return null;
  let canonical: string;
  try {
    canonical = canonicalJson(orig);
  } catch {
    return null;
  }
  const carried = raw.digest as string | undefined;
  const digest = carried ?? digestEventCanonical(seq, runId, kind, v, at, canonical);
  const prev = raw.prev as string;
  const hash = raw.hash as string;
  const hashOk = link(prev, digest) === hash;
  if (!hashOk && !HASH_RE.test(hash)) return null;
  lastHash = hash;
  const r = redact(orig, canonical);
  return {
    t: 'ev',
    fmt: 'proofloop',
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
    invalid: null,
    rounded: mayHoldRounded(raw, canonical) ? roundedIntegers(text) : null,
    source: null,
  };
}

function toParsed(fmt: Format, m: MappedEvent, rounded: string[] | null, text: string): Parsed {
  let canonical: string;
  try {
    canonical = canonicalJson(m.payload);
  } catch (e) {
    // A number JSON.parse turned into Infinity (1e400): no JSON text can hold it as written.
    return bad(
      'invalid_event',
      `the payload cannot be stored as written: ${(e as Error).message}`,
      { seq: m.seq, run_id: m.run },
      text,
    );
  }
  const seq = m.seq ?? 0;
  const src = m.run ?? '';
  const v = m.v ?? 1;
  const payloadIsObj = isObj(m.payload);
  let invalid = m.invalid ?? null;
  if (invalid === null && payloadIsObj) {
    const view = interpret(fmt, m.kind, m.payload, { seq, run_id: src, source: m.source ?? null });
    const p = checkPayload(m.kind, v, view ? view.payload : m.payload);
    if (!p.ok) invalid = p.message;
  }
  const r = redact(m.payload, canonical);
  let digest: string | null = null;
  let prev: string | null = null;
  let hash: string | null = null;
  let hashOk = true;
  if (m.chain) {
    // ProofLoop's own line with something wrong in it: stored, and its chain checked as far as it goes.
    const carried =
      typeof m.chain.digest === 'string' && HASH_RE.test(m.chain.digest) ? m.chain.digest : null;
    digest = carried ?? digestEventCanonical(seq, src, m.kind, v, m.at, canonical);
    prev = isHash(m.chain.prev) ? m.chain.prev : null;
    hash = isHash(m.chain.hash) ? m.chain.hash : null;
    if (prev === null || hash === null) {
      const chainMsg = 'prev and hash must be 64 hex digits';
      invalid = invalid === null ? `envelope: ${chainMsg}` : `${invalid}; ${chainMsg}`;
    }
    hashOk = prev !== null && hash !== null && link(prev, digest) === hash;
    if (hash !== null) lastHash = hash;
  } else if (seq > 0 && src !== '' && !r.redacted) {
    digest = digestEventCanonical(seq, src, m.kind, v, m.at, canonical);
  }
  return {
    t: 'ev',
    fmt,
    src,
    seq,
    kind: m.kind,
    v,
    at: m.at,
    payload: r.payload,
    json: r.json,
    // Needed on the main thread only to digest a redacted payload: an unredacted one's `json` is its
    // canonical text, and an event without its payload object travels packed (transfer.ts).
    orig: m.chain || digest !== null || !r.redacted ? null : (m.payload as Obj),
    digest,
    redacted: r.redacted || (m.chain !== undefined && typeof m.chain.digest === 'string'),
    prev,
    hash,
    hashOk,
    invalid,
    rounded,
    source: m.source ? JSON.stringify(m.source) : null,
  };
}

/**
 * The payload as stored: after credential redaction, as canonical JSON (RFC 8785), the very text
 * its digest covers when nothing was redacted, so the digest's serialisation is not done twice.
 */
function redact(payload: unknown, canonical: string): { payload: Obj; json: string; redacted: boolean } {
  const r = redactCredentials(payload);
  if (r.hits > 0) {
    const json = canonicalJson(r.value);
    return { payload: JSON.parse(json) as Obj, json, redacted: true };
  }
  return { payload: payload as Obj, json: canonical, redacted: false };
}

/** The format a file is of, from its first record's text; null when it is no JSON object. */
export function detectText(text: string): Format | null {
  if (depthOverText(text)) return null;
  try {
    const raw: unknown = JSON.parse(text);
    return isObj(raw) ? (detectFormat(raw)?.name ?? null) : null;
  } catch {
    return null;
  }
}
