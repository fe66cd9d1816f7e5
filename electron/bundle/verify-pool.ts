import { statSync } from 'node:fs';
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../workers';
import type { Analyze, LineBatch } from './lines';

export interface VerifyJob {
  id: number;
  bytes: Uint8Array;
  runId: string;
}
export type VerifyReply = { id: number; batch: LineBatch } | { id: number; error: string };

/** Worker threads that analyse blocks of lines for verify-bundle. */
export interface VerifyPool {
  analyze: Analyze;
  size: number;
  close(): Promise<void>;
}

/** Bundles at least this large (compressed) are verified with worker threads (start-up ~30 ms). */
const WORKER_THRESHOLD = 2 * 1024 * 1024;

/** How many workers for a bundle file: `requested`, else 2 for a large bundle, else none. */
export function workersFor(file: string, requested: number | undefined): number {
  if (requested !== undefined) return requested;
  try {
    return statSync(file).size >= WORKER_THRESHOLD ? 2 : 0;
  } catch {
    return 0;
  }
}

/**
 * Starts `n` workers (a job goes to the one with the fewest pending); null when none can be
 * started (no built worker file), so the caller analyses in this thread.
 */
export function startVerifyPool(n: number): VerifyPool | null {
  if (n <= 0) return null;
  const slots: { w: Worker; pending: number }[] = [];
  for (let i = 0; i < n; i++) {
    const w = startWorker(import.meta.url, './verify-worker.ts', './bundle-verify-worker.js');
    if (!w) break;
    slots.push({ w, pending: 0 });
  }
  if (slots.length < n) {
    for (const s of slots) void s.w.terminate();
    return null;
  }
  const waiting = new Map<number, { resolve: (b: LineBatch) => void; reject: (e: Error) => void }>();
  let failure: Error | null = null;
  let closing = false;
  const failAll = (e: Error) => {
    failure ??= e;
    for (const p of waiting.values()) p.reject(e);
    waiting.clear();
  };
  for (const slot of slots) {
    slot.w.on('message', (r: VerifyReply) => {
      slot.pending--;
      const p = waiting.get(r.id);
      waiting.delete(r.id);
      if (!p) return;
      if ('error' in r) p.reject(new Error(r.error));
      else p.resolve(r.batch);
    });
    slot.w.on('error', failAll);
    slot.w.on('exit', (code) => {
      if (!closing || waiting.size > 0) failAll(new Error(`a verify worker stopped (exit code ${code})`));
    });
  }
  let nextId = 0;
  return {
    size: slots.length,
    analyze: (bytes, runId) => {
      if (failure) return Promise.reject(failure);
      const slot = slots.reduce((a, b) => (b.pending < a.pending ? b : a));
      const id = nextId++;
      slot.pending++;
      return new Promise<LineBatch>((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        const job: VerifyJob = { id, bytes, runId };
        slot.w.postMessage(job, [bytes.buffer as ArrayBuffer]);
      });
    },
    close: async () => {
      closing = true;
      failAll(new Error('verification ended'));
      await Promise.all(slots.map((s) => s.w.terminate()));
    },
  };
}
