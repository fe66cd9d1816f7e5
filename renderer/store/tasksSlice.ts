import type { StateCreator } from 'zustand';
import { callOptional, type UiError } from '../api/api';
import type { AgentInfo, CatalogError, JobProgress, TaskSummary } from '../api/types';
import type { ArgsOf } from '../../shared/api/contract';
import type { AppState } from './index';

export type Variant = NonNullable<ArgsOf<'run.start'>['variant']>;

/** What the task panel starts: a task, the agent, and for a real agent where its model's answers come from. */
export interface StartRequest {
  task: string;
  variant: Variant | null;
  seed: number | null;
  /** sim (ProofLoop's own loop, the default), claude-code or codex. */
  agent: string;
  /** A real agent's model: sim, upstream or replay:<run>. */
  modelFrom: string | null;
}

export interface TasksSlice {
  tasks: TaskSummary[] | null;
  catalogErrors: CatalogError[];
  tasksError: UiError | null;
  /** The last start/rerun/replay error, shown until the next action. */
  actionError: UiError | null;
  actionBusy: boolean;
  /** The agents a run can use, installed or not (null until listed). */
  agents: AgentInfo[] | null;
  agentsError: UiError | null;
  jobs: Record<string, JobProgress>;
  loadTasks(): Promise<void>;
  loadAgents(): Promise<void>;
  startTask(req: StartRequest): Promise<void>;
  rerun(mode: 'rerun' | 'replay'): Promise<void>;
  /** Continues the selected run from its ledger (proofloop resume), following it live. */
  resume(): Promise<void>;
  onJob(p: JobProgress): void;
  clearActionError(): void;
}

export const createTasksSlice: StateCreator<AppState, [], [], TasksSlice> = (set, get) => ({
  tasks: null,
  catalogErrors: [],
  tasksError: null,
  actionError: null,
  actionBusy: false,
  agents: null,
  agentsError: null,
  jobs: {},
  async loadTasks() {
    const r = await callOptional('tasks.list', {});
    if (r.ok) set({ tasks: r.value.tasks, catalogErrors: r.value.errors, tasksError: null });
    else set({ tasksError: r.error });
  },
  async loadAgents() {
    const r = await callOptional('agents.list', {});
    if (r.ok) set({ agents: r.value.agents, agentsError: null });
    else set({ agentsError: r.error });
  },
  async startTask({ task, variant, seed, agent, modelFrom }) {
    set({ actionBusy: true, actionError: null });
    const real = agent !== 'sim';
    const r = await callOptional('run.start', {
      task_id: task,
      ...(variant ? { variant } : {}),
      ...(seed !== null ? { seed } : {}),
      ...(real ? { agent, model_from: modelFrom ?? 'sim' } : {}),
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
    set({ actionBusy: true, actionError: null });
    // Both return the new run at once, which is followed live; a replay's verdict is its diff
    // with this run (runs.diff's `replay`), shown in its header once it ends.
    const r = await callOptional('run.rerun', {
      run_id: runId,
      ...(mode === 'replay' ? { replay: true } : {}),
    });
    set({ actionBusy: false });
    if (!r.ok) return set({ actionError: r.error });
    set({ compareWith: runId });
    await get().loadRuns();
    get().selectRun(r.value.run_id);
    get().setFollow(true);
  },
  async resume() {
    const runId = get().runId;
    if (!runId) return;
    set({ actionBusy: true, actionError: null });
    const r = await callOptional('run.resume', { run_id: runId });
    set({ actionBusy: false });
    if (!r.ok) return set({ actionError: r.error });
    await get().loadRuns();
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
