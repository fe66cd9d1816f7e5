import { copyArtifacts, folderArtifactSource } from '../ledger/artifacts';
import type { LedgerEngine } from '../ledger/engine';
import type { HostWriter } from './session';

/**
 * On a ledger that does not read the host's run folders (a team's PostgreSQL server), a run's
 * artifacts (tool outputs, requests: written in `runDir` as it ran) go to the ledger as it ends, so
 * whoever opens the run there reads them whole. If that fails, the run says so in an annotation
 * (allowed after its end), and they stay in the local folder.
 */
export async function shareRunArtifacts(
  engine: LedgerEngine,
  runDir: string,
  writer: HostWriter,
): Promise<void> {
  const runId = writer.runId;
  try {
    const r = await copyArtifacts(folderArtifactSource(runDir), engine, runId);
    if (r.artifacts_missing > 0)
      throw new Error(`${r.artifacts_missing} of them could not be read back in ${runDir}`);
  } catch (e) {
    try {
      const at = (await engine.run(runId))?.head_seq ?? 0;
      if (at > 0)
        await writer.append('event_annotated', {
          target_seq: at,
          note: `the run's artifacts were not all stored in ${engine.location}: ${(e as Error).message}; they are in ${runDir}`,
        });
    } catch {
      // The writer itself failed (lock lost, server gone): nothing more can be said on the ledger.
    }
  }
}
