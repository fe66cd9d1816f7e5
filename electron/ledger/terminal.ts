import { ProofloopError } from '../../shared/result';

/** What one writer may append beyond the ordinary (see Ledger.writer). */
export interface WriterRights {
  /** The host's resume: run_resumed is accepted after run_failed. */
  resume: boolean;
  /** Only event_annotated (a person adding to a run from the UI). */
  annotateOnly: boolean;
}

/** The run status each lifecycle kind leaves (as the runs table records it). */
const ENDS = new Map<string, 'completed' | 'failed'>([
  ['run_completed', 'completed'],
  ['run_failed', 'failed'],
]);

/**
 * A run's terminal event ends it: after run_completed or run_failed it takes only event_annotated,
 * and run_resumed from the host's resume of a failed run. Otherwise a crashed run could be made
 * to read as passed by appending a verdict and run_completed, and its chain would still verify.
 * Called under the write lock with the run's status before `items`; the batch is checked in order.
 */
export function checkAfterEnd(
  runId: string,
  status: string,
  items: readonly { kind: string }[],
  rights: WriterRights,
): void {
  let ended: string | null = status === 'completed' || status === 'failed' ? status : null;
  for (const [i, item] of items.entries()) {
    const where = items.length > 1 ? ` (item ${i + 1} of the batch)` : '';
    if (rights.annotateOnly && item.kind !== 'event_annotated') {
      throw new ProofloopError(
        'forbidden',
        `${item.kind}${where}: this caller may only append event_annotated to run ${runId}; other kinds are written by the host`,
      );
    }
    if (item.kind === 'event_annotated') continue;
    if (ended !== null) {
      if (item.kind === 'run_resumed' && ended === 'failed' && rights.resume) {
        ended = null;
        continue;
      }
      throw new ProofloopError(
        'run_ended',
        `${item.kind}${where}: run ${runId} has ${ended}; after run_completed or run_failed it takes only event_annotated` +
          (ended === 'failed' ? ' (and run_resumed from `proofloop resume`)' : ''),
      );
    }
    ended = ENDS.get(item.kind) ?? null;
  }
}
