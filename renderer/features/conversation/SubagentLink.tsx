import { useApp } from '../../store';
import { parentSessionOf, subagentRunId } from './items';

/**
 * A link to the run of a Claude Code subagent (`<session>:agent-<id>`), or a chip saying it is not
 * in the folder. Used by the conversation view and by the parent's timeline rows where the
 * subagent's Task call ended (its result names the agent).
 */
export function SubagentLink({ agentId, label }: { agentId: string; label?: string }) {
  const runId = useApp((s) => s.runId)!;
  const target = subagentRunId(parentSessionOf(runId) ?? runId, agentId);
  const exists = useApp((s) => s.runs?.some((r) => r.run_id === target) ?? false);
  const text = label ?? `subagent agent-${agentId}`;
  return exists ? (
    <button
      type="button"
      className="btn small conv-subagent"
      data-testid="subagent-link"
      data-run-id={target}
      title={`open the subagent's run ${target}`}
      onClick={(e) => {
        e.stopPropagation();
        useApp.getState().selectRun(target);
      }}
    >
      ↳ {text}
    </button>
  ) : (
    <span
      className="chip conv-subagent"
      data-testid="subagent-missing"
      title="no run of this subagent in the folder"
    >
      {text} (not in this folder)
    </span>
  );
}
