import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../workers';
import { parseBlock, type LineResult } from './block';
import { readBlocks, type ReadOptions } from './lines';
import { readAt } from './read-at';
import { parsedBlocks, type ParsedBlock } from './source';
import { unpackResults, type PackedBlock } from './transfer';

/**
 * Parsing on other cores. The main thread reads blocks and runs the ordered half (sequencer,
 * SQLite inserts); workers parse, validate, redact and hash blocks, and their results are taken
 * back in file order. Used for files with more than PARALLEL_MIN bytes to read; any failure of a
 * worker (e.g. a bundle without the worker file, a heap too small for a line) leaves the block to
 * this thread. Results come back packed (transfer.ts): cloning result objects cost ~1.2 µs per
 * event on each side.
 *
 * Two kinds of worker, each started when what has been read asks for it:
 * - one for lines of MiBs (a Claude Code session's pasted screenshots, large tool outputs), with a
 *   heap sized for them, which also moves their large values to artifacts (outline.ts), so a line
 *   of 8 MB costs this thread a digest, not a parse, two serialisations and the redactor's scan
 *   (~0.4 s each, measured on such a session: this thread was its whole import's bottleneck, and
 *   in serve every page request waited behind each of those lines);
 * - two for ordinary lines, bounded heaps, once ordinary lines are most of what was read: in a
 *   session whose bytes are mostly huge lines they parsed ~10% of the work and cost ~120 MB RSS.
 */
export const PARALLEL_MIN = 8 << 20;
/**
 * Blocks handed to the workers ahead of the one the main thread is on. While the main thread
 * commits a chunk (10,000 rows, tens of ms) it posts nothing, so the workers need more than a chunk
 * queued not to go idle: profiles with 4 blocks of 1 MiB in flight showed both sides idle a third of
 * the time; on 300,000 events 16 imported ~8% faster than 8, and 32 no faster than 16.
 */
const IN_FLIGHT = 16;
/** Bytes read ahead, whatever the number of blocks: 16 lines of 8 MB in flight would be 128 MB. */
const IN_FLIGHT_BYTES = 24 << 20;
/**
 * The blocks parallel import reads (~750 lines each): a quarter of the reader's default, so the
 * same 16 in flight hold 4 MiB, not 16, and a worker's parsed lines die young.
 */
const PARALLEL_BLOCK = 256 << 10;
/**
 * A parse worker's heap. Bounded so that `proofloop open` stays under 300 MB whatever the file's
 * size: 1,000,000 events peaked at 592 MB RSS with 384 MiB young generations and 1 MiB blocks, and at
 * 274 MB with these limits and PARALLEL_BLOCK (one run each under load; /usr/bin/time -v). The
 * earlier large young generation bought ~20% in the worker's own loop (7.4–7.8 µs a line against
 * 9.5–10 µs with V8's default), measured on a quiet machine; npm run bench -- open measures the
 * whole process.
 */
const WORKER_HEAP = { maxYoungGenerationSizeMb: 16, maxOldGenerationSizeMb: 48 };
/** Blocks larger than this (a line of MiBs) go to the worker for huge lines. */
export const WORKER_MAX_BLOCK = 2 << 20;
/**
 * The huge lines' worker: one line of up to the reader's bound (16 MiB) at a time lives as its
 * text, its parsed value, its canonical JSON and the artifact's bytes, twice that for text that is
 * not Latin-1. A line that still does not fit ends the worker and is parsed in this thread.
 */
const HUGE_HEAP = { maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: 192 };
/** PROOFLOOP_INGEST_HUGE_HEAP_MB bounds that heap otherwise (little memory; a test makes it fail). */
function hugeHeap(): typeof HUGE_HEAP {
  const mb = Number(process.env.PROOFLOOP_INGEST_HUGE_HEAP_MB);
  return mb > 0 ? { ...HUGE_HEAP, maxOldGenerationSizeMb: mb } : HUGE_HEAP;
}
/** Ordinary lines read before the workers for them may start (a few blocks decide nothing). */
const ORDINARY_MIN = 4 << 20;

export interface Pool {
  /** Whether a worker has started (loading the worker bundle takes ~0.1–1 s on a busy machine). */
  online(): boolean;
  /** A worker failed: blocks are no longer given to this pool. */
  broken(): boolean;
  /**
   * `artifacts`: where the worker stores the large values of the block's events (see outline.ts);
   * null leaves that to this thread. `transfer`: `buf` is the block's own memory, given away.
   */
  parse(
    buf: Buffer,
    fmt: string | null,
    artifacts?: string | null,
    transfer?: boolean,
  ): Promise<LineResult[]>;
  close(): Promise<void>;
}

