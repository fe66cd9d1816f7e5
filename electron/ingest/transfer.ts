import type { LineResult } from './block';
import type { ParsedEvent } from './parse';

/**
 * The parse results of a block as a worker posts them back. Structured clone of ~3,000 result
 * objects of ~15 fields each cost ~1.2 µs per event to write in the worker and as much to read in
 * the main thread (which also inserts). ProofLoop-format events, nearly every line of a large
 * file, travel instead as columns: their strings concatenated into one string (one memcpy to
 * clone, cut back with slice) and their numbers in a transferred Float64Array. Every other result
 * (bad lines, blanks, seed formats whose payload objects are needed) travels as it is.
 */
export interface PackedBlock {
  n: number;
  text: string;
  cols: Float64Array;
  /** Results that are not ProofLoop-format events, with their index in the block. */
  other: [number, LineResult][];
}

const F_REDACTED = 1;
const F_HASH_OK = 2;
/** prev is the hash of the event packed just before (not repeated in `text`). */
const F_PREV_CHAINED = 4;
/** Same run id (src) as the event packed before (not repeated). */
const F_SAME_SRC = 8;
const F_SAME_KIND = 16;
/** index, seq, v, flags, at length, json length, src length, kind length */
const K = 8;
const HEX_LEN = 64;

/** A chained line's payload object is not needed past parsing (its JSON text is): not sent. */
const EMPTY: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;

const packable = (r: LineResult): r is ParsedEvent =>
  r.t === 'ev' &&
  r.fmt === 'proofloop' &&
  r.orig === null &&
  r.invalid === null &&
  r.rounded === null &&
  r.source === null &&
  typeof r.digest === 'string' &&
  r.digest.length === HEX_LEN &&
  typeof r.prev === 'string' &&
  r.prev.length === HEX_LEN &&
  typeof r.hash === 'string' &&
  r.hash.length === HEX_LEN;

export function packResults(results: LineResult[]): PackedBlock {
  const parts: string[] = [];
  const other: [number, LineResult][] = [];
  let count = 0;
  for (const r of results) if (packable(r)) count += 1;
  const cols = new Float64Array(count * K);
  let j = 0;
  let lastHash: string | null = null;
  let lastSrc: string | null = null;
  let lastKind: string | null = null;
  for (let i = 0; i < results.length; i++) {
    const r = results[i]!;
    if (!packable(r)) {
      other.push([i, r]);
      continue;
    }
    let flags = (r.redacted ? F_REDACTED : 0) | (r.hashOk ? F_HASH_OK : 0);
    let srcLen = 0;
    let kindLen = 0;
    if (r.src === lastSrc) flags |= F_SAME_SRC;
    else {
      parts.push(r.src);
      srcLen = r.src.length;
      lastSrc = r.src;
    }
    if (r.kind === lastKind) flags |= F_SAME_KIND;
    else {
      parts.push(r.kind);
      kindLen = r.kind.length;
      lastKind = r.kind;
    }
    parts.push(r.at, r.json);
    if (r.prev === lastHash) flags |= F_PREV_CHAINED;
    else parts.push(r.prev!);
    parts.push(r.hash!);
    // The digest is stored only for a redacted event; the chain check (hashOk) was made here.
    if (r.redacted) parts.push(r.digest!);
    lastHash = r.hash;
    const o = j * K;
    cols[o] = i;
    cols[o + 1] = r.seq;
    cols[o + 2] = r.v;
    cols[o + 3] = flags;
    cols[o + 4] = r.at.length;
    cols[o + 5] = r.json.length;
    cols[o + 6] = srcLen;
    cols[o + 7] = kindLen;
    j += 1;
  }
  return { n: results.length, text: parts.join(''), cols, other };
}

export function unpackResults(b: PackedBlock): LineResult[] {
  const out = new Array<LineResult>(b.n);
  for (const [i, r] of b.other) out[i] = r;
  const { text, cols } = b;
  let pos = 0;
  let lastHash = '';
  let src = '';
  let kind = '';
  const take = (len: number): string => text.slice(pos, (pos += len));
  for (let o = 0; o < cols.length; o += K) {
    const flags = cols[o + 3]!;
    if (!(flags & F_SAME_SRC)) src = take(cols[o + 6]!);
    if (!(flags & F_SAME_KIND)) kind = take(cols[o + 7]!);
    const at = take(cols[o + 4]!);
    const json = take(cols[o + 5]!);
    const prev = flags & F_PREV_CHAINED ? lastHash : take(HEX_LEN);
    const hash = take(HEX_LEN);
    const digest = flags & F_REDACTED ? take(HEX_LEN) : null;
    lastHash = hash;
    out[cols[o]!] = {
      t: 'ev',
      fmt: 'proofloop',
      src,
      seq: cols[o + 1]!,
      kind,
      v: cols[o + 2]!,
      at,
      payload: EMPTY,
      json,
      orig: null,
      digest,
      redacted: (flags & F_REDACTED) !== 0,
      prev,
      hash,
      hashOk: (flags & F_HASH_OK) !== 0,
      invalid: null,
      rounded: null,
      source: null,
    };
  }
  return out;
}
