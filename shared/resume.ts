/**
 * Whether `proofloop resume` can continue a run ProofLoop executed, and if not, why not, in words
 * for the run's header. Mirrors RunnerHost.resume (electron/runner/host.ts): it continues the
 * simulated agent from the run's ledger (state rebuilt, recorded steps not asked of the model again)
 * when the run's writer died before its end, or it ended in `run_failed` of a kind the host can
 * repair (the model process crashed or erred, the host failed). A verdict or a spent budget is the
 * run's real end: resuming would not change it.
 */

/** run_failed error types resume repairs (RunnerHost.resume). */
export const RESUMABLE_ERRORS: ReadonlySet<string> = new Set(['model_crash', 'model_error', 'host_error']);

export interface ResumeFacts {
  source: string;
  status: string;
  /** A process holds the run's writer now. */
  writing: boolean;
  /** The agent of its run_started (`sim` for the simulated one); null when it has none. */
  agent: string | null;
  /** The kind and payload of its last lifecycle event (run_completed, run_failed), if any. */
  end: { kind: string; payload: Record<string, unknown> } | null;
}

/** `why` says it in a sentence (the tooltip); `short` in a few words (beside the button). */
export type Resumability = { ok: boolean; why: string; short: string };

export function resumability(f: ResumeFacts): Resumability {
  if (f.source !== 'executed')
    return {
      ok: false,
      short: 'a record, not resumable',
      why: 'only runs ProofLoop executed can be resumed: this one is a record to read',
    };
  if (f.agent !== null && f.agent !== 'sim')
    return {
      ok: false,
      short: 'a real agent: rerun instead',
      why: `a real agent's run (${f.agent}) cannot be resumed: its agent's own state died with it; Rerun starts the task again`,
    };
  if (f.end?.kind === 'run_completed')
    return {
      ok: false,
      short: 'ended by its verdict: rerun instead',
      why: 'the run completed: its verdict (or its spent budget) is its end, which resuming would not change; Rerun starts the task again',
    };
  if (f.end?.kind === 'run_failed') {
    const type = typeof f.end.payload.error_type === 'string' ? f.end.payload.error_type : '';
    if (RESUMABLE_ERRORS.has(type))
      return {
        ok: true,
        short: `resumable after ${type.replace('_', ' ')}`,
        why: `the ${type.replace('_', ' ')} is repaired by continuing from the ledger: recorded steps are not asked of the model again`,
      };
    return {
      ok: false,
      short: `${type || 'error'}: not resumable, rerun instead`,
      why: `the run failed with ${type || 'an error'}, which resume cannot repair (it continues only after a model crash or error or a host error); Rerun starts the task again`,
    };
  }
  if (f.writing) return { ok: false, short: 'still running', why: 'the run is still being written' };
  if (f.status === 'running')
    return {
      ok: true,
      short: 'its writer stopped',
      why: 'its writer stopped before the run ended: resume continues from the ledger without asking the model again for recorded steps',
    };
  return { ok: false, short: 'not started', why: 'the run has not started' };
}
