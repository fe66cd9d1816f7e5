import { useApp } from '../../store';
import { runSummaryOf } from '../../store/runsSlice';

/** The selected run's format ('proofloop', 'seed000', 'claude_code', 'codex', …), null while unknown. */
export function useRunFormat(): string | null {
  return useApp((s) => runSummaryOf(s, s.runId)?.format ?? null);
}
