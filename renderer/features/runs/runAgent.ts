import type { RunSummary } from '../../api/types';

/** A run's agent and model source, as the runner recorded them when it made the run (its meta). */
export function runAgentOf(r: RunSummary | undefined): { agent: string; modelFrom: string | null } | null {
  const m = r?.meta as { agent?: unknown; model_from?: unknown } | undefined;
  if (!m || typeof m.agent !== 'string') return null;
  return { agent: m.agent, modelFrom: typeof m.model_from === 'string' ? m.model_from : null };
}

/**
 * The run a replay replays, else null: its meta says mode replay of it, or (a run started from the
 * task panel with a recorded run as its model source) model_from replay:<run>.
 */
export function replayedRunOf(run: RunSummary | undefined): string | null {
  const m = run?.meta as { mode?: unknown; of?: unknown; model_from?: unknown } | undefined;
  if (m?.mode === 'replay' && typeof m.of === 'string') return m.of;
  return typeof m?.model_from === 'string' && m.model_from.startsWith('replay:')
    ? m.model_from.slice(7)
    : null;
}
