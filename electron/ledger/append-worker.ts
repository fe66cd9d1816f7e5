import { workerData, type MessagePort } from 'node:worker_threads';
import { ProofloopError } from '../../shared/result';
import { finishItems, linkChunk } from './chunk';
import type { ChunkDone, ChunkJob } from './append-helper';

/**
 * The append helper's thread (append-helper.ts): redacts, checks, digests and chains the chunks of
 * a large append and writes their mirror lines, while the ledger's thread inserts the ones before.
 * A chunk carries the hash to link to, or null to link to the last hash of the chunk before it
 * (same job, sent in order).
 */
const { port, signal } = workerData as { port: MessagePort; signal: SharedArrayBuffer };
const answered = new Int32Array(signal);
let last = '';

port.on('message', (m: ChunkJob) => {
  let done: ChunkDone;
  try {
    const redacted = finishItems(m);
    const linked = linkChunk(m.runId, m.seq, m.prev ?? last, m, m.lines);
    last = linked.hashes.slice(-64);
    done = { job: m.job, ok: true, ...linked, redacted: redacted.map((i) => [i, m.jsons[i]!]) };
  } catch (e) {
    const bad = e instanceof ProofloopError && e.code === 'bad_args';
    done = { job: m.job, ok: false, bad, message: (e as Error).message };
  }
  port.postMessage(done);
  // The ledger's thread may be blocked in Atomics.wait on this count (it takes no events then).
  Atomics.add(answered, 0, 1);
  Atomics.notify(answered, 0);
});
