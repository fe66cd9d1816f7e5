import { createReadStream } from 'node:fs';
import type { LedgerEvent } from '../../shared/protocol';
import { hash } from 'node:crypto';
import { chainLink, digestParts, HASH_RE } from '../../shared/protocol/chain';
import { MAX_SEQ } from '../../shared/protocol/limits';

/** Bits of LineBatch.flags. */
export const LINK_OK = 1; // hash = sha256(prev + digest) holds for the line
export const RUN_ID_OK = 2; // the line's run_id is the run's
export const CARRIED = 4; // the line carries its (redacted) event's original digest
export const PREV_OK = 8; // prev is the hash of the line before it in the batch (never set on line 0)

/**
 * What one batch of complete JSONL lines says about the chain, line by line, compactly (typed
 * arrays travel from a worker without a copy; 64-hex strings per line would not).
 */
export interface LineBatch {
  count: number;
  seqs: Float64Array;
  flags: Uint8Array;
  /** prev of the first line, hash of the first and of the last line ('' for an empty batch). */
  firstPrev: string;
  firstHash: string;
  lastHash: string;
  /** sha256 of the exact line text of each line that carries a digest, by line index. */
  carriedAt: number[];
  carriedHashes: string[];
  /**
   * Lines past the first whose prev is not the hash of the line before them (rare: a broken chain,
   * or a link over a source line that is no event, which the manifest states): the line's index,
   * its prev, and the hash of the line before it.
   */
  breaks: { index: number; prev: string; before: string }[];
  /** The first line that cannot be read as an event (the batch stops there), and why. */
  problem: { index: number; code: string; message: string } | null;
  /** The events themselves, when asked for (openBundle). */
  events?: LedgerEvent[];
  digests?: string[];
}

/**
 * A kind as a bundle line may carry it: any of 1 to 200 characters, as the ledger keeps an imported
 * kind as written. (Not KIND_RE, nor electron/crypto's sha256Hex below: both modules load zod,
 * which the verify worker does not need to start.)
 */
const KIND = /^[\s\S]{1,200}$/;
/** One-shot crypto.hash (Node ≥ 20.12) measured 3x faster than createHash() for event-sized input. */
const sha = (s: string): string => hash('sha256', s, 'hex');

/**
 * Analyses complete lines (each ending in \n): the envelope of each, its digest recomputed from the
 * parsed fields with the protocol's own `digestParts` (never from the line's text: a line with a
 * duplicated key would hash differently from what readers parse), and its link to the line before.
 * Runs in the verify workers (verify-worker.ts) and, for small bundles, in the main thread.
 */
export function analyzeLines(text: string, runId: string, keep: boolean): LineBatch {
  return analyzePieces([text], text.length, runId, keep);
}

/** Strings of at most this many bytes: a longer one is a large object to V8, measured 10x slower to make. */
const PIECE = 96 * 1024;
const decoder = new TextDecoder();
/** The same, but keeping a byte order mark as U+FEFF: for pieces that do not start a block. */
const decoderKeepingBom = new TextDecoder('utf-8', { ignoreBOM: true });

/** UTF-8 bytes of complete lines as text, a piece of whole lines of at most PIECE bytes at a time. */
function* decodedPieces(bytes: Uint8Array): Generator<string> {
  let start = 0;
  while (start < bytes.length) {
    let end = start + PIECE >= bytes.length ? bytes.length : bytes.lastIndexOf(10, start + PIECE - 1) + 1;
    // A line longer than a piece: up to its end.
    if (end <= start) end = bytes.indexOf(10, start + PIECE) + 1 || bytes.length;
    // A newline byte never occurs inside a UTF-8 sequence: the pieces decode as the whole would.
    yield (start === 0 ? decoder : decoderKeepingBom).decode(bytes.subarray(start, end));
    start = end;
  }
}

/** analyzeLines of UTF-8 bytes (decoded a piece at a time). */
export function analyzeBytes(bytes: Uint8Array, runId: string, keep: boolean): LineBatch {
  return analyzePieces(decodedPieces(bytes), bytes.length, runId, keep);
}

