import { parentPort } from 'node:worker_threads';
import { decodeRequest, type Encoding } from './decode';
import { DecodeError, type Signal } from './types';
import type { DecodeAnswer } from './decode-thread';

/**
 * The receiver's decode thread (decode-thread.ts): a request body to its records, as
 * decodeRequest does in the receiver's thread; a DecodeError comes back as its message.
 */
parentPort!.on('message', (m: { id: number; signal: Signal; body: Uint8Array; encoding: Encoding }) => {
  let answer: DecodeAnswer;
  try {
    answer = {
      id: m.id,
      ok: true,
      decoded: decodeRequest(
        m.signal,
        Buffer.from(m.body.buffer, m.body.byteOffset, m.body.byteLength),
        m.encoding,
      ),
    };
  } catch (e) {
    answer = { id: m.id, ok: false, refused: e instanceof DecodeError, message: (e as Error).message };
  }
  parentPort!.postMessage(answer);
});
