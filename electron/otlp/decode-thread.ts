import type { Worker } from 'node:worker_threads';
import { startWorker } from '../workers';
import type { Encoding } from './decode';
import { RunKeys } from './run-keys';
import { prepareRequest, type DecodeAnswer, type DecodeControl, type Prepared } from './prepared';
import { DecodeError, type Signal } from './types';

/**
 * Request bodies decoded, keyed to their runs, mapped to events, serialised as canonical JSON,
 * redacted and checked in a thread of their own (run-keys.ts), so that the receiver's thread, which
 * chains and commits, does none of it: on 2 cores the next requests are prepared while one commits.
 * Measured before the mapping moved here (bench/otlp.ts's requests): protobuf decoding ~48 µs a
 * span, JSON ~15, mapping ~45-74, canonical JSON ~17 an event; what comes back is strings, cheap
 * to clone. Answers come in the order bodies were sent (one thread, FIFO), and bodies are keyed
 * in that order, so requests keep their order of arrival.
 *
 * Without a worker (a bundle without its file) or once it has failed, bodies are prepared in this
 * thread, as before: the same events and the same refusals either way (what runs were keyed by
 * the thread that failed is not known here: a trace's later spans may then start a run of their own).
 */
export class DecodeThread {
  private next = 0;
  private readonly waiting = new Map<
    number,
    { resolve: (d: Prepared) => void; reject: (e: Error) => void }
  >();
  private failed = false;
  /** Keying and mapping state when bodies are prepared in this thread. */
  private readonly here = new RunKeys();

  private worker: Worker | null = null;
  /** Starts the worker on the first body: null when it cannot be started (bodies are prepared here). */
  private starter: (() => Worker | null) | null;

  private constructor(starter: (() => Worker | null) | null) {
    this.starter = starter;
    if (!starter) this.failed = true;
  }

  /** The worker, started now if this is the first body (see `start`). */
  private started(): Worker | null {
    if (this.starter) {
      const starter = this.starter;
      this.starter = null;
      this.attach(starter());
    }
    return this.worker;
  }

  private attach(worker: Worker | null): void {
    if (!worker) {
      this.failed = true;
      return;
    }
    this.worker = worker;
    worker.unref();
    worker.on('message', (a: DecodeAnswer) => {
      const w = this.waiting.get(a.id);
      if (!w) return;
      this.waiting.delete(a.id);
      if (a.ok) w.resolve(a.prepared);
      else w.reject(a.refused ? new DecodeError(a.message) : new Error(a.message));
    });
    const fail = (why: string) => {
      this.failed = true;
      for (const w of this.waiting.values()) w.reject(new Error(`the OTLP decode thread ${why}`));
      this.waiting.clear();
    };
    worker.on('error', (e) => fail(`failed: ${e.message}`));
    worker.on('exit', (code) => fail(`exited (${code})`));
  }

  /**
   * The worker is started when the first body comes, not with the receiver: `serve` and the app
   * receive OTLP by default, and most of them never get a span. Started with them, the thread's
   * own heap and its protobuf code held ~17 MB of `serve`'s RSS on a folder of 5 small sessions
   * (82.5-83.5 MB against 65.9-66.5 with --no-otlp, /proc/<pid>/smaps), and its start let the
   * process leave lean mode (lean.ts). Keys and mapping state start from nothing in it,
   * as after a reset: what was told before it started (a reset, a released key) is already so.
   */
  static start(): DecodeThread {
    return new DecodeThread(() => {
      try {
        return startWorker(import.meta.url, './decode-worker.ts', './otlp-decode-worker.js');
      } catch {
        return null;
      }
    });
  }

  /** Prepares in this thread. */
  static none(): DecodeThread {
    return new DecodeThread(null);
  }

  /** The body's parts; throws DecodeError for a body that is not an OTLP request. */
  prepare(signal: Signal, body: Buffer, encoding: Encoding): Promise<Prepared> {
    const worker = this.started();
    if (this.failed || !worker) {
      try {
        return Promise.resolve(prepareRequest(this.here, signal, body, encoding));
      } catch (e) {
        return Promise.reject(e as Error);
      }
    }
    const id = ++this.next;
    // Redacted and checked there too, always. Before, this thread took that over when two bodies
    // waited there; since prepareItem skips the redaction walk where nothing may be replaced,
    // doing it here (parsing the text back, then the walk) cost more than it took off the decode
    // thread: alternating at 8 in flight, 63-79 -> 48-52 µs a span here, +10 there, less in all.
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      worker.postMessage({ id, signal, body, encoding });
    });
  }

  /** A new ledger: keys and mapping state start from nothing (for bodies sent from now on). */
  reset(): void {
    this.here.reset();
    this.tell({ control: 'reset' });
  }

  /** The key's run let its writer go (RunKeys.released). */
  released(key: string): void {
    this.here.released(key);
    this.tell({ control: 'released', key });
  }

  close(): void {
    this.failed = true;
    this.starter = null;
    void this.worker?.terminate();
  }

  private tell(m: DecodeControl): void {
    if (!this.failed && this.worker) this.worker.postMessage(m);
  }
}
