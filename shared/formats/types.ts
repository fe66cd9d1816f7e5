/**
 * How a stored event of a source format reads as a protocol v1 payload, on read (the projection,
 * the conversation view, diff, the import's own check). The stored payload stays what the source
 * wrote; a view returns the v1 fields it can read from it and names the ones it had to infer
 * (shown in the payload view). Pure: no Node, no DOM; used by both sides.
 */
import type { SourceRef } from './source-ref';

export interface Interpreted {
  /** The payload as protocol v1 reads it. */
  payload: Record<string, unknown>;
  /** v1 fields not in the source, filled by the view (e.g. `agent` of a seed 000 run_started). */
  inferred: string[];
}

/** What a view may know of the event besides its kind and payload. */
export interface ViewContext {
  seq: number;
  run_id: string;
  source?: SourceRef | null;
}

/** Tokens an event reports, as its source counts them (FormatView.usage). */
export type Usage =
  /** One API response's tokens so far: a later event with the same key replaces its count. */
  | { key: string; tokens: number }
  /** The run's cumulative total so far. */
  | { total: number };

export interface FormatView {
  readonly name: string;
  /**
   * A session format (Claude Code, Codex): its runs begin with their first record, not with a
   * run_started, and a later run_started (Codex writes a session_meta per resume) is context.
   */
  readonly session?: boolean;
  /** null: the payload already reads as v1 as it is (ProofLoop's own format). */
  interpret(kind: string, payload: Record<string, unknown>, ctx: ViewContext): Interpreted | null;
  /** The tokens this stored event reports, where its format counts them in a way of its own. */
  usage?(kind: string, payload: Record<string, unknown>, ctx: ViewContext): Usage | null;
  /**
   * The session a run of this format is part of, from the run's id as its source named it: the id
   * the same program's telemetry names it by (OTLP `session.id`, `conversation.id`), so that two
   * sources of one session can be read together (electron/state/cross-check.ts). Null: none.
   */
  sessionOf?(sourceRunId: string): string | null;
}
