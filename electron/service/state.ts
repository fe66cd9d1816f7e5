import { changesAt, stateAt } from '../state';
import { withSessionDecisions } from '../state/cross-check';
import { engineChangesAt, engineDiff, engineStateAt } from '../state/engine-state';
import type { ServiceContext } from './context';
import type { Handler as H } from './handler';
import { replayVerdict } from '../state/replay-verdict';

/**
 * Handlers of shared/api/state.ts: state at a seq, what changed at a seq, and the diff of two runs.
 * A runs folder answers from its SQLite ledger (snapshots, recent states, the worker-thread diff,
 * the session's other runs' decisions, the replay verdict); a team ledger through the engine interface.
 */
export function stateHandlers(ctx: Pick<ServiceContext, 'engine' | 'sqlite'>) {
  const at: H<'state.at'> = ({ run_id, seq, full }) => {
    const ledger = ctx.sqlite();
    if (!ledger) return engineStateAt(ctx.engine(), run_id, seq, { full: full ?? false });
    const r = stateAt(ledger, run_id, seq, { full: full ?? false, recent: true });
    // What the session's other runs (its telemetry, its transcript) say of the same calls.
    const state = withSessionDecisions(ledger, run_id, r.state);
    return { seq: r.seq, state, via: r.via, folded: r.folded };
  };
  const changes: H<'state.changes'> = ({ run_id, seq }) => {
    const l = ctx.sqlite();
    return l ? changesAt(l, run_id, seq, { recent: true }) : engineChangesAt(ctx.engine(), run_id, seq);
  };
  const diff: H<'runs.diff'> = async ({ left, right }) => {
    const l = ctx.sqlite();
    if (!l) return engineDiff(ctx.engine(), left, right);
    // The diff's explanations know each agent's transcript: loaded with the first diff, not with serve.
    const { diffRunsExplained } = await import('../runner/agent-diff');
    return { ...(await diffRunsExplained(l, left, right)), replay: replayVerdict(l, left, right) };
  };
  return { 'state.at': at, 'state.changes': changes, 'runs.diff': diff };
}
