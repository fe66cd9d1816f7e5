import { parentPort } from 'node:worker_threads';
import { parseBlock } from './block';

/** Parse worker: blocks of complete lines in, parsed lines out (see parallel.ts). */
const EMPTY = {};
parentPort?.on('message', (m: { id: number; buf: Uint8Array }) => {
  const results = parseBlock(m.buf);
  // A chained line's payload object is not needed past parsing (its JSON text is): not copied back.
  for (const r of results) if (r.t === 'ev' && r.fmt === 'proofloop') r.payload = EMPTY;
  parentPort!.postMessage({ id: m.id, results });
});
