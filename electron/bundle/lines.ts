import { Worker } from 'node:worker_threads';
import { createReadStream } from 'node:fs';
import type { LedgerEvent } from '../../shared/protocol';
import { sha256Hex as fastSha256 } from '../crypto';

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
  /** The first line that cannot be read as an event (the batch stops there), and why. */
  problem: { index: number; code: string; message: string } | null;
  /** The events themselves, when asked for (openBundle). */
  events?: LedgerEvent[];
  digests?: string[];
}

/**
 * Analyses complete lines (each ending in \n). Self-contained on purpose: it is also the body of
 * the verify workers (its source is sent to them), so it may use only its arguments and built-ins.
 */
export function analyzeLines(
  text: string,
  runId: string,
  sha: (s: string) => string,
  keep: boolean,
): LineBatch {
  const HEX = /^[0-9a-f]{64}$/;
  // Constants again (not the module's): this function's source is also the workers' code.
  const LINK_OK = 1;
  const RUN_ID_OK = 2;
  const CARRIED = 4;
  const PREV_OK = 8;
  const KIND = /^[a-z][a-z0-9_]{0,63}$/;
  const canon = (v: unknown): string => {
    if (v === null || typeof v !== 'object') return JSON.stringify(v);
    if (Array.isArray(v)) {
      let s = '[';
      for (let i = 0; i < v.length; i++) s += (i ? ',' : '') + canon(v[i]);
      return s + ']';
    }
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o).sort();
    let s = '{';
    let first = true;
    for (const k of keys) {
      if (o[k] === undefined) continue;
      s += (first ? '' : ',') + JSON.stringify(k) + ':' + canon(o[k]);
      first = false;
    }
    return s + '}';
  };
  const seqs: number[] = [];
  const flags: number[] = [];
  const out: LineBatch = {
    count: 0,
    seqs: new Float64Array(0),
    flags: new Uint8Array(0),
    firstPrev: '',
    firstHash: '',
    lastHash: '',
    carriedAt: [],
    carriedHashes: [],
    problem: null,
  };
  if (keep) {
    out.events = [];
    out.digests = [];
  }
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
      break;
    }
    let why: string | null = null;
    if (o === null || typeof o !== 'object' || Array.isArray(o)) why = 'not a JSON object';
    else if (!Number.isSafeInteger(o.seq) || (o.seq as number) < 1) why = 'seq is not a positive integer';
    else if (typeof o.run_id !== 'string') why = 'run_id is not a string';
    else if (typeof o.kind !== 'string' || !KIND.test(o.kind)) why = 'kind is not a snake_case name';
    else if (!Number.isSafeInteger(o.v) || (o.v as number) < 1) why = 'v is not a positive integer';
    else if (typeof o.at !== 'string') why = 'at is not a string';
    else if (o.payload === null || typeof o.payload !== 'object' || Array.isArray(o.payload))
      why = 'payload is not an object';
    else if (typeof o.prev !== 'string' || !HEX.test(o.prev)) why = 'prev is not 64 hex digits';
    else if (typeof o.hash !== 'string' || !HEX.test(o.hash)) why = 'hash is not 64 hex digits';
    else if (o.digest !== undefined && (typeof o.digest !== 'string' || !HEX.test(o.digest)))
      why = 'digest is not 64 hex digits';
    if (why !== null) {
      out.problem = { index, code: 'invalid_event', message: why };
      break;
    }
    const carried = typeof o.digest === 'string';
    const digest = carried
      ? (o.digest as string)
      : sha(
          `{"at":${JSON.stringify(o.at)},"kind":${JSON.stringify(o.kind)},"payload":${canon(o.payload)},` +
            `"run_id":${JSON.stringify(o.run_id)},"seq":${o.seq as number},"v":${o.v as number}}`,
        );
    const prev = o.prev as string;
    const hash = o.hash as string;
    let f = sha(prev + digest) === hash ? LINK_OK : 0;
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
    out.lastHash = hash;
    out.count += 1;
    seqs.push(o.seq as number);
    flags.push(f);
    if (keep) {
      out.events!.push(o as unknown as LedgerEvent);
      out.digests!.push(digest);
    }
  }
  out.seqs = Float64Array.from(seqs);
  out.flags = Uint8Array.from(flags);
  return out;
}

