// A worker thread of the exporter: reads ranges of a run from its own read-only connection and
// sorts their events into ready lines and events to redact in order (export-chunks.ts), runs the
// detectors over finished chunks of the bundle's output, or folds a run's state over them.
import { parentPort, workerData } from 'node:worker_threads';
import { createRedactor, type RedactRules } from '../../shared/redact';
import { sha256Hex } from '../crypto';
import { eventReader, firedRules, foldChunk, lineChunk, utf8 } from './export-chunks';
import type { RunState } from '../../shared/state';
import type { RedactionProfile } from './format';
import type { WorkerJob, WorkerReply } from './export-pool';

const { dbFile, profile, rules } = workerData as {
  dbFile: string;
  profile: RedactionProfile;
  rules: RedactRules | undefined;
};
const redactor = createRedactor(profile, { sha256: sha256Hex, rules });
const reader = eventReader(dbFile);

/** The states being folded, per run, in this worker (fold jobs of a run all come here, in order). */
const states = new Map<string, RunState>();

parentPort!.on('message', (job: WorkerJob) => {
  let reply: WorkerReply;
  try {
    if (job.type === 'read') {
      const chunk = lineChunk(reader.read(job.runId, job.from, job.to), redactor);
      parentPort!.postMessage({ id: job.id, chunk }, [chunk.bytes.buffer as ArrayBuffer]);
      return;
    } else if (job.type === 'scan') {
      reply = { id: job.id, rules: firedRules(utf8(job.bytes), profile) };
    } else {
      const state = foldChunk(states.get(job.runId), job.runId, utf8(job.bytes));
      if (job.last) states.delete(job.runId);
      else states.set(job.runId, state);
      reply = { id: job.id, state: job.last ? state : null };
    }
  } catch (e) {
    reply = { id: job.id, error: (e as Error).message };
  }
  parentPort!.postMessage(reply);
});
