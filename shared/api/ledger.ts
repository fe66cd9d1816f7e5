import * as z from '../zod';
import { EnvelopeSchema } from '../protocol';
import { method } from './spec';
import { OUTCOMES } from '../outcome';
import { RUNS_DETAILS_MAX } from './limits';

export const RunId = z.string().check(z.minLength(1), z.maxLength(200));
/** The arguments of a method that takes one run and nothing else. */
export const ByRun = z.object({ run_id: RunId });

/** What a row of the runs list shows of a run beyond runs.list ('run.summary'). */
export const RunGlanceSchema = z.object({
  run_id: z.string(),
  head_seq: z.int(),
  format: z.string(),
  /** The working directory the session ran in (Claude Code `cwd`, Codex session_meta). */
  project: z.nullable(z.string()),
  model: z.nullable(z.string()),
  /** The first prompt a person wrote (or the goal of a v1 run), clipped. */
  title: z.nullable(z.string()),
  /** Tokens as the format counts them: Claude Code once per message.id, Codex its last total. */
  tokens: z.nullable(z.number()),
});

/** A glance with the counts of the state at the run's head ('runs.details'). */
export const RunDetailsSchema = z.extend(RunGlanceSchema, {
  /** Tool calls and failed calls at the head (shared/state `calls.total`, `errors.total`). */
  calls: z.int(),
  errors: z.int(),
});

/** A glance in the runs list, with the counts when the service folded them for the list (a small run's). */
export const ListGlanceSchema = z.extend(RunGlanceSchema, {
  calls: z.optional(z.int()),
  errors: z.optional(z.int()),
});

export const FindingSchema = z.object({
  code: z.string(),
  file: z.nullable(z.string()),
  line: z.nullable(z.int()),
  seq: z.nullable(z.int()),
  message: z.string(),
  run_id: z.optional(z.nullable(z.string())),
  /** A line that is no event: its text as the file has it, bounded and redacted. */
  excerpt: z.optional(z.nullable(z.string())),
});

export const RunSummarySchema = z.object({
  run_id: z.string(),
  source: z.enum(['executed', 'imported', 'bundle']),
  /** The adapter that read it: 'proofloop', 'seed000', 'seed004', and the formats of other programs. */
  format: z.string(),
  chained: z.boolean(),
  origin: z.nullable(z.string()),
  created_at: z.string(),
  head_seq: z.int(),
  head_hash: z.string(),
  first_at: z.nullable(z.string()),
  last_at: z.nullable(z.string()),
  status: z.string(),
  /** How the run ended for its task (shared/outcome.ts), apart from status and chain; null: none (a recorded session). */
  outcome: z.optional(z.nullable(z.enum(OUTCOMES))),
  task_id: z.nullable(z.string()),
  variant: z.nullable(z.string()),
  event_count: z.int(),
  /** What the list shows of the run beyond this row, when the service has it at hand (runs.list; else runs.details). */
  glance: z.optional(ListGlanceSchema),
  findings: z.int(),
  writer: z.nullable(z.object({ pid: z.number(), hostname: z.string(), label: z.nullable(z.string()) })),
  /** What the source of the run left for the UI, e.g. `bundle` (its verification verdict) for runs opened from a bundle. */
  meta: z.record(z.string(), z.unknown()),
});

export const SourceRefSchema = z.object({
  line: z.int(),
  part: z.optional(z.int()),
  ids: z.optional(z.record(z.string(), z.string())),
  /** Values moved to artifacts (shared/formats/source-ref.ts): read whole with artifact.read. */
  artifacts: z.optional(
    z.array(
      z.object({
        path: z.array(z.union([z.string(), z.int()])),
        digest: z.string(),
        bytes: z.int(),
      }),
    ),
  ),
});

export const StoredEventSchema = z.extend(EnvelopeSchema, {
  redacted: z.optional(z.boolean()),
  /** An imported event: where in its run's source file it came from. */
  source: z.optional(SourceRefSchema),
});

export const VerifyReportSchema = z.object({
  ok: z.boolean(),
  run_id: z.string(),
  events: z.int(),
  head_seq: z.int(),
  head_hash: z.string(),
  chained: z.boolean(),
  findings: z.array(FindingSchema),
});

export const FolderInfoSchema = z.object({
  folder: z.string(),
  /** Where the folders of runs executed here go: the folder itself, or ProofLoop's own directory for another program's folder (nothing is written into it). */
  runs_root: z.optional(z.string()),
  runs: z.int(),
  imported: z.object({ files: z.int(), events: z.int(), findings: z.int() }),
  mirrors_repaired: z.array(z.string()),
  /** Which engine keeps the open ledger: a runs folder's SQLite (the default) or a team's PostgreSQL (`folder` is then its URL, without a password). */
  engine: z.optional(z.enum(['sqlite', 'postgres'])),
});

const seq = z.int().check(z.positive());

