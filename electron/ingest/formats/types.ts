/**
 * The interface every source format implements (the shape of an OpenTelemetry Collector receiver:
 * detection, reading and mapping as one small component per format, registered in registry.ts).
 *
 * An adapter never rewrites what the source says. It names: each source record becomes one or more
 * events of a protocol kind (or of the source's own type, for records it has no protocol name for),
 * whose payload is the record as written. How a named record reads as a protocol v1 payload (which
 * field is the call id, what the status is) is an interpretation made on read by the projection,
 * through the format's view in shared/formats/<name>.ts; it is never stored.
 */

import type { SourceRef } from '../../../shared/formats/source-ref';

export type { SourceRef };
export type Json = Record<string, unknown>;

/** One event an adapter makes of a record. */
export interface MappedEvent {
  /** A protocol v1 kind, or a name of the adapter's own (snake_case, ≤ 64 chars: KIND_RE). */
  kind: string;
  /** The source's time for this record as written; '' when it has none. */
  at: string;
  /** The record as written (the importer canonicalises and redacts it; nothing else may change it). */
  payload: Json;
  source?: SourceRef;
  /**
   * The source's run this event belongs to, when one file holds several (seed 004's aggregate_id)
   * or when a format keys runs itself. Absent: the file's run.
   */
  run?: string;
  /** The source's own seq, for formats that number their events (ProofLoop's, seed 000). */
  seq?: number;
  /** The payload schema version the source names (ProofLoop's `v`); absent: 1. */
  v?: number;
  /** ProofLoop's own chain fields as the line carries them (checked, never recomputed). */
  chain?: { prev: unknown; hash: unknown; digest?: unknown };
  /**
   * What is wrong with the record's envelope, when it is still an event (a seq and a kind, but an
   * `at` that is not a string, say): stored as written, with an `invalid_event` finding.
   */
  invalid?: string;
  /**
   * Facts about the run this event begins, kept on the run (`runs.meta`) for the runs list to
   * group and filter by (an Inspect sample's eval: task, model, solver, scores). Read from the
   * first event of a run only.
   */
  runMeta?: Json;
}

/**
 * One record of a streamed file (see StreamedReader): the events it makes, or why it makes none. `where`
 * names the record in the file (a zip entry and an index in it, a JSON path) for findings.
 */
export type StreamedRecord = { where: string; events: MappedEvent[] } | { where: string; error: string };

/**
 * A format whose files are not JSON lines but one document too large to read whole (a zip of JSON
 * entries, a JSON value of many MB: an eval log), read record after record by its own reader
 * (../streamed.ts); documents read whole are DocumentAdapters (../document.ts). The importer treats each record as it treats a
 * line (one or more events, or a finding), commits between records, and reads such a file again
 * only when it changes (then it is `file_rewritten`: documents are rewritten, never appended to).
 */
export interface StreamedReader {
  /** Whether a file whose first bytes are `head` (up to 4 KiB) is of this format: content only. */
  claims(head: Buffer): boolean;
  /** The file's records in order. Must hold no more of the file in memory than one record needs. */
  records(file: string): AsyncIterable<StreamedRecord>;
}

/** A record that cannot be an event: the line becomes a finding with this message. */
export interface MapError {
  error: string;
  code?: 'invalid_event';
}

export interface FormatAdapter {
  /** Stored on the run (`runs.format`) and shown in the runs list. */
  readonly name: string;
  /** A person's name for it: "Claude Code session". */
  readonly label: string;
  /**
   * Whether a file whose first record is `first` is of this format. Content only, never the file
   * name. Adapters are asked in registry order; the first to claim a file reads all of it.
   */
  detect(first: Json): boolean;
  /**
   * One record (a parsed JSON object of one line) to its events. Pure and independent of every other
   * line (lines are mapped in parallel workers, in no order): whatever needs two records (pairing a
   * result with its call, a tree of uuids) is done on read, from the ids in `source`.
   * An unknown record type or field is never an error: it is an event of its own kind.
   */
  map(record: Json): MappedEvent[] | MapError;
  /** The run id a file of this format is about, from its first record (else the file's key). */
  runId?(first: Json, key: string): string | null;
  /** Set for a format whose files are streamed documents rather than JSON lines (see StreamedReader). */
  streamed?: StreamedReader;
}

/**
 * One part of a whole-file source (a SWE-agent `.traj`, an ATIF `trajectory.json`, an OpenHands
 * event stream): a value of the document that the adapter maps as a record of its own.
 */
export interface DocPart {
  /** The value as written (an object; a non-object value is wrapped by the adapter and said so). */
  record: Json;
  /** What the part is, for the adapter's mapPart (`step`, `history`, `info`, …). */
  type: string;
  /** Where it is: an RFC 6901 JSON pointer into the document, or the file it came from. */
  pointer: string;
  /** The source's run this part belongs to, when one document holds several (ATIF subagents). */
  run?: string;
}

/**
 * A source that is one JSON document (or a folder of them), not JSONL: it is read whole (bounded)
 * when it is complete, split into its parts, and each part mapped like a record. Detected by the
 * parsed content (`claims`), after a cheap look at its first bytes (`sniff`) so that a folder's
 * other `.json` files are not parsed.
 */
export interface DocumentAdapter {
  readonly name: string;
  readonly label: string;
  /** Whether the first bytes of a file (≤ 4 KiB, may be cut mid-token) may be of this format. */
  sniff(head: string): boolean;
  /** Whether a parsed document is of this format. */
  claims(doc: unknown): boolean;
  /**
   * The parts of the document in the order they become events. Iterative (never recursive in the
   * input's depth); a part the adapter cannot read is still a part (its mapPart says why).
   */
  parts(doc: unknown): DocPart[];
  /** One part to its events, pure; an error makes the part a finding that keeps its text. */
  mapPart(part: DocPart): MappedEvent[] | MapError;
  /** The run id of a document, from its content (else the importer names it by its file). */
  runId?(doc: unknown): string | null;
}
