import { statSync } from 'node:fs';
import { startWorkers } from '../workers';
import { analyzeHere, type Analyze, type LineBatch } from './lines';

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

/** How many workers for a bundle file: `requested`, else 1 for a large bundle, else none. */
export function workersFor(file: string, requested: number | undefined): number {
  if (requested !== undefined) return requested;
  try {
    return statSync(file).size >= WORKER_THRESHOLD ? 1 : 0;
  } catch {
    return 0;
  }
}

interface Job {
  bytes: Uint8Array;
  runId: string;
  resolve: (b: LineBatch) => void;
  reject: (e: Error) => void;
}

/**
 * Starts `n` workers; null when none can be started (no built worker file), so the caller analyses
 * in this thread. A job goes to the worker with the fewest pending, or, with `helpAt`, is done in
 * this thread when every worker has that many pending already. A worker that fails (it should not)
 * has its jobs done again in this thread: the bytes are shared with workers (LineFeed), not moved,
 * for that.
 */
export function startVerifyPool(n: number, helpAt = Infinity): VerifyPool | null {
  if (n <= 0) return null;
  const started = startWorkers(n, import.meta.url, './verify-worker.ts', './bundle-verify-worker.js');
  if (!started) return null;
  const slots = started.map((w) => ({ w, jobs: new Map<number, Job>(), dead: false }));
  let closing = false;
  const here = (job: Job) => analyzeHere(job.bytes, job.runId).then(job.resolve, job.reject);
  for (const slot of slots) {
    const lost = () => {
      if (closing || slot.dead) return;
      slot.dead = true;
      void slot.w.terminate();
      for (const job of slot.jobs.values()) void here(job);
      slot.jobs.clear();
    };
    slot.w.on('message', (r: VerifyReply) => {
      const job = slot.jobs.get(r.id);
      slot.jobs.delete(r.id);
      if (!job) return;
      if ('error' in r) job.reject(new Error(r.error));
      else job.resolve(r.batch);
    });
    slot.w.on('error', lost);
    slot.w.on('exit', lost);
  }
  let nextId = 0;
  return {
    size: slots.length,
    analyze: (bytes, runId) =>
      new Promise<LineBatch>((resolve, reject) => {
        const job: Job = { bytes, runId, resolve, reject };
        let slot: (typeof slots)[number] | null = null;
        for (const s of slots) if (!s.dead && (!slot || s.jobs.size < slot.jobs.size)) slot = s;
        if (!slot || closing || slot.jobs.size >= helpAt) return void here(job);
        const id = nextId++;
        slot.jobs.set(id, job);
        const message: VerifyJob = { id, bytes, runId };
        slot.w.postMessage(message);
      }),
    close: async () => {
      closing = true;
      const ended = new Error('verification ended');
      for (const s of slots) for (const job of s.jobs.values()) job.reject(ended);
      await Promise.all(slots.map((s) => s.w.terminate()));
    },
  };
}
