// A worker thread of verify-bundle: analyses blocks of complete events.jsonl lines (lines.ts) and
// sends back their compact results (typed arrays, transferred).
import { parentPort } from 'node:worker_threads';
import { analyzeBytes } from './lines';
import type { VerifyJob, VerifyReply } from './verify-pool';

parentPort!.on('message', (job: VerifyJob) => {
  let reply: VerifyReply;
  // Taken over by the main thread meanwhile (VerifyPool.steal): nothing to do.
  if (job.claim >= 0 && Atomics.compareExchange(job.claims, job.claim, 0, 1) !== 0) {
    reply = { id: job.id, taken: true };
    parentPort!.postMessage(reply);
    return;
  }
  try {
    const batch = analyzeBytes(job.bytes, job.runId, false);
    reply = { id: job.id, batch };
    parentPort!.postMessage(reply, [batch.seqs.buffer as ArrayBuffer, batch.flags.buffer as ArrayBuffer]);
    return;
  } catch (e) {
    reply = { id: job.id, error: (e as Error).message };
  }
  parentPort!.postMessage(reply);
});