export const ledgerMethods = {
  'folder.open': method(
    z.object({ folder: z.optional(z.string().check(z.minLength(1), z.maxLength(4096))) }),
    FolderInfoSchema,
    'Open a runs folder (the current one when omitted): repair mirrors, import JSONL runs.',
  ),
  'folder.current': method(z.object({}), z.nullable(FolderInfoSchema), 'The folder open now, if any.'),
  'folder.recent': method(
    z.object({}),
    z.array(z.string()),
    'Folders (and team ledgers, by their URL without a password) opened before, newest first.',
  ),
  'ledger.open': method(
    z.object({
      url: z.string().check(z.minLength(1), z.maxLength(2048)),
      /** Used for this connection only: never stored, never listed. */
      password: z.optional(z.string().check(z.maxLength(1024))),
    }),
    FolderInfoSchema,
    'Open a team ledger on PostgreSQL (postgres://user@host/db): the inspector reads and follows it as it does a runs folder.',
  ),
  'runs.list': method(
    z.object({}),
    z.array(RunSummarySchema),
    'Every run with status, counts, head and findings.',
  ),
  'run.get': method(ByRun, RunSummarySchema, 'One run.'),
  'events.read': method(
    z.object({
      run_id: RunId,
      from: z.optional(seq),
      to: z.optional(seq),
      kinds: z.optional(z.array(z.string().check(z.maxLength(100))).check(z.maxLength(64))),
      limit: z.optional(z.int().check(z.positive(), z.maximum(100_000))),
    }),
    z.object({ events: z.array(StoredEventSchema), head_seq: z.int() }),
    'Events of a run by seq range and kind.',
  ),
  'events.search': method(
    z.object({
      run_id: RunId,
      text: z.string().check(z.minLength(1), z.maxLength(500)),
      from: z.optional(z.int().check(z.nonnegative())),
      direction: z.optional(z.enum(['forward', 'backward'])),
      limit: z.optional(z.int().check(z.positive(), z.maximum(10_000))),
    }),
    z.object({ seqs: z.array(z.int()) }),
    'Seqs whose kind or payload contains the text.',
  ),
  'events.append': method(
    z.object({
      run_id: RunId,
      kind: z.string().check(z.minLength(1), z.maxLength(100)),
      // Its size is bounded by the ledger (MAX_PAYLOAD_BYTES of canonical JSON): larger content is an artifact.
      payload: z.record(z.string().check(z.maxLength(1000)), z.unknown()),
      v: z.optional(z.int().check(z.positive(), z.maximum(65_535))),
    }),
    StoredEventSchema,
    'Append one event to an executed run (created when new); the ledger assigns seq and chain.',
  ),
  'run.verify': method(ByRun, VerifyReportSchema, 'Recompute seq continuity and the chain of a run.'),
  'run.findings': method(ByRun, z.array(FindingSchema), 'Findings recorded for a run.'),
  'run.summary': method(
    ByRun,
    RunGlanceSchema,
    'What the runs list shows of a run: project, model, first prompt, tokens (read lazily per row).',
  ),
  'runs.details': method(
    z.object({ run_ids: z.array(RunId).check(z.minLength(1), z.maxLength(RUNS_DETAILS_MAX)) }),
    z.array(RunDetailsSchema),
    'What the runs list shows of several runs at once (the rows on screen): run.summary with the calls and errors of the state at its head. Runs that no longer exist, or whose state cannot be read, are left out.',
  ),
  'run.spans': method(
    ByRun,
    z.object({
      /** The run's spans in arrival order, each at the seq of its first event (OTLP runs; else none). */
      spans: z.array(
        z.object({
          seq: z.int(),
          span_id: z.string(),
          parent_span_id: z.nullable(z.string()),
          trace_id: z.nullable(z.string()),
          name: z.string(),
          /** Unix nanoseconds as decimal strings (64-bit: more than a double holds). */
          start_ns: z.string(),
          end_ns: z.string(),
          /** OTLP status code: 0 unset, 1 ok, 2 error. */
          status: z.int(),
          kind: z.string(),
        }),
      ),
      /** More spans than are returned (the first `spans.length` are). */
      truncated: z.boolean(),
    }),
    'The spans of a run received over OTLP, for its span tree and waterfall.',
  ),
  'folder.findings': method(
    z.object({ limit: z.optional(z.int().check(z.positive(), z.maximum(10_000))) }),
    z.object({ findings: z.array(FindingSchema), total: z.int() }),
    'Findings of the open folder that belong to no run: files that made no run (unreadable, no event in them).',
  ),
} as const;

export const ledgerPushes = {
  /** Another folder was opened (menu, drag-and-drop): reload everything. */
  'folder.changed': z.object({ folder: z.string() }),
  /** A native menu asked the UI to do something (e.g. `export-bundle`). */
  'ui.command': z.object({
    command: z.enum(['export-bundle', 'open-run', 'compare', 'open-team-ledger']),
    run_id: z.optional(z.string()),
  }),
  'events.appended': z.object({ run_id: z.string(), from_seq: z.int(), to_seq: z.int() }),
  'runs.changed': z.object({ run_ids: z.array(z.string()) }),
  'job.progress': z.object({
    job_id: z.string(),
    label: z.string(),
    done: z.number(),
    total: z.nullable(z.number()),
    finished: z.boolean(),
    error: z.optional(z.nullable(z.string())),
  }),
} as const;