/** `n` workers with `heap` each (by default, the two for ordinary lines); null where none may run. */
export function startPool(n = 2, heap: typeof WORKER_HEAP = WORKER_HEAP): Pool | null {
  if (availableParallelism() < 2 || process.env.PROOFLOOP_INGEST_WORKERS === '0') return null;
  const workers: Worker[] = [];
  /** Bytes handed to each worker and not yet answered. */
  const load: number[] = [];
  const waiting = new Map<
    number,
    { resolve: (r: LineResult[]) => void; reject: (e: Error) => void; w: number; bytes: number }
  >();
  let next = 0;
  let broken: Error | null = null;
  let online = false;
  const fail = (e: Error): void => {
    // Said once: the import goes on, slower, and the user may want to know why.
    if (broken === null)
      process.stderr.write(
        `proofloop: a parse worker failed (${e.message}): its lines are parsed in the main thread\n`,
      );
    broken ??= e;
    for (const p of waiting.values()) p.reject(e);
    waiting.clear();
  };
  for (let i = 0; i < n; i++) {
    let w: Worker | null;
    try {
      w = startWorker(import.meta.url, './worker.ts', './ingest-worker.js', { resourceLimits: heap });
    } catch {
      w = null;
    }
    if (!w) break;
    w.once('online', () => (online = true));
    w.on('message', (m: { id: number; packed: PackedBlock }) => {
      const p = waiting.get(m.id);
      waiting.delete(m.id);
      if (p) load[p.w]! -= p.bytes;
      p?.resolve(unpackResults(m.packed));
    });
    w.on('error', fail);
    // Out of heap, a worker ends with an error; any other end before close() is one too.
    w.on('exit', () => fail(new Error('a parse worker ended')));
    workers.push(w);
    load.push(0);
  }
  if (workers.length === 0) return null;
  return {
    online: () => online,
    broken: () => broken !== null,
    parse(buf, fmt, artifacts = null, transfer = false) {
      if (broken) return Promise.reject(broken);
      const id = next++;
      // To the worker with the fewest bytes outstanding, not in turn: the reader's blocks alternate
      // between one line (the one that crossed a read boundary) and the ~700 after it, so taking
      // turns gave one worker every large block and left the other idle (per-block timings in the
      // workers, `proofloop open` of 200,000 events: 4.9 s of parsing in one, 0.3 ms a block in the other).
      let w = 0;
      for (let i = 1; i < workers.length; i++) if (load[i]! < load[w]!) w = i;
      load[w]! += buf.length;
      return new Promise((resolve, reject) => {
        waiting.set(id, { resolve, reject, w, bytes: buf.length });
        // A block of many lines is a view into the reader's buffer: copied, so only it travels.
        const own = transfer && buf.byteOffset === 0 && buf.byteLength === buf.buffer.byteLength;
        const data = own ? buf : Uint8Array.prototype.slice.call(buf);
        workers[w]!.postMessage({ id, buf: data, fmt, artifacts }, [data.buffer as ArrayBuffer]);
      });
    },
    async close() {
      for (const w of workers) w.removeAllListeners('exit');
      await Promise.all(workers.map((w) => w.terminate()));
    },
  };
}

async function* parallelBlocks(file: string, start: number, opts: ReadOptions): AsyncGenerator<ParsedBlock> {
  if ((opts.until ?? Infinity) - start < PARALLEL_MIN || availableParallelism() < 2) {
    yield* parsedBlocks(file, start, opts);
    return;
  }
  const off = process.env.PROOFLOOP_INGEST_WORKERS === '0';
  const fmt = opts.fmt ?? null;
  const artifacts = opts.artifacts ?? null;
  let ordinary: Pool | null = null;
  let huge: Pool | null = null;
  let triedOrdinary = off;
  let triedHuge = off;
  let ordinaryBytes = 0;
  let hugeBytes = 0;
  const here = (buf: Buffer): LineResult[] => parseBlock(buf, fmt);
  // A pool per large file: started in well under a second, and closed so no worker outlives it.
  try {
    const queue: { bytes: number; block: Promise<ParsedBlock> }[] = [];
    let queued = 0;
    for await (const b of readBlocks(file, start, { ...opts, blockSize: opts.blockSize ?? PARALLEL_BLOCK })) {
      const lines = (results: LineResult[]): ParsedBlock =>
        b.t === 'lines' ? { t: 'lines', start: b.start, end: b.end, lines: b.lines, results } : b;
      let pending: Promise<ParsedBlock>;
      const bytes = b.t === 'lines' ? b.buf.length : 0;
      if (b.t !== 'lines') pending = Promise.resolve(b);
      else if (bytes > WORKER_MAX_BLOCK) {
        hugeBytes += bytes;
        if (!triedHuge) {
          triedHuge = true;
          huge = startPool(1, hugeHeap());
        }
        if (huge && !huge.broken()) {
          const { start: from, end } = b;
          // The line's buffer is its own (joined from the blocks it spans): given to the worker,
          // and read again from the file should the worker fail on it.
          pending = huge
            .parse(b.buf, fmt, artifacts, true)
            .then(lines, () => lines(here(readAt(file, from, end - from))));
        } else pending = Promise.resolve(lines(here(b.buf)));
      } else {
        ordinaryBytes += bytes;
        if (!triedOrdinary && ordinaryBytes >= ORDINARY_MIN && ordinaryBytes >= hugeBytes) {
          triedOrdinary = true;
          ordinary = startPool(2, WORKER_HEAP);
        }
        // Every block read before a worker is up is parsed here: the first rows reach the ledger
        // (and the page, in web mode) without waiting for the workers to start.
        if (ordinary && ordinary.online() && !ordinary.broken()) {
          const buf = b.buf;
          pending = ordinary.parse(buf, fmt, artifacts, false).then(lines, () => lines(here(buf)));
        } else pending = Promise.resolve(lines(here(b.buf)));
      }
      queue.push({ bytes, block: pending });
      queued += bytes;
      while (queue.length >= IN_FLIGHT || (queued > IN_FLIGHT_BYTES && queue.length > 1)) {
        const q = queue.shift()!;
        queued -= q.bytes;
        yield await q.block;
      }
    }
    while (queue.length > 0) yield await queue.shift()!.block;
  } finally {
    await Promise.all([ordinary?.close(), huge?.close()]);
  }
}

/** The parsing source for import: workers for large files where there are cores to use. */
export function defaultSource(): typeof parallelBlocks {
  return parallelBlocks;
}
