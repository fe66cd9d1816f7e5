import { z } from 'zod';

// Payload schemas of protocol v1 (DESIGN.md). They name the minimum; extra fields pass through,
// because a later writer may add fields that an older reader must keep, not drop.
const callId = z.string().min(1);
const tokens = z.number().int().nonnegative();
const hex64 = z.string().regex(/^[0-9a-f]{64}$/);

export const RunMode = z.enum(['live', 'rerun', 'replay', 'resume']);

export const payloadSchemas = {
  run_started: z.looseObject({
    task_id: z.string(),
    goal: z.string(),
    agent: z.looseObject({
      name: z.string(),
      variant: z.string().optional(),
      seed: z.number().int().optional(),
    }),
    policy_digest: z.string().optional(),
    budget: z.record(z.string(), z.number()).optional(),
    mode: RunMode.optional(),
    of: z.string().optional(),
  }),
  model_proposed: z.looseObject({
    call_id: callId,
    tool: z.string(),
    args: z.unknown(),
    tokens: tokens.optional(),
  }),
  action_allowed: z.looseObject({ call_id: callId, rule: z.string(), reason: z.string().optional() }),
  action_denied: z.looseObject({ call_id: callId, rule: z.string(), reason: z.string() }),
  tool_invoked: z.looseObject({ call_id: callId, tool: z.string(), args: z.unknown() }),
  tool_returned: z.looseObject({
    call_id: callId,
    status: z.string(),
    duration_ms: z.number().nonnegative(),
    excerpt: z.string().optional(),
    digest: hex64.optional(),
    bytes: z.number().int().nonnegative().optional(),
  }),
  tool_timed_out: z.looseObject({ call_id: callId, timeout_ms: z.number().nonnegative() }),
  model_responded: z.looseObject({ content: z.string(), tokens: tokens.optional() }),
  context_updated: z.looseObject({
    op: z.string(),
    tokens_before: tokens.optional(),
    tokens_after: tokens.optional(),
    digest: z.string().optional(),
  }),
  file_changed: z.looseObject({
    path: z.string(),
    before: z.string().nullable().optional(),
    after: z.string().nullable().optional(),
    patch: z.string().optional(),
  }),
  budget_exhausted: z.looseObject({
    budget: z.enum(['steps', 'tokens', 'wall_ms']),
    limit: z.number(),
    used: z.number(),
  }),
  judge_verdict: z.looseObject({
    passed: z.boolean(),
    tests_passed: z.number().int().nonnegative().optional(),
    tests_failed: z.number().int().nonnegative().optional(),
    command: z.string().optional(),
    output_digest: z.string().optional(),
  }),
  run_completed: z.looseObject({ outcome: z.string() }),
  run_failed: z.looseObject({
    reason: z.string(),
    error_type: z.string().optional(),
    stack_digest: z.string().optional(),
  }),
  run_resumed: z.looseObject({ from_seq: z.number().int().nonnegative() }),
  event_annotated: z.looseObject({ target_seq: z.number().int().positive(), note: z.string() }),
} as const;

export type KnownKind = keyof typeof payloadSchemas;
export const KNOWN_KINDS = Object.keys(payloadSchemas) as KnownKind[];
export type PayloadOf<K extends KnownKind> = z.infer<(typeof payloadSchemas)[K]>;

export function isKnownKind(kind: string): kind is KnownKind {
  return Object.prototype.hasOwnProperty.call(payloadSchemas, kind);
}

/** Kinds that end a run: nothing but annotations should follow them. */
export const TERMINAL_KINDS: ReadonlySet<string> = new Set(['run_completed', 'run_failed']);

/** The payload schema version this build writes for every kind. */
export const CURRENT_V = 1;
