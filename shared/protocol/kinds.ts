import * as z from '../zod';

// Payload schemas of protocol v1 (DESIGN.md). They name the minimum; extra fields pass through,
// because a later writer may add fields that an older reader must keep, not drop.
const callId = z.string().check(z.minLength(1));
const tokens = z.int().check(z.nonnegative());
const hex64 = z.string().check(z.regex(/^[0-9a-f]{64}$/));

export const RunMode = z.enum(['live', 'rerun', 'replay', 'resume']);

export const payloadSchemas = {
  run_started: z.looseObject({
    task_id: z.string(),
    goal: z.string(),
    agent: z.looseObject({
      name: z.string(),
      variant: z.optional(z.string()),
      seed: z.optional(z.int()),
    }),
    policy_digest: z.optional(z.string()),
    budget: z.optional(z.record(z.string(), z.number())),
    mode: z.optional(RunMode),
    of: z.optional(z.string()),
  }),
  model_proposed: z.looseObject({
    call_id: callId,
    tool: z.string(),
    args: z.unknown(),
    tokens: z.optional(tokens),
  }),
  action_allowed: z.looseObject({ call_id: callId, rule: z.string(), reason: z.optional(z.string()) }),
  action_denied: z.looseObject({ call_id: callId, rule: z.string(), reason: z.string() }),
  tool_invoked: z.looseObject({ call_id: callId, tool: z.string(), args: z.unknown() }),
  tool_returned: z.looseObject({
    call_id: callId,
    status: z.string(),
    duration_ms: z.number().check(z.nonnegative()),
    excerpt: z.optional(z.string()),
    digest: z.optional(hex64),
    bytes: z.optional(z.int().check(z.nonnegative())),
  }),
  tool_timed_out: z.looseObject({ call_id: callId, timeout_ms: z.number().check(z.nonnegative()) }),
  model_responded: z.looseObject({ content: z.string(), tokens: z.optional(tokens) }),
  context_updated: z.looseObject({
    op: z.string(),
    tokens_before: z.optional(tokens),
    tokens_after: z.optional(tokens),
    digest: z.optional(z.string()),
  }),
  file_changed: z.looseObject({
    path: z.string(),
    before: z.optional(z.nullable(z.string())),
    after: z.optional(z.nullable(z.string())),
    patch: z.optional(z.string()),
  }),
  budget_exhausted: z.looseObject({
    budget: z.enum(['steps', 'tokens', 'wall_ms']),
    limit: z.number(),
    used: z.number(),
  }),
  judge_verdict: z.looseObject({
    passed: z.boolean(),
    tests_passed: z.optional(z.int().check(z.nonnegative())),
    tests_failed: z.optional(z.int().check(z.nonnegative())),
    command: z.optional(z.string()),
    output_digest: z.optional(z.string()),
  }),
  run_completed: z.looseObject({ outcome: z.string() }),
  run_failed: z.looseObject({
    reason: z.string(),
    error_type: z.optional(z.string()),
    stack_digest: z.optional(z.string()),
  }),
  run_resumed: z.looseObject({ from_seq: z.int().check(z.nonnegative()) }),
  event_annotated: z.looseObject({ target_seq: z.int().check(z.positive()), note: z.string() }),
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
