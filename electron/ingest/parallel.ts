import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../workers';
import { parseBlock, type LineResult } from './block';
import { readBlocks, type ReadOptions } from './lines';
import { parsedBlocks, type ParsedBlock } from './source';
import { unpackResults, type PackedBlock } from './transfer';

/**
 * Parsing on other cores. The main thread reads blocks and runs the ordered half (sequencer,
 * SQLite inserts); workers parse, validate, redact and hash blocks, and their results are taken
 * back in file order. Used for files with more than PARALLEL_MIN bytes to read; any failure to start
 * a worker (e.g. a bundle without the worker file) falls back to parsing in this thread. Results
 * come back packed (transfer.ts): cloning result objects cost ~1.2 µs per event on each side.
 */
export const PARALLEL_MIN = 8 << 20;
/**
 * Blocks handed to the workers ahead of the one the main thread is on. While the main thread
 * commits a chunk (10,000 rows, tens of ms) it posts nothing, so the workers need more than a chunk
 * queued not to go idle: profiles with 4 blocks of 1 MiB in flight showed both sides idle a third of
 * the time; on 300,000 events 16 imported ~8% faster than 8, and 32 no faster than 16.
 */
const IN_FLIGHT = 16;
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
/** Blocks larger than this (a line of MiBs) are parsed in the main thread, not in a bounded worker. */
export const WORKER_MAX_BLOCK = 2 << 20;

export interface Pool {
  /** Whether a worker has started (loading the worker bundle takes ~0.1–1 s on a busy machine). */
  online(): boolean;
  parse(buf: Buffer, fmt: string | null): Promise<LineResult[]>;
  close(): Promise<void>;
}

export function startPool(): Pool | null {
  const n = Math.min(2, Math.max(0, availableParallelism()));
  if (n < 2 || process.env.PROOFLOOP_INGEST_WORKERS === '0') return null;
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
  for (let i = 0; i < n; i++) {
    const w = startWorker(import.meta.url, './worker.ts', './ingest-worker.js', {
      resourceLimits: WORKER_HEAP,
    });
    if (!w) break;
    w.once('online', () => (online = true));
    w.on('message', (m: { id: number; packed: PackedBlock }) => {
      const p = waiting.get(m.id);
      waiting.delete(m.id);
      if (p) load[p.w]! -= p.bytes;
      p?.resolve(unpackResults(m.packed));
    });
    w.on('error', (e) => {
      broken = e;
      for (const p of waiting.values()) p.reject(e);
      waiting.clear();
    });
    workers.push(w);
    load.push(0);
  }
  if (workers.length === 0) return null;
  return {
    online: () => online,
    parse(buf, fmt) {
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
        const copy = new Uint8Array(buf.length);
        copy.set(buf);
        workers[w]!.postMessage({ id, buf: copy, fmt }, [copy.buffer]);
      });
    },
    async close() {
      await Promise.all(workers.map((w) => w.terminate()));
    },
  };
}

async function* parallelBlocks(file: string, start: number, opts: ReadOptions): AsyncGenerator<ParsedBlock> {
  if ((opts.until ?? Infinity) - start < PARALLEL_MIN) {
    yield* parsedBlocks(file, start, opts);
    return;
  }
  let pool: Pool | null = null;
  try {
    pool = startPool();
  } catch {
    pool = null;
  }
  if (!pool) {
    yield* parsedBlocks(file, start, opts);
    return;
  }
  const p = pool;
  // A pool per large file: started in well under a second, and closed so no worker outlives it.
  try {
    const queue: Promise<ParsedBlock>[] = [];
    for await (const b of readBlocks(file, start, { ...opts, blockSize: opts.blockSize ?? PARALLEL_BLOCK })) {
      const lines = (results: LineResult[]): ParsedBlock =>
        b.t === 'lines' ? { t: 'lines', start: b.start, end: b.end, lines: b.lines, results } : b;
      // A block holding a line of many MiB is parsed here: a worker's bounded heap is for ordinary lines.
      // So is every block read before a worker is up: the first rows reach the ledger (and the
      // page, in web mode) without waiting for the workers to start.
      const pending: Promise<ParsedBlock> =
        b.t !== 'lines'
          ? Promise.resolve(b)
          : b.buf.length > WORKER_MAX_BLOCK || !p.online()
            ? Promise.resolve(lines(parseBlock(b.buf, opts.fmt ?? null)))
            : p.parse(b.buf, opts.fmt ?? null).then(lines);
      pending.catch(() => undefined); // rejections are seen where the queue is awaited
      queue.push(pending);
      if (queue.length >= IN_FLIGHT) yield await queue.shift()!;
    }
    while (queue.length > 0) yield await queue.shift()!;
  } finally {
    await p.close();
  }
}

/** The parsing source for import: workers for large files where there are cores to use. */
export function defaultSource(): typeof parsedBlocks {
  return parallelBlocks;
}
