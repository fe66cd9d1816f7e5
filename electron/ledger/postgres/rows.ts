import { ZERO_HASH } from '../../../shared/protocol';
import { ProofloopError } from '../../../shared/result';
import { dict } from '../../../shared/dict.js';
import type { RunRow, RunSource, StoredEvent } from '../types';

/**
 * The team ledger's rows as the ledger's types, and the server's errors as ProofLoop's: what the
 * engine and its writer read back (engine.ts, writer.ts).
 */

export interface EventRowPg {
  seq: number;
  kind: string;
  v: number;
  at: string;
  payload: Buffer;
  hash: Buffer;
  digest: Buffer | null;
  line: number | null;
  source: string | null;
  prev: Buffer | null;
}

export const READ = `SELECT e.seq, e.kind, e.v, e.at, e.payload, e.hash, e.digest, e.line, e.source,
  (SELECT p.hash FROM events p WHERE p.run_no = e.run_no AND p.seq < e.seq ORDER BY p.seq DESC LIMIT 1) AS prev
  FROM events e`;

export /** 32 bytes from 64 hex digits; anything else is refused by name (Buffer.from would drop bad digits). */
function hexBytes(hex: string, what: string, seq: number): Buffer {
  if (!/^[0-9a-f]{64}$/.test(hex))
    throw new ProofloopError('bad_args', `seq ${seq}: ${what} is not 64 hex digits`);
  return Buffer.from(hex, 'hex');
}

export const RUNS_SQL = `SELECT r.*, encode(r.head_hash, 'hex') AS head_hex, r.lease_until > now() AS leased,
  (SELECT COUNT(*) FROM findings f WHERE f.run_id = r.run_id)::int AS findings FROM runs r`;

export function toRunRow(r: Record<string, unknown>): RunRow {
  return {
    run_id: r.run_id as string,
    source: r.source as RunSource,
    format: r.format as string,
    chained: r.chained as boolean,
    origin: (r.origin as string | null) ?? null,
    created_at: r.created_at as string,
    head_seq: r.head_seq as number,
    head_hash: r.head_hex as string,
    first_at: (r.first_at as string | null) ?? null,
    last_at: (r.last_at as string | null) ?? null,
    status: r.status as string,
    task_id: (r.task_id as string | null) ?? null,
    variant: (r.variant as string | null) ?? null,
    event_count: r.event_count as number,
    findings: r.findings as number,
    writer: r.leased
      ? {
          pid: r.lease_pid as number,
          hostname: r.lease_host as string,
          label: (r.lease_label as string | null) ?? null,
        }
      : null,
    meta: JSON.parse(r.meta as string) as Record<string, unknown>,
  };
}

export function toStored(r: EventRowPg, runId: string): StoredEvent {
  const e: StoredEvent = {
    seq: r.seq,
    run_id: runId,
    kind: r.kind,
    v: r.v,
    at: r.at,
    payload: JSON.parse(r.payload.toString('utf8')) as Record<string, unknown>,
    prev: r.prev ? r.prev.toString('hex') : ZERO_HASH,
    hash: r.hash.toString('hex'),
  };
  if (r.digest) {
    e.digest = r.digest.toString('hex');
    e.redacted = true;
  }
  if (r.line != null) {
    let meta: Record<string, unknown> = dict();
    try {
      meta = r.source ? (JSON.parse(r.source) as Record<string, unknown>) : {};
    } catch {
      meta = {};
    }
    e.source = { line: r.line, ...meta };
  }
  return e;
}

/** A server error as ProofLoop's: refusals by the roles and triggers named as such. */
export function asLedgerError(err: unknown, where: string): Error {
  if (err instanceof ProofloopError) return err;
  const e = err as Error & { code?: string };
  if (e.code === '42501') return new ProofloopError('forbidden', `${where}: ${e.message}`);
  if (e.code === '23505') return new ProofloopError('conflict', `${where}: ${e.message}`);
  return new ProofloopError('io', `ledger at ${where}: ${e.message}`);
}
