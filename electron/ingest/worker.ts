import { parentPort } from 'node:worker_threads';
import { parseBlock } from './block';
import { outlineResults, storeRedacted } from './outline';
import { packResults } from './transfer';

/**
 * Parse worker: blocks of complete lines in, parsed lines out, packed (see parallel.ts, transfer.ts).
 * Given an artifacts folder, it also moves the events' large values there, so a line of MBs comes
 * back as an event of KBs.
 */
parentPort?.on(
  'message',
  (m: { id: number; buf: Uint8Array; fmt: string | null; artifacts: string | null }) => {
    const results = parseBlock(m.buf, m.fmt);
    if (m.artifacts !== null) outlineResults(results, storeRedacted(m.artifacts));
    const packed = packResults(results);
    parentPort!.postMessage({ id: m.id, packed }, [packed.cols.buffer as ArrayBuffer]);
  },
);
