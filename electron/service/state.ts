import type { Ledger } from '../ledger';
import { changesAt, stateAt } from '../state';
import { diffRunsExplained } from '../runner/agent-diff';
import { withSessionDecisions } from '../state/cross-check';
import type { Handler as H } from './handler';
import { replayVerdict } from '../state/replay-verdict';

/** Handlers of shared/api/state.ts: state at a seq, what changed at a seq, and the diff of two runs. */
export function stateHandlers(getLedger: () => Ledger) {
  const at: H<'state.at'> = ({ run_id, seq, full }) => {
    const ledger = getLedger();
    const r = stateAt(ledger, run_id, seq, { full: full ?? false, recent: true });
    // What the session's other runs (its telemetry, its transcript) say of the same calls.
    const state = withSessionDecisions(ledger, run_id, r.state);
    return { seq: r.seq, state, via: r.via, folded: r.folded };
  };
  const changes: H<'state.changes'> = ({ run_id, seq }) =>
    changesAt(getLedger(), run_id, seq, { recent: true });
  const diff: H<'runs.diff'> = async ({ left, right }) => ({
    ...(await diffRunsExplained(getLedger(), left, right)),
    replay: replayVerdict(getLedger(), left, right),
  });
  return { 'state.at': at, 'state.changes': changes, 'runs.diff': diff };
}
