import type { StateCreator } from 'zustand';
import { callOptional, type UiError } from '../api/api';
import type { CatalogError, JobProgress, ReplayResult, TaskSummary } from '../api/types';
import type { ArgsOf } from '../../shared/api/contract';
import type { AppState } from './index';

export type Variant = NonNullable<ArgsOf<'run.start'>['variant']>;

export interface TasksSlice {
  tasks: TaskSummary[] | null;
  catalogErrors: CatalogError[];
  tasksError: UiError | null;
  /** The last start/rerun/replay error, shown until the next action. */
  actionError: UiError | null;
  actionBusy: boolean;
  /** The verdict of the last replay (its first divergence, if any). */
  replayResult: ReplayResult | null;
  jobs: Record<string, JobProgress>;
  loadTasks(): Promise<void>;
  startTask(task: string, variant: Variant | null, seed: number | null): Promise<void>;
  rerun(mode: 'rerun' | 'replay'): Promise<void>;
  onJob(p: JobProgress): void;
  clearActionError(): void;
}

export const createTasksSlice: StateCreator<AppState, [], [], TasksSlice> = (set, get) => ({
  tasks: null,
  catalogErrors: [],
  tasksError: null,
  actionError: null,
  actionBusy: false,
  replayResult: null,
  jobs: {},
  async loadTasks() {
    const r = await callOptional('tasks.list', {});
    if (r.ok) set({ tasks: r.value.tasks, catalogErrors: r.value.errors, tasksError: null });
    else set({ tasksError: r.error });
  },
  async startTask(task, variant, seed) {
    set({ actionBusy: true, actionError: null });
    const r = await callOptional('run.start', {
      task_id: task,
      ...(variant ? { variant } : {}),
      ...(seed !== null ? { seed } : {}),
    });
    set({ actionBusy: false });
    if (!r.ok) return set({ actionError: r.error });
    await get().loadRuns();
    get().selectRun(r.value.run_id);
    get().setFollow(true);
  },
  async rerun(mode) {
    const runId = get().runId;
    if (!runId) return;
    set({ actionBusy: true, actionError: null, replayResult: null });
    const r =
      mode === 'rerun'
        ? await callOptional('run.rerun', { run_id: runId })
        : await callOptional('run.replay', { run_id: runId });
    set({ actionBusy: false });
    if (!r.ok) return set({ actionError: r.error });
    set({ compareWith: runId, replayResult: mode === 'replay' ? (r.value as ReplayResult) : null });
    await get().loadRuns();
    get().selectRun(r.value.run_id);
    get().setFollow(true);
  },
  onJob(p) {
    set({ jobs: { ...get().jobs, [p.job_id]: p } });
    if (p.finished && !p.error) {
      // A finished job's bar lingers briefly so a fast import is still seen to have happened.
      setTimeout(() => {
        if (get().jobs[p.job_id]?.finished) {
          const rest = { ...get().jobs };
          delete rest[p.job_id];
          set({ jobs: rest });
        }
      }, 1500);
    }
  },
  clearActionError: () => set({ actionError: null }),
});
