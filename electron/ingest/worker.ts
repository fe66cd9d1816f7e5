import { parentPort } from 'node:worker_threads';
import { eachLineResult } from './block';
import { outlineResult, storeRedacted } from './outline';
import { Packer } from './transfer';

/**
 * Parse worker: blocks of complete lines in, parsed lines out, packed (see parallel.ts, transfer.ts).
 * Given an artifacts folder, it also moves the events' large values there, so a line of MBs comes
 * back as an event of KBs.
 */
parentPort?.on(
  'message',
  (m: { id: number; buf: Uint8Array; fmt: string | null; artifacts: string | null }) => {
    // Each line packed as soon as it is parsed (see Packer): ~1 event per 200 bytes read here.
    const packer = new Packer(m.buf.length / 200);
    const store = m.artifacts !== null ? storeRedacted(m.artifacts) : null;
    eachLineResult(m.buf, m.fmt, (r) => {
      if (store !== null) outlineResult(r, store);
      packer.add(r);
    });
    const packed = packer.finish();
    const moved = new Set<ArrayBuffer>([packed.cols.buffer as ArrayBuffer]);
    for (const [, r] of packed.other) {
      for (const p of r.t === 'ev' ? [r] : r.t === 'multi' ? r.list : []) {
        const b = p.t === 'ev' ? p.origUtf8 : undefined;
        // Given, not copied, when the bytes are the whole of their buffer (a moved event's MBs are).
        if (b && b.byteOffset === 0 && b.byteLength === b.buffer.byteLength)
          moved.add(b.buffer as ArrayBuffer);
      }
    }
    parentPort!.postMessage({ id: m.id, packed }, [...moved]);
  },
);
