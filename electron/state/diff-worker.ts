// A worker thread that prepares one side of a run diff (read, parse, normalise) from its own
// read-only connection, while the main thread prepares the other.
import { parentPort, workerData } from 'node:worker_threads';
import { prepareSide } from '../../shared/diff';
import { openDatabase } from '../ledger/open';
import { diffEvents } from './diff-read';

const { file, runId, to } = workerData as { file: string; runId: string; to: number };
const db = openDatabase(file, { readonly: true });
try {
  parentPort!.postMessage(prepareSide({ run_id: runId, events: diffEvents(db, runId, to) }));
} finally {
  db.close();
}
