import { statSync } from 'node:fs';
import { startWorkers } from '../workers';
import { analyzeHere, type Analyze, type LineBatch } from './lines';

export interface VerifyJob {
  id: number;
  bytes: Uint8Array;
  runId: string;
  /**
   * Who does the job: `claims[claim]` goes from 0 to 1 when the worker begins it, to 2 when this
   * thread takes it over (`steal`); whoever changes it first does it. -1: the worker does it.
   */
  claims: Int32Array;
  claim: number;
}
export type VerifyReply =
  { id: number; batch: LineBatch } | { id: number; error: string } | { id: number; taken: true };

/** Worker threads that analyse blocks of lines for verify-bundle. */
export interface VerifyPool {
  analyze: Analyze;
  size: number;
  /**
   * For when no more jobs will come: does here what is waiting for this thread, and the jobs the
   * workers have queued but not begun, all but the first of each (a worker would otherwise work
   * through its queue while this thread waits).
   */
  steal(): void;
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
  claim: number;
}

/** Claims for jobs in flight at once (beyond that, a job goes out without one: never stolen). */
const CLAIMS = 64;

/**
 * Starts `n` workers; null when none can be started (no built worker file), so the caller analyses
 * in this thread. A job goes to the worker with the fewest pending, or, with `helpAt`, waits for
 * this thread when every worker has that many pending already (taken a turn of the event loop later,
 * by a worker if one has room by then, else here). A worker that fails (it should not)
 * has its jobs done again in this thread: the bytes are shared with workers (LineFeed), not moved,
 * for that.
 */
export function startVerifyPool(n: number, helpAt = Infinity): VerifyPool | null {
  if (n <= 0) return null;
  const started = startWorkers(n, import.meta.url, './verify-worker.ts', './bundle-verify-worker.js');
  if (!started) return null;
  const slots = started.map((w) => ({ w, jobs: new Map<number, Job>(), dead: false }));
  const claims = new Int32Array(new SharedArrayBuffer(4 * CLAIMS));
  const freeClaims = Array.from({ length: CLAIMS }, (_, i) => CLAIMS - 1 - i);
  /** The claim of each job posted to a worker, until the worker replies. */
  const claimOf = new Map<number, number>();
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
      // The worker has seen the job's claim: it can serve another job.
      const claim = claimOf.get(r.id);
      if (claim !== undefined) {
        claimOf.delete(r.id);
        claims[claim] = 0;
        freeClaims.push(claim);
      }
      const job = slot.jobs.get(r.id);
      slot.jobs.delete(r.id);
      if (!job || 'taken' in r) return;
      if ('error' in r) job.reject(new Error(r.error));
      else job.resolve(r.batch);
    });
    slot.w.on('error', lost);
    slot.w.on('exit', lost);
  }
  let nextId = 0;
  const leastBusy = () => {
    let slot: (typeof slots)[number] | null = null;
    for (const s of slots) if (!s.dead && (!slot || s.jobs.size < slot.jobs.size)) slot = s;
    return slot;
  };
  /** Posts the job to the least busy worker if one has fewer than `helpAt` queued; false if none has. */
  const post = (job: Job): boolean => {
    const slot = leastBusy();
    if (!slot || closing || slot.jobs.size >= helpAt) return false;
    const id = nextId++;
    job.claim = freeClaims.pop() ?? -1;
    if (job.claim >= 0) claimOf.set(id, job.claim);
    slot.jobs.set(id, job);
    const message: VerifyJob = { id, bytes: job.bytes, runId: job.runId, claims, claim: job.claim };
    slot.w.postMessage(message);
    return true;
  };
  // Jobs no worker had room for, taken one per turn of the event loop (by then a worker may have
  // room again: its replies and the next inflated chunk come in between), else done here.
  const backlog: Job[] = [];
  const drain = () => {
    const job = backlog.shift();
    if (!job) return;
    if (backlog.length > 0) setImmediate(drain);
    if (!post(job)) void here(job);
  };
  return {
    size: slots.length,
    analyze: (bytes, runId) =>
      new Promise<LineBatch>((resolve, reject) => {
        const job: Job = { bytes, runId, resolve, reject, claim: -1 };
        if (!leastBusy() || closing) return void here(job);
        if (post(job)) return;
        backlog.push(job);
        if (backlog.length === 1) setImmediate(drain);
      }),
    steal: () => {
      // Claimed first, all of them, then done: a worker may begin one while this thread works.
      const mine = backlog.splice(0);
      for (const s of slots) {
        while (!s.dead && s.jobs.size >= 2) {
          // The last queued: the one the worker would come to last.
          const [id, job] = [...s.jobs].at(-1)!;
          if (job.claim < 0 || Atomics.compareExchange(claims, job.claim, 0, 2) !== 0) break;
          s.jobs.delete(id);
          mine.push(job);
        }
      }
      for (const job of mine) void here(job);
    },
    close: async () => {
      closing = true;
      const ended = new Error('verification ended');
      for (const job of backlog.splice(0)) job.reject(ended);
      for (const s of slots) for (const job of s.jobs.values()) job.reject(ended);
      await Promise.all(slots.map((s) => s.w.terminate()));
    },
  };
}