function analyzePieces(pieces: Iterable<string>, size: number, runId: string, keep: boolean): LineBatch {
  // Sized for lines of ~256 bytes (an event line is longer), grown if need be; cut to size at the end.
  let seqs = new Float64Array((size >>> 8) + 16);
  let flags = new Uint8Array(seqs.length);
  const out: LineBatch = {
    count: 0,
    seqs: new Float64Array(0),
    flags: new Uint8Array(0),
    firstPrev: '',
    firstHash: '',
    lastHash: '',
    carriedAt: [],
    carriedHashes: [],
    breaks: [],
    problem: null,
  };
  if (keep) {
    out.events = [];
    out.digests = [];
  }
  // Kinds already seen to be valid (a run has a handful; the regex is skipped for them).
  const kinds = new Set<string>();
  lines: for (const text of pieces) {
    let start = 0;
    while (start < text.length) {
      const nl = text.indexOf('\n', start);
      const end = nl < 0 ? text.length : nl;
      const line = text.slice(start, end);
      start = end + 1;
      const index = out.count;
      let o: Record<string, unknown>;
      try {
        o = JSON.parse(line) as Record<string, unknown>;
      } catch {
        out.problem = { index, code: 'broken_json', message: 'not JSON' };
        break lines;
      }
      let why: string | null = null;
      // The checks in their order; 64-hex prev and hash are proven without a regex where they can be
      // (prev equal to the checked hash before it; a hash equal to a SHA-256 we computed).
      if (o === null || typeof o !== 'object' || Array.isArray(o)) why = 'not a JSON object';
      else if (!Number.isSafeInteger(o.seq) || (o.seq as number) < 1 || (o.seq as number) > MAX_SEQ)
        why = `seq is not an integer from 1 to ${MAX_SEQ}`;
      else if (typeof o.run_id !== 'string') why = 'run_id is not a string';
      // Any kind of 1 to 200 characters: an imported event keeps its source's kind as written (a
      // kind that is no snake_case name has its invalid_event finding in the ledger), and the
      // digest covers it whatever it is.
      else if (typeof o.kind !== 'string' || !(kinds.has(o.kind) || (KIND.test(o.kind) && kinds.add(o.kind))))
        why = 'kind is not a string of 1 to 200 characters';
      else if (!Number.isSafeInteger(o.v) || (o.v as number) < 1) why = 'v is not a positive integer';
      else if (typeof o.at !== 'string') why = 'at is not a string';
      else if (o.payload === null || typeof o.payload !== 'object' || Array.isArray(o.payload))
        why = 'payload is not an object';
      else if (typeof o.prev !== 'string' || (o.prev !== out.lastHash && !HASH_RE.test(o.prev)))
        why = 'prev is not 64 hex digits';
      else if (typeof o.hash !== 'string' || o.hash.length !== 64) why = 'hash is not 64 hex digits';
      else if (o.digest !== undefined && (typeof o.digest !== 'string' || !HASH_RE.test(o.digest)))
        why = HASH_RE.test(o.hash) ? 'digest is not 64 hex digits' : 'hash is not 64 hex digits';
      let digest = '';
      let linked = false;
      if (why === null) {
        digest =
          typeof o.digest === 'string'
            ? o.digest
            : digestParts(
                o.seq as number,
                o.run_id as string,
                o.kind as string,
                o.v as number,
                o.at as string,
                o.payload,
                sha,
              );
        linked = chainLink(o.prev as string, digest, sha) === o.hash;
        if (!linked && !HASH_RE.test(o.hash as string)) why = 'hash is not 64 hex digits';
      }
      if (why !== null) {
        out.problem = { index, code: 'invalid_event', message: why };
        break lines;
      }
      const carried = typeof o.digest === 'string';
      const prev = o.prev as string;
      const hash = o.hash as string;
      let f = linked ? LINK_OK : 0;
      if (o.run_id === runId) f |= RUN_ID_OK;
      if (carried) {
        f |= CARRIED;
        out.carriedAt.push(index);
        out.carriedHashes.push(sha(line));
      }
      if (index === 0) {
        out.firstPrev = prev;
        out.firstHash = hash;
      } else if (prev === out.lastHash) f |= PREV_OK;
      else out.breaks.push({ index, prev, before: out.lastHash });
      out.lastHash = hash;
      if (index === seqs.length) {
        const more = new Float64Array(seqs.length * 2);
        more.set(seqs);
        seqs = more;
        const moreFlags = new Uint8Array(more.length);
        moreFlags.set(flags);
        flags = moreFlags;
      }
      seqs[index] = o.seq as number;
      flags[index] = f;
      out.count += 1;
      if (keep) {
        out.events!.push(o as unknown as LedgerEvent);
        out.digests!.push(digest);
      }
    }
  }
  // Copies of their own (not views of the larger arrays): a worker transfers their buffers.
  out.seqs = seqs.slice(0, out.count);
  out.flags = flags.slice(0, out.count);
  return out;
}

const MAX_LINE_BYTES = 64 * 1024 * 1024;
const CHUNK = 2 * 1024 * 1024;

/** The bytes of a file as chunks of complete lines, and a last incomplete line if any. */
async function* lineChunks(file: string): AsyncGenerator<{ bytes: Uint8Array; complete: boolean }> {
  let rest: Buffer | null = null;
  for await (const chunk of createReadStream(file, { highWaterMark: CHUNK }) as AsyncIterable<Buffer>) {
    const buf: Buffer = rest ? Buffer.concat([rest, chunk]) : chunk;
    const nl = buf.lastIndexOf(10);
    if (nl < 0) {
      rest = buf;
      if (rest.length > MAX_LINE_BYTES) throw new Error(`a line is longer than ${MAX_LINE_BYTES} bytes`);
      continue;
    }
    yield { bytes: buf.subarray(0, nl + 1), complete: true };
    rest = nl + 1 < buf.length ? Buffer.from(buf.subarray(nl + 1)) : null;
  }
  if (rest && rest.length > 0) yield { bytes: new Uint8Array(rest), complete: false };
}

