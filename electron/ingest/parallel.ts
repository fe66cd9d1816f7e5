import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../workers';
import type { LineResult } from './block';
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
const PARALLEL_MIN = 8 << 20;
/**
 * Blocks (~3,000 lines each) handed to the workers ahead of the one the main thread is on. While
 * the main thread commits a chunk (10,000 rows, tens of ms) it posts nothing, so the workers need
 * more than a chunk queued not to go idle: profiles at 4 showed both sides idle a third of the time;
 * on 300,000 events 16 imported ~8% faster than 8 (three alternating runs), and 32 no faster than 16.
 * At most ~16 MiB of blocks and their results wait at once.
 */
const IN_FLIGHT = 16;
/**
 * A parse worker's young generation. A block's ~3,000 parsed lines live until the block is packed,
 * so with V8's default (16 MiB semi-spaces) many survive a scavenge and are copied, then promoted:
 * garbage collection took ~23% of the worker's time. Measured on the worker's own loop: 7.4–7.8
 * µs a line with 128 MiB semi-spaces against 9.5–10 µs with the default.
 */
const YOUNG_MB = 384;

interface Pool {
  parse(buf: Buffer, fmt: string | null): Promise<LineResult[]>;
  close(): Promise<void>;
}

function startPool(): Pool | null {
  const n = Math.min(2, Math.max(0, availableParallelism()));
  if (n < 2 || process.env.PROOFLOOP_INGEST_WORKERS === '0') return null;
  const workers: Worker[] = [];
  const waiting = new Map<number, { resolve: (r: LineResult[]) => void; reject: (e: Error) => void }>();
  let next = 0;
  let broken: Error | null = null;
  for (let i = 0; i < n; i++) {
    const w = startWorker(import.meta.url, './worker.ts', './ingest-worker.js', {
      resourceLimits: { maxYoungGenerationSizeMb: YOUNG_MB },
    });
    if (!w) break;
    w.on('message', (m: { id: number; packed: PackedBlock }) => {
      const p = waiting.get(m.id);
      waiting.delete(m.id);
      p?.resolve(unpackResults(m.packed));
    });
    w.on('error', (e) => {
      broken = e;
      for (const p of waiting.values()) p.reject(e);
      waiting.clear();
    });
    workers.push(w);
  }
  if (workers.length === 0) return null;
  return {
    parse(buf, fmt) {
      if (broken) return Promise.reject(broken);
      const id = next++;
      return new Promise((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        const copy = new Uint8Array(buf.length);
        copy.set(buf);
        workers[id % workers.length]!.postMessage({ id, buf: copy, fmt }, [copy.buffer]);
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
    for await (const b of readBlocks(file, start, opts)) {
      const pending: Promise<ParsedBlock> =
        b.t === 'lines'
          ? p
              .parse(b.buf, opts.fmt ?? null)
              .then((results) => ({ t: 'lines', start: b.start, end: b.end, lines: b.lines, results }))
          : Promise.resolve(b);
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
