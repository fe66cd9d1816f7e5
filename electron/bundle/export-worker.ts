// A worker thread of the exporter: reads ranges of a run from its own read-only connection and
// sorts their events into ready lines and events to redact in order (export-chunks.ts), runs the
// detectors over finished chunks of the bundle's output, or folds a run's state over them.
import { parentPort, workerData } from 'node:worker_threads';
import { ZERO_HASH, type LedgerEvent } from '../../shared/protocol';
import { createRedactor, type RedactRules } from '../../shared/redact';
import { sha256Hex } from '../crypto';
import { openDatabase } from '../ledger/open';
import { firedRules, foldChunk, lineChunk, utf8 } from './export-chunks';
import type { RunState } from '../../shared/state';
import type { RedactionProfile } from './format';
import type { WorkerJob, WorkerReply } from './export-pool';

const { dbFile, profile, rules } = workerData as {
  dbFile: string;
  profile: RedactionProfile;
  rules: RedactRules | undefined;
};
const redactor = createRedactor(profile, { sha256: sha256Hex, rules });
/** Opened at the first read (the fold worker never reads). */
let queries: ReturnType<typeof prepare> | null = null;

function prepare() {
  const db = openDatabase(dbFile, { readonly: true });
  return {
    runNo: db.prepare('SELECT run_no FROM runs WHERE run_id = ?').pluck(),
    // The ledger's own queries (electron/ledger/ledger.ts: readRange, prevHash), rows as arrays.
    range: db
      .prepare(
        'SELECT seq, kind, v, at, payload, hash, digest FROM events WHERE run_no = ? AND seq >= ? AND seq <= ? ORDER BY seq',
      )
      .raw(true),
    prevHash: db
      .prepare('SELECT hash FROM events WHERE run_no = ? AND seq < ? ORDER BY seq DESC LIMIT 1')
      .pluck(),
  };
}

/** The states being folded, per run, in this worker (fold jobs of a run all come here, in order). */
const states = new Map<string, RunState>();

type Row = [number, string, number, string, string, Buffer, Buffer | null];

/** The stored events of seqs from..to, as Ledger.iterate gives them. */
function* events(runId: string, from: number, to: number): Generator<LedgerEvent> {
  const q = (queries ??= prepare());
  const runNo = q.runNo.get(runId) as number | undefined;
  if (runNo === undefined) return;
  const before = q.prevHash.get(runNo, from) as Buffer | undefined;
  let prev = before ? before.toString('hex') : ZERO_HASH;
  for (const [seq, kind, v, at, payload, hash, digest] of q.range.all(runNo, from, to) as Row[]) {
    const e: LedgerEvent = {
      seq,
      run_id: runId,
      kind,
      v,
      at,
      payload: JSON.parse(payload) as Record<string, unknown>,
      prev,
      hash: hash.toString('hex'),
    };
    if (digest) e.digest = digest.toString('hex');
    prev = e.hash;
    yield e;
  }
}

parentPort!.on('message', (job: WorkerJob) => {
  let reply: WorkerReply;
  try {
    if (job.type === 'read') {
      const chunk = lineChunk(events(job.runId, job.from, job.to), redactor);
      parentPort!.postMessage({ id: job.id, chunk }, [chunk.bytes.buffer as ArrayBuffer]);
      return;
    } else if (job.type === 'scan') {
      reply = { id: job.id, rules: firedRules(utf8(job.bytes), profile) };
    } else {
      const state = foldChunk(states.get(job.runId), job.runId, utf8(job.bytes));
      if (job.last) states.delete(job.runId);
      else states.set(job.runId, state);
      reply = { id: job.id, state: job.last ? state : null };
    }
  } catch (e) {
    reply = { id: job.id, error: (e as Error).message };
  }
  parentPort!.postMessage(reply);
});
