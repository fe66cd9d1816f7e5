import * as z from '../zod';
import { method } from './spec';
import { ByRun, RunId } from './ledger';
import { VARIANTS } from './variants';

export const VariantSchema = z.enum(VARIANTS);

export const TaskSummarySchema = z.object({
  id: z.string(),
  title: z.string(),
  goal: z.string(),
  judge_command: z.string(),
  tools: z.array(z.string()),
  commands: z.array(z.string()),
  budget: z.object({ steps: z.int(), tokens: z.int(), wall_ms: z.int() }),
  policy_digest: z.string(),
  simulated: z.boolean(),
});

export const CatalogErrorSchema = z.object({ file: z.string(), field: z.string(), message: z.string() });

export const RunEndSchema = z.object({
  run_id: z.string(),
  status: z.enum(['completed', 'failed', 'running']),
  outcome: z.nullable(z.string()),
  passed: z.boolean(),
  head_seq: z.int(),
});

const ShownEvent = z.object({ seq: z.int(), kind: z.string(), payload: z.unknown() });

export const ReplayResultSchema = z.object({
  ok: z.boolean(),
  first_divergence: z.nullable(
    z.object({
      seq: z.int(),
      /** Real agents: decision, environment, request, structure or agent_version. */
      cause: z.optional(z.string()),
      reason: z.optional(z.string()),
      expected: z.nullable(ShownEvent),
      actual: z.nullable(ShownEvent),
    }),
  ),
  run_id: z.string(),
  of: z.string(),
  outcome: z.string(),
});

const Started = z.object({ run_id: z.string() });

/** An agent the runner can use, as the task panel lists it. */
export const AgentInfoSchema = z.object({
  /** sim, claude-code, codex: run.start's `agent`. */
  name: z.string(),
  title: z.string(),
  /** Whether it can run here: the simulated agent always; a CLI when its binary answers --version. */
  installed: z.boolean(),
  version: z.nullable(z.string()),
  /** What runs (the CLI and its version), or why it cannot run here. */
  detail: z.string(),
  /** A real agent's upstream source: the variables its key is read from, and whether one is set. */
  upstream: z.nullable(z.object({ key_env: z.array(z.string()), key_set: z.boolean() })),
});

export const ArtifactSchema = z.object({
  digest: z.string(),
  bytes: z.int(),
  text: z.string(),
  truncated: z.boolean(),
});

export const runnerMethods = {
  'artifact.read': method(
    z.object({
      run_id: RunId,
      digest: z.string().check(z.regex(/^(sha256:)?[0-9a-f]{64}$/, 'digest must be 64 hex digits')),
    }),
    ArtifactSchema,
    "The full content of an artifact a run's events reference (stored redacted), checked against its digest.",
  ),
  'tasks.list': method(
    z.object({}),
    z.object({ dir: z.string(), tasks: z.array(TaskSummarySchema), errors: z.array(CatalogErrorSchema) }),
    'The task catalog (built-in or --tasks), with a problem per task or policy file that does not validate.',
  ),
  'run.start': method(
    z.object({
      task_id: z.string().check(z.minLength(1), z.maxLength(64)),
      variant: z.optional(VariantSchema),
      seed: z.optional(z.int().check(z.minimum(0), z.maximum(2 ** 32 - 1))),
      /** sim (the default: the host's own loop) or a real agent: claude-code, codex. */
      agent: z.optional(z.string().check(z.minLength(1), z.maxLength(40))),
      /** A real agent's model: sim (the variant answers), replay:<run>, upstream (your key). */
      model_from: z.optional(
        z
          .string()
          .check(
            z.regex(
              /^(sim|upstream|replay:[A-Za-z0-9][A-Za-z0-9._:-]{0,199})$/,
              'sim, upstream or replay:<run>',
            ),
          ),
      ),
      model: z.optional(z.string().check(z.minLength(1), z.maxLength(100))),
      /** A folder of settings / CLAUDE.md / hooks for the agent (a configuration variant). */
      config_dir: z.optional(z.string().check(z.minLength(1), z.maxLength(4096))),
    }),
    Started,
    "Start a run of a task with the simulated model or a real agent (claude-code, codex) through the run's model gateway; returns its run id at once, events are pushed as they append.",
  ),
  'agents.list': method(
    z.object({}),
    z.object({ agents: z.array(AgentInfoSchema) }),
    'The agents a run can use (the simulated one, Claude Code, Codex): which are installed here, their versions.',
  ),
  'run.rerun': method(
    z.extend(ByRun, {
      /** The model frozen to this run's recorded answers (mode replay); returned at once, unlike run.replay. */
      replay: z.optional(z.boolean()),
    }),
    Started,
    'A new run of the same task and agent settings (mode rerun), or with replay its replay (mode replay), followed live; runs.diff of the two gives the verdict.',
  ),
  'run.replay': method(
    ByRun,
    ReplayResultSchema,
    'Re-execute a run from its recorded proposals without the model; the first seq whose decision or result differs.',
  ),
  'run.resume': method(
    ByRun,
    Started,
    'Continue a run whose writer died or whose model crashed, from its ledger, to its end.',
  ),
  'run.wait': method(ByRun, RunEndSchema, 'Wait for a run started here to end; how it ended.'),
} as const;
