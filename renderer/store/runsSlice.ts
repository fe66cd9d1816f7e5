import type { StateCreator } from 'zustand';
import { call, callOptional, type UiError } from '../api/api';
import type { Finding, FolderInfo, RunSummary } from '../api/types';
import type { AppState } from './index';
import { dict } from '../../shared/dict';
import { shareEqual } from './shareEqual';
import { detailsWithGlances, type RunDetails, type RunsOutcome, type RunsSort } from './runsQuery';

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
  /** Several rows' details at once (one render). */
  setRunsDetails(d: Readonly<Record<string, RunDetails>>): void;
  setRunsFormat(format: string): void;
  setRunsProject(project: string): void;
  loadFolder(): Promise<void>;
  openFolder(folder: string): Promise<void>;
  /** Opens a team ledger (postgres://…); the password is sent for this connection only, never kept. */
  openTeamLedger(url: string, password?: string): Promise<boolean>;
  /** The folder menu's "Open team ledger…" form is shown (the app's File menu opens it too). */
  teamFormOpen: boolean;
  setTeamFormOpen(open: boolean): void;
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
  runDetails: dict(),
  runsFormat: '',
  runsProject: '',
  runsOutcome: '',
  setRunsOutcome: (runsOutcome) => set({ runsOutcome }),
  setRunsDetails: (d) => set({ runDetails: Object.assign(dict(get().runDetails), d) }),
  setRunsFormat: (runsFormat) => set({ runsFormat }),
  setRunsProject: (runsProject) => set({ runsProject }),
  async loadFolder() {
    const r = await call('folder.current', {});
    if (r.ok) set({ folder: shareEqual(get().folder, r.value), folderError: null });
    else set({ folderError: r.error });
  },
  teamFormOpen: false,
  setTeamFormOpen: (teamFormOpen) => set({ teamFormOpen }),
  async openTeamLedger(url, password) {
    const r = await call('ledger.open', password ? { url, password } : { url });
    if (!r.ok) {
      set({ folderError: r.error });
      return false;
    }
    set({ folder: r.value, folderError: null, teamFormOpen: false });
    await get().loadRuns();
    return true;
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
        // Read again unchanged (the push stream's first connection, a burst of pushes), the list
        // keeps its objects and renders nothing.
        if (r.ok) {
          const runs = shareEqual(get().runs, r.value);
          set({ runs, runsError: null, runDetails: detailsWithGlances(get().runDetails, runs) });
        } else set({ runsError: r.error });
        const f = await callOptional('folder.findings', {});
        set({ folderFindings: f.ok && f.value.total > 0 ? shareEqual(get().folderFindings, f.value) : null });
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

export { visibleRuns, type RunDetails, type RunsOutcome, type RunsQuery, type RunsSort } from './runsQuery';
