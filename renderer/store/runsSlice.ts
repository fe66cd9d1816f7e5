import type { StateCreator } from 'zustand';
import { call, callOptional, type UiError } from '../api/api';
import type { Finding, FolderInfo, RunSummary } from '../api/types';
import type { AppState } from './index';
import { OUTCOME_RANK, OUTCOME_TEXT, type Outcome } from '../../shared/outcome';

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

export interface RunsSlice {
  folder: FolderInfo | null;
  folderError: UiError | null;
  runs: RunSummary[] | null;
  runsError: UiError | null;
  runsFilter: string;
  runsSort: RunsSort;
  /** Findings of files that made no run (e.g. a file whose only line nests too deep). */
  folderFindings: { findings: Finding[]; total: number } | null;
  runDetails: Record<string, RunDetails>;
  /** '' for all. */
  runsFormat: string;
  runsProject: string;
  runsOutcome: RunsOutcome;
  setRunsOutcome(outcome: RunsOutcome): void;
  setRunDetails(runId: string, d: RunDetails): void;
  setRunsFormat(format: string): void;
  setRunsProject(project: string): void;
  loadFolder(): Promise<void>;
  openFolder(folder: string): Promise<void>;
  loadRuns(): Promise<void>;
  setRunsFilter(text: string): void;
  setRunsSort(sort: RunsSort): void;
}

let runsInflight: Promise<void> | null = null;
let runsAgain = false;

export const createRunsSlice: StateCreator<AppState, [], [], RunsSlice> = (set, get) => ({
  folder: null,
  folderError: null,
  runs: null,
  runsError: null,
  runsFilter: '',
  runsSort: 'recent',
  folderFindings: null,
  runDetails: {},
  runsFormat: '',
  runsProject: '',
  runsOutcome: '',
  setRunsOutcome: (runsOutcome) => set({ runsOutcome }),
  setRunDetails: (runId, d) => set({ runDetails: { ...get().runDetails, [runId]: d } }),
  setRunsFormat: (runsFormat) => set({ runsFormat }),
  setRunsProject: (runsProject) => set({ runsProject }),
  async loadFolder() {
    const r = await call('folder.current', {});
    if (r.ok) set({ folder: r.value, folderError: null });
    else set({ folderError: r.error });
  },
  async openFolder(folder) {
    const r = await call('folder.open', { folder });
    if (!r.ok) {
      set({ folderError: r.error });
      return;
    }
    set({ folder: r.value, folderError: null });
    await get().loadRuns();
  },
  loadRuns() {
    // Pushes arrive in bursts while a run is live: one request in flight, at most one queued.
    if (runsInflight) {
      runsAgain = true;
      return runsInflight;
    }
    runsInflight = (async () => {
      do {
        runsAgain = false;
        const r = await call('runs.list', {});
        if (r.ok) set({ runs: r.value, runsError: null });
        else set({ runsError: r.error });
        const f = await callOptional('folder.findings', {});
        set({ folderFindings: f.ok && f.value.total > 0 ? f.value : null });
        get().syncSelectedRun();
      } while (runsAgain);
      runsInflight = null;
    })();
    return runsInflight;
  },
  setRunsFilter: (runsFilter) => set({ runsFilter }),
  setRunsSort: (runsSort) => set({ runsSort }),
});

/** The listed summary of a run (undefined while the list is loading, or for a run made a moment ago). */
export function runSummaryOf(s: Pick<AppState, 'runs'>, runId: string | null): RunSummary | undefined {
  return runId === null ? undefined : s.runs?.find((r) => r.run_id === runId);
}

export function durationMs(r: RunSummary): number | null {
  if (!r.first_at || !r.last_at) return null;
  const d = Date.parse(r.last_at) - Date.parse(r.first_at);
  return Number.isFinite(d) && d >= 0 ? d : null;
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
  const at = (r: RunSummary) => r.last_at ?? r.created_at;
  switch (sort) {
    case 'recent':
      return out.sort((a, b) => at(b).localeCompare(at(a)));
    case 'oldest':
      return out.sort((a, b) => a.created_at.localeCompare(b.created_at));
    case 'events':
      return out.sort((a, b) => b.event_count - a.event_count);
    case 'outcome':
      return out.sort((a, b) => rankOf(a) - rankOf(b) || at(b).localeCompare(at(a)));
    case 'status':
      return out.sort((a, b) => a.status.localeCompare(b.status) || at(b).localeCompare(at(a)));
    case 'id':
      return out.sort((a, b) => a.run_id.localeCompare(b.run_id));
  }
}
