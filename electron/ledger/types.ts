import type { LedgerEvent } from '../../shared/protocol';

export type RunSource = 'executed' | 'imported' | 'bundle';
/** The adapter that read the run (electron/ingest/formats/registry.ts): 'proofloop', 'seed000', … */
export type RunFormat = string;

export interface RunRow {
  run_id: string;
  source: RunSource;
  format: RunFormat;
  chained: boolean;
  origin: string | null;
  created_at: string;
  head_seq: number;
  head_hash: string;
  first_at: string | null;
  last_at: string | null;
  status: string;
  task_id: string | null;
  variant: string | null;
  event_count: number;
  findings: number;
  writer: { pid: number; hostname: string; label: string | null } | null;
  meta: Record<string, unknown>;
}

export interface Finding {
  code: FindingCode;
  file: string | null;
  line: number | null;
  seq: number | null;
  message: string;
  run_id?: string | null;
  /** A line that is no event: its text, bounded and redacted. */
  excerpt?: string | null;
}

export type FindingCode =
  | 'broken_json'
  | 'truncated_line'
  | 'seq_gap'
  | 'seq_duplicate'
  | 'seq_out_of_order'
  | 'run_id_mismatch'
  | 'chain_broken'
  | 'invalid_event'
  | 'not_utf8'
  | 'line_too_long'
  | 'file_rewritten'
  | 'digest_mismatch'
  | 'head_mismatch'
  | 'number_rounded'
  | 'import_failed'
  | 'unreadable_file'
  // Derived on read, never stored (electron/state/cross-check.ts): two runs of one session (its
  // transcript and its telemetry) decide one call differently.
  | 'decision_conflict';

export interface ReadQuery {
  from?: number;
  to?: number;
  kinds?: readonly string[];
  limit?: number;
}

/** A stored event, with what the ledger knows about it beyond the envelope. */
export type StoredEvent = LedgerEvent & {
  redacted?: boolean;
  /** An imported event: the line of its run's source file, the part of the record, the source's ids. */
  source?: { line: number; part?: number; ids?: Record<string, string> };
};
