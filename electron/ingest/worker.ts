import { parentPort } from 'node:worker_threads';
import { parseBlock } from './block';
import { packResults } from './transfer';

/** Parse worker: blocks of complete lines in, parsed lines out, packed (see parallel.ts, transfer.ts). */
parentPort?.on('message', (m: { id: number; buf: Uint8Array; fmt: string | null }) => {
  const packed = packResults(parseBlock(m.buf, m.fmt));
  parentPort!.postMessage({ id: m.id, packed }, [packed.cols.buffer as ArrayBuffer]);
});
