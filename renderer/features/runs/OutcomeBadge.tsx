import { OUTCOME_TEXT, type Outcome } from '../../../shared/outcome';
import type { RunSummary } from '../../api/types';

/** The run's outcome (passed, failed, budget, error, running), first on its row and header. */
export function OutcomeBadge({ run, testId }: { run: RunSummary | undefined; testId: string }) {
  const o: Outcome | null = run?.outcome ?? null;
  if (o === null)
    return (
      <span
        className={`outcome o-none st-${run?.status ?? 'unknown'}`}
        data-testid={testId}
        data-outcome=""
        title={run ? `no outcome of its own (${run.status})` : ''}
      >
        {run?.status === 'session' ? 'session' : (run?.status ?? '')}
      </span>
    );
  const t = OUTCOME_TEXT[o];
  return (
    <span
      className={`outcome o-${o}${t.failed ? ' o-failing' : ''}`}
      data-testid={testId}
      data-outcome={o}
      title={`${t.title} (status: ${run?.status})`}
    >
      {t.label}
    </span>
  );
}
