import type * as z from '../../shared/zod';
import type {
  FindingSchema,
  FolderInfoSchema,
  RunSummarySchema,
  StoredEventSchema,
} from '../../shared/api/ledger';
import type { PushOf, ResultOf } from '../../shared/api/contract';

export type RunSummary = z.output<typeof RunSummarySchema>;
export type StoredEvent = z.output<typeof StoredEventSchema>;
export type Finding = z.output<typeof FindingSchema>;
export type FolderInfo = z.output<typeof FolderInfoSchema>;
export type JobProgress = PushOf<'job.progress'>;

export type StateAt = ResultOf<'state.at'>;
export type StateChanges = ResultOf<'state.changes'>;
export type StateChange = StateChanges['changes'][number];
export type RunsDiff = ResultOf<'runs.diff'>;
export type DiffRow = RunsDiff['rows'][number];
export type DiffRowType = DiffRow['type'];
export type TaskSummary = ResultOf<'tasks.list'>['tasks'][number];
export type CatalogError = ResultOf<'tasks.list'>['errors'][number];
export type AgentInfo = ResultOf<'agents.list'>['agents'][number];
export type ReplayVerdict = NonNullable<RunsDiff['replay']>;
