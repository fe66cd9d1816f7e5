import type { RedactRules, Redactor } from '../../shared/redact';
import type { RunState } from '../../shared/state';
import { startWorkers } from '../workers';
import { eventReader, firedRules, foldChunk, lineChunk, utf8, type LineChunk } from './export-chunks';
import type { RedactionProfile } from './format';

type JobBody =
  | { type: 'read'; runId: string; from: number; to: number }
  | { type: 'scan'; bytes: Uint8Array }
  | { type: 'fold'; runId: string; bytes: Uint8Array; last: boolean };
export type WorkerJob = JobBody & { id: number };
export type WorkerReply =
  | { id: number; chunk: LineChunk }
  | { id: number; rules: string[] }
  | { id: number; state: RunState | null }
  | { id: number; error: string };

/** Where the exporter gets its chunks of lines and has its output scanned. */
export interface ChunkSource {
  read(runId: string, from: number, to: number): Promise<LineChunk>;
  /** The rules of the detectors that fire in UTF-8 bytes (every detector of the profile). */
  scan(bytes: Uint8Array): Promise<string[]>;
  /**
   * Folds a run's state over its next finished chunk (calls for one run in order); the last call
   * gives the state, the others null.
   */
  fold(runId: string, bytes: Uint8Array, last: boolean): Promise<RunState | null>;
  close(): Promise<void>;
}

/** Everything in this thread (small exports, or no built worker). */
export function inThreadSource(dbFile: string, redactor: Redactor, profile: RedactionProfile): ChunkSource {
  const states = new Map<string, RunState>();
  const reader = eventReader(dbFile);
  return {
    read: async (runId, from, to) => lineChunk(reader.read(runId, from, to), redactor),
    scan: async (bytes) => firedRules(utf8(bytes), profile),
    fold: async (runId, bytes, last) => {
      const s = foldChunk(states.get(runId), runId, utf8(bytes));
      states.set(runId, s);
      return last ? s : null;
    },
    close: async () => reader.close(),
  };
}

/**
 * Worker threads: `n` that read (a connection each) and scan, a job going to the one with the
 * fewest pending, and one more that folds the states, so the sequential fold runs beside the rest.
 * Null when no worker can be started (the caller works in this thread).
 */
export function workerSource(
  n: number,
  init: { dbFile: string; profile: RedactionProfile; rules: RedactRules | undefined },
): ChunkSource | null {
  const started = startWorkers(n + 1, import.meta.url, './export-worker.ts', './bundle-export-worker.js', {
    workerData: init,
  });
  if (!started) return null;
  const workers = started.map((w) => ({ w, pending: 0 }));
  const folder = workers.pop()!;
  const waiting = new Map<number, { resolve: (r: WorkerReply) => void; reject: (e: Error) => void }>();
  let failure: Error | null = null;
  const failAll = (e: Error) => {
    failure ??= e;
    for (const p of waiting.values()) p.reject(e);
    waiting.clear();
  };
  for (const slot of [...workers, folder]) {
    slot.w.on('message', (r: WorkerReply) => {
      slot.pending--;
      const p = waiting.get(r.id);
      waiting.delete(r.id);
      if (!p) return;
      if ('error' in r) p.reject(new Error(r.error));
      else p.resolve(r);
    });
    slot.w.on('error', failAll);
    slot.w.on('exit', (code) => {
      if (waiting.size > 0) failAll(new Error(`an export worker stopped (exit code ${code})`));
    });
  }
  let nextId = 0;
  const send = (job: JobBody): Promise<WorkerReply> => {
    if (failure) return Promise.reject(failure);
    const slot = job.type === 'fold' ? folder : workers.reduce((a, b) => (b.pending < a.pending ? b : a));
    const id = nextId++;
    slot.pending++;
    return new Promise((resolve, reject) => {
      waiting.set(id, { resolve, reject });
      slot.w.postMessage({ ...job, id });
    });
  };
  return {
    read: async (runId, from, to) =>
      ((await send({ type: 'read', runId, from, to })) as { chunk: LineChunk }).chunk,
    scan: async (bytes) => ((await send({ type: 'scan', bytes })) as { rules: string[] }).rules,
    fold: async (runId, bytes, last) =>
      ((await send({ type: 'fold', runId, bytes, last })) as { state: RunState | null }).state,
    close: async () => {
      await Promise.all([...workers, folder].map((s) => s.w.terminate()));
    },
  };
}
