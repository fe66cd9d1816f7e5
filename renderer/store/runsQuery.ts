import type { RunSummary } from '../api/types';
import { OUTCOME_RANK, OUTCOME_TEXT, type Outcome } from '../../shared/outcome';
import { byText } from '../ui/numbers';
import { dict } from '../../shared/dict';

/** The runs list's filter and sort, apart from the store (no DOM, no API: unit-tested in Node). */

export type RunsSort = 'recent' | 'oldest' | 'events' | 'outcome' | 'status' | 'id';
/** '' for all, 'failing' for failed, budget and error together, else one outcome. */
export type RunsOutcome = '' | 'failing' | Outcome;

/** What the runs list shows of a run beyond its summary, read lazily for the rows on screen. */
export interface RunDetails {
  head_seq: number;
  project: string | null;
  model: string | null;
  title: string | null;
  tokens: number | null;
  calls: number | null;
  errors: number | null;
}

/** A row's details from a glance (runs.list, runs.details) and the counts of its state, when read. */
export function runDetailsOf(
  g: Pick<RunDetails, 'head_seq' | 'project' | 'model' | 'title' | 'tokens'>,
  counts: { calls: number; errors: number } | null,
): RunDetails {
  return {
    head_seq: g.head_seq,
    project: g.project,
    model: g.model,
    title: g.title,
    tokens: g.tokens,
    calls: counts?.calls ?? null,
    errors: counts?.errors ?? null,
  };
}

/**
 * The rows' details with the glances the list carried (title, project, model, tokens, and a small
 * run's counts), for rows that have none as fresh: the titles show with the list itself, and the
 * counts (calls, errors) the list did not carry come when the row is on screen (runs.details).
 */
export function detailsWithGlances(
  details: Readonly<Record<string, RunDetails>>,
  runs: readonly RunSummary[],
): Record<string, RunDetails> {
  let out: Record<string, RunDetails> | null = null;
  for (const r of runs) {
    const g = r.glance;
    if (!g) continue;
    const counts =
      g.calls !== undefined && g.errors !== undefined ? { calls: g.calls, errors: g.errors } : null;
    const d = details[r.run_id];
    // Kept: what the row has from a later head, or from the same head with counts.
    if (d && (d.head_seq > g.head_seq || (d.head_seq === g.head_seq && (d.calls !== null || !counts))))
      continue;
    out ??= dict(details);
    out[r.run_id] = runDetailsOf(g, counts);
  }
  return out ?? (details as Record<string, RunDetails>);
}

export interface RunsQuery {
  /** Only runs of this format ('' for all). */
  format?: string;
  /** Only runs of this project, as their details know it ('' for all). */
  project?: string;
  details?: Readonly<Record<string, RunDetails>>;
  /** Only runs of this outcome ('' for all). */
  outcome?: RunsOutcome;
}

function outcomeMatches(o: Outcome | null | undefined, want: RunsOutcome): boolean {
  if (want === '') return true;
  if (!o) return false;
  return want === 'failing' ? OUTCOME_TEXT[o].failed : o === want;
}

const rankOf = (r: RunSummary): number => (r.outcome ? OUTCOME_RANK[r.outcome] : 99);

/**
 * The visible runs: filtered by format, project, outcome, and text over id, task, variant, status, outcome, source,
 * format and the details known (title, project, model), sorted.
 */
export function visibleRuns(
  runs: readonly RunSummary[],
  filter: string,
  sort: RunsSort,
  q: RunsQuery = {},
): RunSummary[] {
  const f = filter.trim().toLowerCase();
  const details = q.details ?? {};
  const out = runs.filter((r) => {
    if (q.format && r.format !== q.format) return false;
    const d = details[r.run_id];
    if (q.project && d?.project !== q.project) return false;
    if (!outcomeMatches(r.outcome, q.outcome ?? '')) return false;
    if (!f) return true;
    return [
      r.run_id,
      r.task_id,
      r.variant,
      r.status,
      r.outcome,
      r.source,
      r.format,
      d?.title,
      d?.project,
      d?.model,
    ].some((v) => v?.toLowerCase().includes(f));
  });
  // A run received over OTLP is dated by its spans, which may be years old (a replayed trace, a
  // clock off): "recent" lists it by its arrival here, where a person who just sent it looks.
  const at = (r: RunSummary) => (r.format === 'otlp' ? r.created_at : (r.last_at ?? r.created_at));
  switch (sort) {
    case 'recent':
      return out.sort((a, b) => byText(at(b), at(a)));
    case 'oldest':
      return out.sort((a, b) => byText(a.created_at, b.created_at));
    case 'events':
      return out.sort((a, b) => b.event_count - a.event_count);
    case 'outcome':
      return out.sort((a, b) => rankOf(a) - rankOf(b) || byText(at(b), at(a)));
    case 'status':
      return out.sort((a, b) => byText(a.status, b.status) || byText(at(b), at(a)));
    case 'id':
      return out.sort((a, b) => byText(a.run_id, b.run_id));
  }
}