const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const crypto = require('node:crypto');
var __name = (f) => f;
const sha = crypto.hash ? (s) => crypto.hash('sha256', s, 'hex') : (s) => crypto.createHash('sha256').update(s, 'utf8').digest('hex');
const analyzeLines = (${analyzeLines.toString()});
const decoder = new TextDecoder();
parentPort.on('message', (m) => {
  const batch = analyzeLines(decoder.decode(m.bytes), m.runId, sha, false);
  parentPort.postMessage({ id: m.id, batch }, [batch.seqs.buffer, batch.flags.buffer]);
});
`;

const CHUNK = 2 * 1024 * 1024;
const MAX_LINE_BYTES = 64 * 1024 * 1024;

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
    // A copy the size of the lines, so it can be handed to a worker without dragging the rest along.
    const lines = new Uint8Array(nl + 1);
    lines.set(buf.subarray(0, nl + 1));
    yield { bytes: lines, complete: true };
    rest = nl + 1 < buf.length ? Buffer.from(buf.subarray(nl + 1)) : null;
  }
  if (rest && rest.length > 0) yield { bytes: new Uint8Array(rest), complete: false };
}

/** Files at least this large are analysed by worker threads (their start-up costs ~30 ms). */
const WORKER_THRESHOLD = 8 * 1024 * 1024;

/**
 * The line batches of a run's events.jsonl in file order, analysed in worker threads for large
 * files (digests are independent per line; only the linking of neighbours is sequential), and
 * in this thread for small ones or when the events are wanted. A last line without \n comes as
 * `{ truncated: true }`.
 */
export async function* analyzeFile(
  file: string,
  size: number,
  runId: string,
  opts: { keep?: boolean; workers?: number } = {},
): AsyncGenerator<LineBatch | { truncated: true }> {
  const workers = opts.keep ? 0 : (opts.workers ?? (size >= WORKER_THRESHOLD ? 2 : 0));
  if (workers === 0) {
    const decoder = new TextDecoder();
    for await (const c of lineChunks(file)) {
      if (!c.complete) {
        yield { truncated: true };
        return;
      }
      yield analyzeLines(decoder.decode(c.bytes), runId, fastSha256, opts.keep ?? false);
    }
    return;
  }
  const pool = Array.from({ length: workers }, () => new Worker(WORKER_SOURCE, { eval: true }));
  const pending = new Map<number, { resolve: (b: LineBatch) => void; reject: (e: Error) => void }>();
  const fail = (e: Error) => {
    for (const p of pending.values()) p.reject(e);
    pending.clear();
  };
  for (const w of pool) {
    w.on('message', (m: { id: number; batch: LineBatch }) => {
      const p = pending.get(m.id);
      pending.delete(m.id);
      p?.resolve(m.batch);
    });
    w.on('error', fail);
  }
  try {
    const inFlight: Promise<LineBatch>[] = [];
    let id = 0;
    let truncated = false;
    for await (const c of lineChunks(file)) {
      if (!c.complete) {
        truncated = true;
        break;
      }
      const myId = id++;
      const worker = pool[myId % pool.length]!;
      inFlight.push(
        new Promise<LineBatch>((resolve, reject) => {
          pending.set(myId, { resolve, reject });
          worker.postMessage({ id: myId, bytes: c.bytes, runId }, [c.bytes.buffer as ArrayBuffer]);
        }),
      );
      // Keep a few batches per worker in flight; hand results back in file order.
      while (inFlight.length >= workers * 3) yield await inFlight.shift()!;
    }
    while (inFlight.length) yield await inFlight.shift()!;
    if (truncated) yield { truncated: true };
  } finally {
    await Promise.all(pool.map((w) => w.terminate()));
  }
}
