import { parentPort } from 'node:worker_threads';
import type { Encoding } from './decode';
import { RunKeys } from './run-keys';
import { DecodeError, type Signal } from './types';
import { prepareRequest, type DecodeAnswer, type DecodeControl } from './prepared';

/**
 * The receiver's decode thread (decode-thread.ts): a request body to its parts per run, as
 * prepareRequest does in the receiver's thread; a DecodeError comes back as its message. The
 * keying and mapping state lives here, told of new ledgers and released runs in order with bodies.
 */
const keys = new RunKeys();

type Message = { id: number; signal: Signal; body: Uint8Array; encoding: Encoding } | DecodeControl;

parentPort!.on('message', (m: Message) => {
  if ('control' in m) {
    if (m.control === 'reset') keys.reset();
    else keys.released(m.key);
    return;
  }
  let answer: DecodeAnswer;
  try {
    answer = {
      id: m.id,
      ok: true,
      prepared: prepareRequest(
        keys,
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
