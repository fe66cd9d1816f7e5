import type { z } from 'zod';
import type {
  FindingSchema,
  FolderInfoSchema,
  RunSummarySchema,
  StoredEventSchema,
} from '../../shared/api/ledger';
import type { PushOf } from '../../shared/api/contract';

export type RunSummary = z.output<typeof RunSummarySchema>;
export type StoredEvent = z.output<typeof StoredEventSchema>;
export type Finding = z.output<typeof FindingSchema>;
export type FolderInfo = z.output<typeof FolderInfoSchema>;
export type JobProgress = PushOf<'job.progress'>;

// Shapes of methods other engineers are landing; read defensively until they are in the contract.

/** 'state.at' */
export interface StateAt {
  seq: number;
  state: unknown;
  via?: string;
  folded?: number;
}

export interface StateChange {
  path: string;
  old: unknown;
  new: unknown;
}

/** 'state.changes' */
export interface StateChanges {
  seq: number;
  changes: StateChange[];
  truncated?: number;
}

export type DiffRowType = 'same' | 'changed' | 'only-left' | 'only-right';

export interface DiffRow {
  type: DiffRowType;
  left_seq: number | null;
  right_seq: number | null;
  kind?: string;
  left_kind?: string | null;
  right_kind?: string | null;
  [key: string]: unknown;
}

/** 'runs.diff' */
export interface RunsDiff {
  rows: DiffRow[];
  first_divergence?: unknown;
  final_state_diff?: unknown;
  [key: string]: unknown;
}

/** One entry of 'tasks.list'. */
export interface TaskInfo {
  id: string;
  title: string | null;
  goal: string | null;
  variants: string[];
}
