import { existsSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { leaveLean } from './lean';

/**
 * Starts a worker thread on one of this project's worker modules. From TypeScript sources (tsx,
 * vitest) the worker registers tsx itself and imports `<name>.ts` beside the caller; from the
 * built bundles it runs `<built>.js` beside the bundle (scripts/build.mjs puts one next to each
 * bundle that uses it). Returns null when there is no worker to run, so callers can do the work
 * in this thread instead.
 */
export function startWorker(
  callerUrl: string,
  source: string,
  built: string,
  options: Omit<WorkerOptions, 'eval'> = {},
): Worker | null {
  // A worker is how a large job runs here: the process leaves lean mode (lean.ts).
  leaveLean();
  if (callerUrl.endsWith('.ts')) {
    const url = new URL(source, callerUrl).href;
    const code = `import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(url)}); })`;
    return new Worker(code, { ...options, eval: true });
  }
  const file = fileURLToPath(new URL(built, callerUrl));
  return existsSync(file) ? new Worker(file, options) : null;
}

/**
 * `n` workers on one module (see startWorker), or null when not all of them can be started (those
 * that did are stopped), so a pool is either whole or the caller works in this thread.
 */
export function startWorkers(
  n: number,
  callerUrl: string,
  source: string,
  built: string,
  options: Omit<WorkerOptions, 'eval'> = {},
): Worker[] | null {
  const workers: Worker[] = [];
  for (let i = 0; i < n; i++) {
    const w = startWorker(callerUrl, source, built, options);
    if (!w) {
      for (const s of workers) void s.terminate();
      return null;
    }
    workers.push(w);
  }
  return workers;
}

/**
 * Lowers the calling thread's priority by `levels` nice levels (at most to 19), for a worker that
 * is to give way to the thread that started it. On Linux a nice value is a thread's own
 * (setpriority(2) on pid 0 names the calling thread) and the threads it starts inherit it;
 * elsewhere it would lower the whole process, so it is left alone there, as when not permitted.
 */
export function lowerThreadPriority(levels: number): void {
  if (process.platform !== 'linux') return;
  try {
    setPriority(Math.min(19, getPriority() + levels));
  } catch {
    // not permitted: the thread keeps its parent's priority
  }
}
