import type { Worker } from 'node:worker_threads';
import { startWorker } from '../workers';
import { decodeRequest, type Encoding } from './decode';
import { DecodeError, type Decoded, type Signal } from './types';

export type DecodeAnswer =
  { id: number; ok: true; decoded: Decoded } | { id: number; ok: false; refused: boolean; message: string };

/**
 * Request bodies decoded in a thread of their own, so that the receiver's thread, which appends
 * and commits, does not also decode: on 2 cores the next requests are decoded while one commits.
 * Protobuf decoding (protobufjs, then the walk of decode.ts) measured ~48 µs a span of
 * bench/otlp.ts's requests, JSON ~15; the records come back by structured clone, whose reading
 * here measured ~6 µs a span. Answers come in the order bodies were sent (one thread, FIFO), so
 * requests keep their order of arrival.
 *
 * Without a worker (a bundle without its file) or once it has failed, bodies are decoded in this
 * thread, as before: the same records and the same refusals either way.
 */
export class DecodeThread {
  private next = 0;
  private readonly waiting = new Map<number, { resolve: (d: Decoded) => void; reject: (e: Error) => void }>();
  private failed = false;

  private constructor(private readonly worker: Worker | null) {
    if (!worker) {
      this.failed = true;
      return;
    }
    worker.unref();
    worker.on('message', (a: DecodeAnswer) => {
      const w = this.waiting.get(a.id);
      if (!w) return;
      this.waiting.delete(a.id);
      if (a.ok) w.resolve(a.decoded);
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

  static start(): DecodeThread {
    let w: Worker | null = null;
    try {
      w = startWorker(import.meta.url, './decode-worker.ts', './otlp-decode-worker.js');
    } catch {
      w = null;
    }
    return new DecodeThread(w);
  }

  /** Decodes in this thread. */
  static none(): DecodeThread {
    return new DecodeThread(null);
  }

  /** The body's records; throws DecodeError for a body that is not an OTLP request. */
  decode(signal: Signal, body: Buffer, encoding: Encoding): Promise<Decoded> {
    if (this.failed || !this.worker) {
      try {
        return Promise.resolve(decodeRequest(signal, body, encoding));
      } catch (e) {
        return Promise.reject(e as Error);
      }
    }
    const id = ++this.next;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker!.postMessage({ id, signal, body, encoding });
    });
  }

  close(): void {
    this.failed = true;
    void this.worker?.terminate();
  }
}
