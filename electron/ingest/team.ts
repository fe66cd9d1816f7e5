import { ProofloopError } from '../../shared/result';
import { Ledger } from '../ledger';
import type { LedgerEngine } from '../ledger/engine';
import { pushRuns, type PushResult } from '../ledger/push';
import { SqliteEngine } from '../ledger/sqlite-engine';
import { ingestFolder, type IngestProgress, type IngestSummary } from './index';

export interface TeamImport {
  imported: IngestSummary;
  /** Each imported run as it now is in the engine (copied, extended, unchanged). */
  pushed: PushResult[];
  /** Runs the engine refused (a run of that id whose chain differs), each by name and why. */
  refused: { run_id: string; error: string }[];
}

/**
 * Imports a folder into another ledger (a team's PostgreSQL server): the folder is imported as a
 * runs folder is (ingest/: adapters, sequencer, seal), into its own SQLite ledger, which keeps what
 * an import must remember between runs (each file's offset and seal, so only new bytes are read
 * next time), and then every imported run goes to `engine` through the interface (push.ts: the same
 * seqs, bytes, hashes and carried digests; a run there already is extended by what is new). So the
 * runs verify identically in both, and importing the folder again sends only what grew.
 */
export async function importIntoEngine(
  folder: string,
  engine: LedgerEngine,
  onProgress?: IngestProgress,
): Promise<TeamImport> {
  const ledger = Ledger.open(folder);
  try {
    const imported = await ingestFolder(ledger, onProgress);
    const from = new SqliteEngine(ledger);
    const pushed: PushResult[] = [];
    const refused: TeamImport['refused'] = [];
    for (const run of ledger.runs()) {
      if (run.source !== 'imported') continue;
      try {
        pushed.push(...(await pushRuns(from, engine, [run.run_id])));
      } catch (e) {
        if (!(e instanceof ProofloopError) || e.code !== 'conflict') throw e;
        refused.push({ run_id: run.run_id, error: e.message });
      }
    }
    return { imported, pushed, refused };
  } finally {
    ledger.close();
  }
}
