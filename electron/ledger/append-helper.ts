import { MessageChannel, receiveMessageOnPort, type MessagePort, type Worker } from 'node:worker_threads';
import { startWorker } from '../workers';
import type { ChunkItems, LinkedChunk } from './chunk';

/**
 * A second thread for large appends. `appendBatch` is synchronous (it returns once the commit is
 * durable), so the ledger's thread cannot await a worker: it posts chunks of items, and takes the
 * answers in order with `receiveMessageOnPort`, sleeping in `Atomics.wait` on a counter the helper
 * bumps after each answer. While the helper redacts, checks, digests and chains the next chunks,
 * the ledger's thread inserts the ones before: one batch uses both cores (bench/ingest.ts).
 *
 * Where the line between the two threads lies was measured with CPU profiles of both (10,000-item
 * batches): with the helper only digesting (chaining and mirror lines here), it idled ~43%; with it
 * chaining and writing the mirror lines too (now), this thread waits ~10-30% and the helper idles
 * ~20-25%, mostly at each batch's start and end (the first chunk; the last inserts and the commit),
 * which a synchronous call cannot overlap with the next batch.
 */
export interface ChunkJob extends ChunkItems {
  job: number;
  runId: string;
  /** The seq of the chunk's first item. */
  seq: number;
  /** The hash the first item links to; null: the last hash of the job's chunk before. */
  prev: string | null;
  /** Whether the run keeps a JSONL mirror (its lines are built only then). */
  lines: boolean;
}

export type ChunkDone =
  | ({ job: number; ok: true; redacted: [number, string][] } & LinkedChunk)
  | { job: number; ok: false; bad: boolean; message: string };

/** The helper failed for a reason of its own: the append is done again in the ledger's thread. */
export class HelperFailed extends Error {}

/**
 * Whether this thread may block in Atomics.wait: Node's and Electron's main process may (Electron
 * creates its isolate with kAllowAtomicsWait), a browser's main thread may not. Without it, the
 * ledger does every append in its own thread.
 */
function canWait(): boolean {
  try {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 1, 0);
    return true;
  } catch {
    return false;
  }
}

/** A chunk takes milliseconds; this long without an answer means the helper is gone. */
const ANSWER_MS = 30_000;

export class AppendHelper {
  private job = 0;
  private failed: string | null = null;

  private constructor(
    private readonly worker: Worker,
    private readonly port: MessagePort,
    private readonly answered: Int32Array,
  ) {
    // Seen only between appends (a blocked thread takes no events); the next append then falls back.
    worker.on('error', (e) => (this.failed = e.message));
    worker.on('exit', (code) => (this.failed ??= `the append helper exited (${code})`));
  }

  /** null when there is no helper to start (e.g. a bundle without the worker file). */
  static start(): AppendHelper | null {
    if (!canWait()) return null;
    const { port1, port2 } = new MessageChannel();
    const signal = new SharedArrayBuffer(4);
    let w: Worker | null = null;
    try {
      w = startWorker(import.meta.url, './append-worker.ts', './append-worker.js', {
        workerData: { port: port2, signal },
        transferList: [port2],
      });
    } catch {
      w = null;
    }
    if (!w) {
      port1.close();
      return null;
    }
    // Neither keeps a process alive that has nothing else to do.
    w.unref();
    port1.unref();
    return new AppendHelper(w, port1, new Int32Array(signal));
  }

  /** Starts a job: answers still coming for an earlier one (an append that failed) are dropped. */
  begin(): number {
    if (this.failed) throw new HelperFailed(this.failed);
    return ++this.job;
  }

  /** Chunks of a job are sent in seq order: the helper chains each to the one before. */
  send(chunk: ChunkJob): void {
    this.port.postMessage(chunk);
  }

  /** The answer to the job's next chunk; with `wait` false, undefined when it has not come yet. */
  take(wait: boolean): ChunkDone | undefined {
    for (;;) {
      const seen = Atomics.load(this.answered, 0);
      const m = receiveMessageOnPort(this.port);
      if (m) {
        const done = m.message as ChunkDone;
        if (done.job === this.job) return done;
        continue;
      }
      if (!wait) return undefined;
      if (Atomics.wait(this.answered, 0, seen, ANSWER_MS) === 'timed-out') {
        this.failed = `the append helper did not answer in ${ANSWER_MS / 1000} s`;
        throw new HelperFailed(this.failed);
      }
    }
  }

  /** For tests: ends the helper's thread as a crash would. */
  stopThread(): Promise<number> {
    return this.worker.terminate();
  }

  close(): void {
    this.port.close();
    void this.worker.terminate();
  }
}
