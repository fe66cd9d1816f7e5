import type { LedgerEvent } from '../../shared/protocol';

export type RunSource = 'executed' | 'imported' | 'bundle';
export type RunFormat = 'proofloop' | 'seed000' | 'seed004' | 'otlp';

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
  | 'head_mismatch';

export interface ReadQuery {
  from?: number;
  to?: number;
  kinds?: readonly string[];
  limit?: number;
}

/** A stored event, with what the ledger knows about it beyond the envelope. */
export type StoredEvent = LedgerEvent & { redacted?: boolean };
