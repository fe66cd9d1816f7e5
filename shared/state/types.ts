import type { SourceRef } from '../formats/source-ref';
/**
 * The run state a person reads at a seq: the projection of events 1..seq (DESIGN.md, "State at seq").
 *
 * Bounded on purpose. A run may have 1,000,000 events and a snapshot of the state is stored every K
 * of them, so every list that grows with the run keeps full detail only for its most recent items
 * (see STATE_CAPS) and says what it dropped: `{ items, total, dropped }`. Counts and sums stay exact.
 * The state is plain JSON (no undefined, no Map, no class) so a snapshot round-trips exactly.
 */

/** How many recent items each growing list keeps. Part of PROJECTION_VERSION: change one, bump it. */
export const STATE_CAPS = {
  calls: 50,
  context: 20,
  files: 30,
  denials: 20,
  errors: 20,
  verdicts: 10,
  notes: 30,
  annotations: 20,
  resumes: 10,
  unknown_recent: 10,
  /** Distinct unknown kind names counted by name; more are counted in `unknown.other`. */
  unknown_kinds: 50,
  /** Characters of text (args, excerpts, content, patches, reasons) kept per item. */
  text: 120,
  /** Responses whose token counts are remembered by key (usage_recent). */
  usage_keys: 16,
} as const;

/** A list that keeps its most recent `items`; `total` ever added, `dropped` = total − items kept. */
export interface Capped<T> {
  items: T[];
  total: number;
  dropped: number;
}

export type RunStatus = 'empty' | 'running' | 'completed' | 'failed';

export type CallStatus = 'proposed' | 'allowed' | 'denied' | 'running' | 'returned' | 'timed_out';

export interface CallRecord {
  call_id: string;
  /** 1-based ordinal of the proposal in the run (the diff shows call ids as these). */
  n: number;
  tool: string;
  /** The proposed args, or an excerpt `{ excerpt, chars }` when their JSON is longer than STATE_CAPS.text. */
  args: unknown;
  status: CallStatus;
  proposed_seq: number | null;
  tokens: number | null;
  /**
   * The call's decision: the first one folded; `by` who decided (config, hook, user, proofloop…,
   * shared/formats/decision.ts), `also` the rules of later sources that said the same.
   */
  decision: {
    allowed: boolean;
    rule: string;
    reason: string | null;
    seq: number;
    by: string | null;
    also: string[];
  } | null;
  invoked_seq: number | null;
  result: {
    status: string;
    excerpt: string | null;
    bytes: number | null;
    seq: number;
  } | null;
  timed_out: { timeout_ms: number; seq: number } | null;
  duration_ms: number | null;
  /**
   * Every source that decided this call, where the session has more than one run that speaks of
   * it (its transcript and its telemetry): this run's and the others', each with its run and seq.
   * Set on read by electron/state/cross-check.ts, never by the fold; absent when no other run
   * of the session names the call.
   */
  decision_sources?: DecisionSource[];
}

/** One source's decision on a call (electron/state/cross-check.ts). */
export interface DecisionSource {
  run_id: string;
  /** The run's format: `claude_code` (its transcript), `otlp` (its telemetry), … */
  format: string;
  seq: number;
  allowed: boolean;
  rule: string;
  by: string | null;
}

export interface ContextEntry {
  seq: number;
  kind: string;
  role: 'model' | 'tool' | 'context';
  text: string;
  tokens: number | null;
}

export interface FileRecord {
  path: string;
  changes: number;
  first_seq: number;
  last_seq: number;
  /** Digest before the first change and after the latest one. */
  before: string | null;
  after: string | null;
  patch: string | null;
}

export interface Denial {
  seq: number;
  call_id: string;
  tool: string | null;
  rule: string;
  reason: string;
  /** Who decided (config, hook, user, proofloop…), where the event says. */
  by: string | null;
}

export interface ErrorRecord {
  seq: number;
  kind: string;
  call_id: string | null;
  message: string;
}

export interface Verdict {
  seq: number;
  passed: boolean;
  tests_passed: number | null;
  tests_failed: number | null;
  command: string | null;
}

/** A contradiction between an event and the state: kept and noted, never thrown. */
export interface Note {
  seq: number;
  kind: string;
  code: NoteCode;
  message: string;
}

export type NoteCode =
  | 'before_start'
  | 'after_end'
  | 'started_twice'
  | 'invalid_payload'
  | 'unknown_call'
  | 'duplicate_call'
  | 'decided_twice'
  | 'decision_conflict'
  | 'invoked_without_allow'
  | 'result_without_invoke'
  | 'result_twice'
  | 'annotates_future'
  | 'run_id_mismatch'
  | 'seq_not_next';

export interface RunState {
  /** PROJECTION_VERSION that produced this state. */
  projection: string;
  run_id: string;
  /** Last seq folded (0 before any event). */
  seq: number;
  status: RunStatus;
  /** Why the run stopped (or what stops it), in a sentence; null while it runs normally. */
  why: string | null;
  ended: {
    seq: number;
    kind: string;
    outcome: string | null;
    reason: string | null;
    error_type: string | null;
  } | null;
  started_at: string | null;
  /** started_at as epoch ms (what wall-time use is measured from). */
  started_ms: number | null;
  last_at: string | null;
  task: {
    task_id: string;
    goal: string;
    policy_digest: string | null;
    mode: string | null;
    of: string | null;
  } | null;
  agent: { name: string; variant: string | null; seed: number | null } | null;
  /** Steps taken: model proposals. */
  step: number;
  budget: {
    limits: Record<string, number>;
    used: { steps: number; tokens: number; wall_ms: number };
    /** Budgets whose use reached their limit, by name. */
    over: string[];
    exhausted: { budget: string; limit: number; used: number; seq: number } | null;
  };
  /**
   * Session formats: the token counts of the latest responses, by key (FormatView.usage), so that a
   * response its source writes over several lines (Claude Code: one per content block, its usage
   * growing as it streams) counts once, as its last line says.
   */
  usage_recent: { key: string; tokens: number }[];
  context: Capped<ContextEntry> & { tokens: number | null };
  calls: Capped<CallRecord> & { open: number };
  files: Capped<FileRecord> & { changes: number };
  denials: Capped<Denial>;
  errors: Capped<ErrorRecord>;
  verdicts: Capped<Verdict> & { passed: number; failed: number; last: Verdict | null };
  annotations: Capped<{ seq: number; target_seq: number; note: string }>;
  resumes: Capped<{ seq: number; from_seq: number }>;
  /** Events of every kind, by kind (unknown kinds beyond STATE_CAPS.unknown_kinds are in unknown.other). */
  counts: Record<string, number>;
  unknown: Capped<{ seq: number; kind: string }> & { kinds: Record<string, number>; other: number };
  notes: Capped<Note>;
  caps: typeof STATE_CAPS;
}

/** What evolve reads from an event: the envelope without its chain fields. */
export interface FoldEvent {
  seq: number;
  run_id: string;
  kind: string;
  v: number;
  at: string;
  payload: Record<string, unknown>;
  /** An imported run's format: its payloads read as v1 through that format's view (shared/formats). */
  fmt?: string;
  source?: SourceRef | null;
}

export interface Change {
  path: string;
  old?: unknown;
  new?: unknown;
}
