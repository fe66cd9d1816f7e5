import * as z from '../zod';
import type { RunState } from '../state/types';
import { RunId } from './ledger';
import { method } from './spec';

export const ChangeSchema = z.object({
  path: z.string(),
  old: z.optional(z.unknown()),
  new: z.optional(z.unknown()),
});

/** The run state (shared/state/types.ts RunState): plain JSON, bounded; its shape is documented there. */
export const RunStateSchema = z.custom<RunState>(
  (v) => typeof v === 'object' && v !== null && typeof (v as RunState).projection === 'string',
  'a run state',
);

const RowType = z.enum(['same', 'changed', 'only_left', 'only_right']);

export const DiffRowSchema = z.object({
  type: RowType,
  left_seq: z.nullable(z.int()),
  right_seq: z.nullable(z.int()),
  count: z.int(),
  left_kind: z.nullable(z.string()),
  right_kind: z.nullable(z.string()),
  left_call: z.optional(z.string()),
  right_call: z.optional(z.string()),
  changes: z.optional(z.array(ChangeSchema)),
});

export const RunDiffSchema = z.object({
  left: z.object({ run_id: z.string(), events: z.int() }),
  right: z.object({ run_id: z.string(), events: z.int() }),
  identical: z.boolean(),
  counts: z.object({
    same: z.int(),
    changed: z.int(),
    only_left: z.int(),
    only_right: z.int(),
  }),
  first_divergence: z.nullable(
    z.object({
      type: z.enum(['changed', 'only_left', 'only_right']),
      left_seq: z.nullable(z.int()),
      right_seq: z.nullable(z.int()),
      left_kind: z.nullable(z.string()),
      right_kind: z.nullable(z.string()),
    }),
  ),
  settings: z.nullable(z.array(ChangeSchema)),
  /** Two real agents' runs: why they part at the first divergence (electron/runner/agent-diff.ts). */
  cause: z.optional(
    z.nullable(
      z.object({
        cause: z.enum(['request', 'environment', 'decision', 'model', 'structure', 'agent_version']),
        reason: z.string(),
        part: z.optional(z.string()),
        setup: z.array(z.string()),
      }),
    ),
  ),
  rows: z.array(DiffRowSchema),
  rows_left_off: z.int(),
  state_changes: z.array(ChangeSchema),
  state_changes_left_off: z.int(),
  alignment: z.object({
    method: z.enum(['myers', 'positional']),
    common_prefix: z.int(),
    common_suffix: z.int(),
    edit_length: z.nullable(z.int()),
  }),
  truncated: z.nullable(z.object({ reason: z.string() })),
  /**
   * When one side is a replay of the other (its run_started says mode replay, of the other): the
   * replay's verdict, as `proofloop replay` prints it. The rows above also show what differs by
   * nature (ids, digests of requests naming each run's paths, the model source).
   */
  replay: z.optional(
    z.nullable(
      z.object({
        source: z.string(),
        replay: z.string(),
        /** The replay has ended (completed or failed); while it runs the verdict is so far. */
        ended: z.boolean(),
        first_divergence: z.nullable(
          z.object({
            /** The source run's seq where the two part. */
            seq: z.int(),
            /** Real agents: decision, environment, request, structure or agent_version. */
            cause: z.nullable(z.string()),
            reason: z.nullable(z.string()),
            expected_kind: z.nullable(z.string()),
            actual_kind: z.nullable(z.string()),
          }),
        ),
      }),
    ),
  ),
});

const seq0 = z.int().check(z.nonnegative());

export const stateMethods = {
  'state.at': method(
    z.object({ run_id: RunId, seq: seq0, full: z.optional(z.boolean()) }),
    z.object({
      seq: z.int(),
      state: RunStateSchema,
      via: z.enum(['snapshot', 'fold', 'recent']),
      folded: z.int(),
    }),
    'The state of a run at a seq: nearest snapshot plus folds (full: fold from seq 1, ignoring snapshots).',
  ),
  'state.changes': method(
    z.object({ run_id: RunId, seq: z.int().check(z.positive()) }),
    z.object({ seq: z.int(), kind: z.string(), changes: z.array(ChangeSchema) }),
    'What changed at a seq: the state at seq-1 against the state at seq, as paths with old and new values.',
  ),
  'runs.diff': method(
    z.object({ left: RunId, right: RunId }),
    RunDiffSchema,
    'Align two runs event by event: same/changed/only-left/only-right rows, first divergence, final-state diff.',
  ),
} as const;
