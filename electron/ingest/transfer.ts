import type { LineResult } from './block';
import type { ParsedEvent } from './parse';
import { ARTIFACT_MIN_CHARS } from './outline';

/**
 * The parse results of a block as a worker posts them back. Structured clone of ~3,000 result
 * objects of ~15 fields each cost ~1.2 µs per event to write in the worker and as much to read in
 * the main thread (which also inserts), more with the payload objects of other formats. Events
 * whose payload object the main thread does not need (every format's, once its stored JSON text is
 * in hand: nearly every line of a large file) travel instead as columns: their strings in one
 * array, in order, and their numbers in a transferred Float64Array. The strings travel as an
 * array rather than joined into one and cut back with slice: posting and reading ~3,000 strings
 * measured 0.43 µs a line against 1.09 for the join, its clone and the slices (the join alone was
 * ~6% of a parse worker's profile). Every other result (bad lines, blanks, an unchained event whose
 * original payload must still be digested) travels as it is.
 */
export interface PackedBlock {
  n: number;
  /** The packed events' strings, each where the columns say (none for a value that is null). */
  strings: string[];
  cols: Float64Array;
  /** Results that are not packed, with their index in the block. */
  other: [number, LineResult][];
}

const F_REDACTED = 1;
const F_HASH_OK = 2;
/** prev is the hash of the event packed just before (not repeated in `strings`). */
const F_PREV_CHAINED = 4;
/** Same run id (src) as the event packed before (not repeated); likewise kind and format. */
const F_SAME_SRC = 8;
const F_SAME_KIND = 16;
const F_SAME_FMT = 32;
const F_PREV = 64;
const F_HASH = 128;
const F_DIGEST = 256;
/** One of the events of a record that made several (a `multi` result at this index). */
const F_PART = 512;
/** invalid, rounded, source: not null (their strings follow the digest, in this order). */
const F_INVALID = 1024;
const F_ROUNDED = 2048;
const F_SOURCE = 4096;

/** index, seq, v, flags */
const K = 4;
const HEX_LEN = 64;

/** A packed event's payload object is not needed past parsing (its JSON text is): not sent. */
const EMPTY: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;

const hex64 = (x: string | null): boolean => x === null || x.length === HEX_LEN;

/**
 * Not packed: an event whose original payload is still to be digested, and one with a value long
 * enough to be moved to an artifact, which the importer does with the payload object (outline.ts).
 */
const packable = (r: LineResult): r is ParsedEvent =>
  r.t === 'ev' &&
  r.orig === null &&
  r.origUtf8 === undefined &&
  (r.fmt === 'proofloop' || r.json.length <= ARTIFACT_MIN_CHARS) &&
  hex64(r.digest) &&
  hex64(r.prev) &&
  hex64(r.hash);

const packableMulti = (r: LineResult): boolean =>
  r.t === 'multi' && r.list.length > 0 && r.list.every(packable);

/**
 * Packs a block's results as they are made, one at a time: a parse worker hands each line's result
 * here as soon as it is parsed, so the parsed payload objects and result records die young and
 * only the strings that travel outlive the line. Collecting the block's ~750 results first kept
 * them all alive across the young generation's collections, which copied and promoted them: GC was
 * ~12% of each worker's time, and V8's helper threads added ~5 µs of CPU an event (profile of
 * `proofloop open`, 200,000 events).
 */
export class Packer {
  private readonly parts: string[] = [];
  private readonly other: [number, LineResult][] = [];
  private cols: Float64Array;
  private j = 0;
  private n = 0;
  private lastHash: string | null = null;
  private lastSrc: string | null = null;
  private lastKind: string | null = null;
  private lastFmt: string | null = null;

  /**
   * `expect`: about how many events the block holds (the columns grow past it). Bounded, so that a
   * block of one line of MBs (the huge lines' worker) does not start with columns for thousands.
   */
  constructor(expect = 256) {
    this.cols = new Float64Array(Math.ceil(Math.min(Math.max(16, expect), 4096)) * K);
  }

  /** The result of the block's next line. */
  add(r: LineResult): void {
    const i = this.n++;
    if (packable(r)) this.put(i, r, false);
    else if (r.t === 'multi' && packableMulti(r)) for (const p of r.list) this.put(i, p as ParsedEvent, true);
    else this.other.push([i, r]);
  }

