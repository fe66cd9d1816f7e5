// A worker thread that prepares one part of a run diff (the later events of both runs: template,
// normalise) from the stored text the main thread read for it, while the main thread prepares the
// other part. It imports shared/diff/stored only: no SQLite, no protocol schemas, so it starts in
// ~25 ms of CPU (with the ledger and protocol modules it took ~110 ms, measured).
import { parentPort, workerData } from 'node:worker_threads';
import {
  KeyTable,
  newTrail,
  prepareStored,
  storedSide,
  type KeyedSide,
  type StoredChunks,
} from '../../shared/diff/stored';

export interface DiffWorkerResult {
  keys: string[];
  kindNames: string[];
  keyKind: number[];
  /** Per run, its part prepared, or null when its rows need the straightforward way. */
  sides: (Omit<KeyedSide, 'keys'> | null)[];
}

const { parts } = workerData as { parts: StoredChunks[] };
const table = new KeyTable(parts.map((p) => p.run_id));
const trail = newTrail();
const sides = parts.map((p, i) => {
  const side = storedSide(p);
  return side && prepareStored(side, table, i === 0 ? { leave: trail } : { follow: trail });
});
// The typed arrays move to the main thread without a copy; the key table is cloned once for both.
const result: DiffWorkerResult = {
  keys: table.keys,
  kindNames: table.kindNames,
  keyKind: table.keyKind,
  sides: sides.map((s) => s && { ...s, keys: undefined }),
};
const arrays = sides.flatMap((s) => (s ? [s.seqs, s.kindOf, s.keyOf, s.callOf] : []));
parentPort!.postMessage(
  result,
  arrays.map((a) => a.buffer as ArrayBuffer),
);
