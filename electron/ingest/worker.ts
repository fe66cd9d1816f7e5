import { parentPort } from 'node:worker_threads';
import { eachLineResult } from './block';
import { outlineResult, storeRedacted } from './outline';
import { Packer } from './transfer';
import { lowerThreadPriority } from '../workers';

// A parse worker gives way to the thread that started it (the sequencer and SQLite inserts, which
// take the workers' blocks in file order): three busy threads on 2 cores shared them evenly, and
// the one in-order stage waited for a core (~5 s of 16 s runnable but not running at 1,000,000
// events) while the workers ran ahead of it. Relative, since in `serve` and the app the import
// thread that starts these is itself at nice 10. `proofloop open` of 1,000,000 events, alternated
// with the workers at its own priority: seed 000 lines 16.47/15.39 s against 17.48/16.45 s,
// chained lines 14.63/16.37 s against 15.91/16.59 s.
lowerThreadPriority(5);

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