/**
 * The line batches of an extracted run's events.jsonl in file order, analysed in this thread (for
 * openBundle, which keeps the events). A last line without \n comes as `{ truncated: true }`.
 */
export async function* analyzeFile(
  file: string,
  runId: string,
  keep: boolean,
): AsyncGenerator<LineBatch | { truncated: true }> {
  for await (const c of lineChunks(file)) {
    if (!c.complete) {
      yield { truncated: true };
      return;
    }
    yield analyzeBytes(c.bytes, runId, keep);
  }
}

/** Analyses a block of complete lines (in a worker, or in this thread). */
export type Analyze = (bytes: Uint8Array, runId: string) => Promise<LineBatch>;

/** Analyze in this thread. */
export const analyzeHere: Analyze = async (bytes, runId) => analyzeBytes(bytes, runId, false);

/**
 * Bytes in shared memory: a block posted to a worker is shared, not copied (a copy would be of the
 * whole buffer, twice the block); it stays here for this thread to analyse should the worker fail.
 */
const shared = (n: number): Uint8Array => new Uint8Array(new SharedArrayBuffer(n));

/** Lines are handed on in blocks of about this size (a worker analyses one in ~5 ms). */
const BLOCK = 512 * 1024;

/**
 * A run's events.jsonl as it inflates (an EntrySink of streamBundle): split into blocks of complete
 * lines, each analysed as soon as it is complete (by `analyze`, so in worker threads side by side),
 * at most `maxInFlight` at a time (the inflating waits). `batches()` gives the results in file
 * order, then `{ truncated: true }` for a last line without \n, or throws for a line too long.
 */
export class LineFeed {
  private buf = shared(BLOCK * 2);
  /** Block buffers whose analysis is done, to be filled again (fresh ones cost page faults). */
  private readonly free: Uint8Array[] = [];
  private used = 0;
  private readonly results: Promise<LineBatch>[] = [];
  private pending = 0;
  private waiting: (() => void) | null = null;
  private error: Error | null = null;
  private truncated = false;
  private ended = false;
  private onEnd: (() => void) | null = null;

  constructor(
    private readonly runId: string,
    private readonly analyze: Analyze,
    private readonly maxInFlight: number,
  ) {}

  write(chunk: Buffer, ready: () => void): void {
    // Larger chunks (the inflating hands on 1 MiB) are taken a block at a time.
    for (let at = 0; at < chunk.length && !this.error; at += BLOCK) this.take(chunk.subarray(at, at + BLOCK));
    if (this.pending >= this.maxInFlight && !this.error) this.waiting = ready;
    else ready();
  }

  private take(chunk: Uint8Array): void {
    if (this.used + chunk.length > this.buf.length) this.flush();
    if (this.used + chunk.length > this.buf.length) {
      // A line longer than a block: grow up to the longest line allowed.
      if (this.used + chunk.length > MAX_LINE_BYTES) {
        this.error = new Error(`a line is longer than ${MAX_LINE_BYTES} bytes`);
        return;
      }
      const bigger = shared(Math.max(this.buf.length * 2, this.used + chunk.length));
      bigger.set(this.buf.subarray(0, this.used));
      this.buf = bigger;
    }
    this.buf.set(chunk, this.used);
    this.used += chunk.length;
    if (this.used >= BLOCK) this.flush();
  }

  end(): void {
    if (!this.error) {
      this.flush();
      this.truncated = this.used > 0;
    }
    this.ended = true;
    this.onEnd?.();
  }

  /** Sends the complete lines in the buffer on; keeps the incomplete last one. */
  private flush(): void {
    if (this.used === 0) return;
    const nl = this.buf.lastIndexOf(10, this.used - 1);
    if (nl < 0) return;
    const block = this.buf;
    const size = nl + 1;
    const rest = this.used - size;
    this.buf = rest <= BLOCK * 2 ? (this.free.pop() ?? shared(BLOCK * 2)) : shared(rest);
    this.buf.set(block.subarray(size, this.used));
    this.used = rest;
    this.pending++;
    const p = this.analyze(block.subarray(0, size), this.runId);
    const done = () => {
      if (block.length === BLOCK * 2) this.free.push(block);
      this.settled();
    };
    p.then(done, done);
    this.results.push(p);
  }

  private settled(): void {
    this.pending--;
    if (this.waiting && this.pending < this.maxInFlight) {
      const w = this.waiting;
      this.waiting = null;
      w();
    }
  }

  async *batches(): AsyncGenerator<LineBatch | { truncated: true }> {
    if (!this.ended) await new Promise<void>((resolve) => (this.onEnd = resolve));
    for (const p of this.results) yield await p;
    if (this.error) throw this.error;
    if (this.truncated) yield { truncated: true };
  }
}
