import { z } from 'zod';
import type { RunState } from '../state/types';
import { RunId } from './ledger';
import { method } from './spec';

export const ChangeSchema = z.object({
  path: z.string(),
  old: z.unknown().optional(),
  new: z.unknown().optional(),
});

/** The run state (shared/state/types.ts RunState): plain JSON, bounded; its shape is documented there. */
export const RunStateSchema = z.custom<RunState>(
  (v) => typeof v === 'object' && v !== null && typeof (v as RunState).projection === 'string',
  'a run state',
);

const RowType = z.enum(['same', 'changed', 'only_left', 'only_right']);

export const DiffRowSchema = z.object({
  type: RowType,
  left_seq: z.number().int().nullable(),
  right_seq: z.number().int().nullable(),
  count: z.number().int(),
  left_kind: z.string().nullable(),
  right_kind: z.string().nullable(),
  left_call: z.string().optional(),
  right_call: z.string().optional(),
  changes: z.array(ChangeSchema).optional(),
});

export const RunDiffSchema = z.object({
  left: z.object({ run_id: z.string(), events: z.number().int() }),
  right: z.object({ run_id: z.string(), events: z.number().int() }),
  identical: z.boolean(),
  counts: z.object({
    same: z.number().int(),
    changed: z.number().int(),
    only_left: z.number().int(),
    only_right: z.number().int(),
  }),
  first_divergence: z
    .object({
      type: RowType.exclude(['same']),
      left_seq: z.number().int().nullable(),
      right_seq: z.number().int().nullable(),
      left_kind: z.string().nullable(),
      right_kind: z.string().nullable(),
    })
    .nullable(),
  settings: z.array(ChangeSchema).nullable(),
  /** Two real agents' runs: why they part at the first divergence (electron/runner/agent-diff.ts). */
  cause: z
    .object({
      cause: z.enum(['request', 'environment', 'decision', 'model', 'structure', 'agent_version']),
      reason: z.string(),
      part: z.string().optional(),
      setup: z.array(z.string()),
    })
    .nullable()
    .optional(),
  rows: z.array(DiffRowSchema),
  rows_left_off: z.number().int(),
  state_changes: z.array(ChangeSchema),
  state_changes_left_off: z.number().int(),
  alignment: z.object({
    method: z.enum(['myers', 'positional']),
    common_prefix: z.number().int(),
    common_suffix: z.number().int(),
    edit_length: z.number().int().nullable(),
  }),
  truncated: z.object({ reason: z.string() }).nullable(),
  /**
   * When one side is a replay of the other (its run_started says mode replay, of the other): the
   * replay's verdict, as `proofloop replay` prints it. The rows above also show what differs by
   * nature (ids, digests of requests naming each run's paths, the model source).
   */
  replay: z
    .object({
      source: z.string(),
      replay: z.string(),
      /** The replay has ended (completed or failed); while it runs the verdict is so far. */
      ended: z.boolean(),
      first_divergence: z
        .object({
          /** The source run's seq where the two part. */
          seq: z.number().int(),
          /** Real agents: decision, environment, request, structure or agent_version. */
          cause: z.string().nullable(),
          reason: z.string().nullable(),
          expected_kind: z.string().nullable(),
          actual_kind: z.string().nullable(),
        })
        .nullable(),
    })
    .nullable()
    .optional(),
});

const seq0 = z.number().int().nonnegative();

export const stateMethods = {
  'state.at': method(
    z.object({ run_id: RunId, seq: seq0, full: z.boolean().optional() }),
    z.object({
      seq: z.number().int(),
      state: RunStateSchema,
      via: z.enum(['snapshot', 'fold', 'recent']),
      folded: z.number().int(),
    }),
    'The state of a run at a seq: nearest snapshot plus folds (full: fold from seq 1, ignoring snapshots).',
  ),
  'state.changes': method(
    z.object({ run_id: RunId, seq: z.number().int().positive() }),
    z.object({ seq: z.number().int(), kind: z.string(), changes: z.array(ChangeSchema) }),
    'What changed at a seq: the state at seq-1 against the state at seq, as paths with old and new values.',
  ),
  'runs.diff': method(
    z.object({ left: RunId, right: RunId }),
    RunDiffSchema,
    'Align two runs event by event: same/changed/only-left/only-right rows, first divergence, final-state diff.',
  ),
} as const;