  finish(): PackedBlock {
    const cols = this.j * K === this.cols.length ? this.cols : this.cols.slice(0, this.j * K);
    return { n: this.n, strings: this.parts, cols, other: this.other };
  }

  private put(i: number, r: ParsedEvent, part: boolean): void {
    const parts = this.parts;
    let flags = (r.redacted ? F_REDACTED : 0) | (r.hashOk ? F_HASH_OK : 0) | (part ? F_PART : 0);
    if (r.src === this.lastSrc) flags |= F_SAME_SRC;
    else {
      parts.push(r.src);
      this.lastSrc = r.src;
    }
    if (r.kind === this.lastKind) flags |= F_SAME_KIND;
    else {
      parts.push(r.kind);
      this.lastKind = r.kind;
    }
    if (r.fmt === this.lastFmt) flags |= F_SAME_FMT;
    else {
      parts.push(r.fmt);
      this.lastFmt = r.fmt;
    }
    parts.push(r.at, r.json);
    if (r.prev !== null) {
      flags |= F_PREV;
      if (r.prev === this.lastHash) flags |= F_PREV_CHAINED;
      else parts.push(r.prev);
    }
    if (r.hash !== null) {
      flags |= F_HASH;
      parts.push(r.hash);
      this.lastHash = r.hash;
    }
    // Sent whenever there is one: the main thread links unchained events with it, and reports a
    // chained event whose content does not match its hash only when it has it.
    if (r.digest !== null) {
      flags |= F_DIGEST;
      parts.push(r.digest);
    }
    if (r.invalid !== null) {
      flags |= F_INVALID;
      parts.push(r.invalid);
    }
    if (r.rounded !== null) {
      flags |= F_ROUNDED;
      parts.push(JSON.stringify(r.rounded));
    }
    if (r.source !== null) {
      flags |= F_SOURCE;
      parts.push(r.source);
    }
    if ((this.j + 1) * K > this.cols.length) {
      const grown = new Float64Array(this.cols.length * 2);
      grown.set(this.cols);
      this.cols = grown;
    }
    const cols = this.cols;
    const o = this.j * K;
    cols[o] = i;
    cols[o + 1] = r.seq;
    cols[o + 2] = r.v;
    cols[o + 3] = flags;
    this.j += 1;
  }
}

export function packResults(results: LineResult[]): PackedBlock {
  let count = 0;
  for (const r of results) {
    if (packable(r)) count += 1;
    else if (r.t === 'multi' && packableMulti(r)) count += r.list.length;
  }
  const packer = new Packer(count);
  for (const r of results) packer.add(r);
  return packer.finish();
}

export function unpackResults(b: PackedBlock): LineResult[] {
  const out = new Array<LineResult>(b.n);
  for (const [i, r] of b.other) out[i] = r;
  const { strings, cols } = b;
  let pos = 0;
  let lastHash = '';
  let src = '';
  let kind = '';
  let fmt = '';
  const take = (): string => strings[pos++]!;
  const takeIf = (present: number): string | null => (present ? take() : null);
  for (let o = 0; o < cols.length; o += K) {
    const flags = cols[o + 3]!;
    if (!(flags & F_SAME_SRC)) src = take();
    if (!(flags & F_SAME_KIND)) kind = take();
    if (!(flags & F_SAME_FMT)) fmt = take();
    const at = take();
    const json = take();
    const prev = !(flags & F_PREV) ? null : flags & F_PREV_CHAINED ? lastHash : take();
    const hash = flags & F_HASH ? take() : null;
    if (hash !== null) lastHash = hash;
    const digest = flags & F_DIGEST ? take() : null;
    const invalid = takeIf(flags & F_INVALID);
    const rounded = takeIf(flags & F_ROUNDED);
    const source = takeIf(flags & F_SOURCE);
    const ev: ParsedEvent = {
      t: 'ev',
      fmt,
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
      invalid,
      rounded: rounded === null ? null : (JSON.parse(rounded) as string[]),
      source,
    };
    const i = cols[o]!;
    if (flags & F_PART) {
      const m = out[i];
      if (m && m.t === 'multi') m.list.push(ev);
      else out[i] = { t: 'multi', list: [ev] };
    } else out[i] = ev;
  }
  return out;
}
