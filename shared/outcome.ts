/**
 * A run's outcome: how it ended for the task, apart from its status (the lifecycle: a run that the
 * judge failed still "completed") and apart from its chain's verdict (intact is not passed). Read
 * from the run's lifecycle and verdict events only, so every view (list, header, report, CLI)
 * derives the same word from the same events.
 */
export const OUTCOMES = ['passed', 'failed', 'budget', 'error', 'running', 'ended'] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** The kinds an outcome is read from (all rare: one read through the rare-kinds index). */
export const OUTCOME_KINDS = [
  'run_started',
  'run_resumed',
  'judge_verdict',
  'budget_exhausted',
  'run_completed',
  'run_failed',
] as const;

/** What a person reads for each outcome, and whether it counts as a failure. */
export const OUTCOME_TEXT: Record<Outcome, { label: string; failed: boolean; title: string }> = {
  passed: { label: 'passed', failed: false, title: 'the judge passed the run' },
  failed: { label: 'failed', failed: true, title: 'the judge failed the run' },
  budget: { label: 'budget', failed: true, title: 'the run exhausted its budget before passing' },
  error: {
    label: 'error',
    failed: true,
    title: 'the run failed: the host, model, tool or judge raised an error',
  },
  running: { label: 'running', failed: false, title: 'the run has not ended' },
  ended: { label: 'ended', failed: false, title: 'the run ended without a verdict' },
};

type Ev = { kind: string; payload: Record<string, unknown> };

/**
 * The outcome of a run from its events of OUTCOME_KINDS in seq order; null when none of them is
 * there (a recorded session has no outcome of its own).
 */
export function outcomeOf(events: readonly Ev[]): Outcome | null {
  let out: Outcome | null = null;
  let verdict: boolean | null = null;
  let budget = false;
  for (const e of events) {
    switch (e.kind) {
      case 'run_started':
      case 'run_resumed':
        out = 'running';
        break;
      case 'judge_verdict':
        verdict = e.payload.passed === true;
        break;
      case 'budget_exhausted':
        budget = true;
        break;
      case 'run_failed':
        out = 'error';
        break;
      case 'run_completed':
        out = completed(e.payload, verdict, budget);
        break;
    }
  }
  if (out === null && verdict !== null) out = verdict ? 'passed' : 'failed';
  return out;
}

/** run_completed's own outcome word, checked against the run's last verdict: a failed verdict or a spent budget wins over the word. */
function completed(p: Record<string, unknown>, verdict: boolean | null, budget: boolean): Outcome {
  const word = typeof p.outcome === 'string' ? p.outcome.toLowerCase() : null;
  if (budget || word === 'budget_exhausted' || word === 'budget') return 'budget';
  if (word === 'failed' || word === 'fail' || word === 'incomplete' || verdict === false) return 'failed';
  if (word === 'error' || word?.endsWith('_error')) return 'error';
  if (verdict === true || word === 'passed' || word === 'pass' || word === 'success') return 'passed';
  return 'ended';
}

/** Order for sorting by outcome: failures first, then running, then the rest. */
export const OUTCOME_RANK: Record<Outcome, number> = {
  error: 0,
  failed: 1,
  budget: 2,
  running: 3,
  ended: 4,
  passed: 5,
};
