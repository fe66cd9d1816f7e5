import path from 'node:path';
import { appendFileSync, mkdirSync } from 'node:fs';
import {
  CURRENT_V,
  ZERO_HASH,
  chainLink,
  checkPayload,
  eventDigest,
  KIND_RE,
  type LedgerEvent,
  type NewEvent,
  toJsonLine,
} from '../../shared/protocol';
import { redactCredentials } from '../../shared/redact';
import { ProofloopError } from '../../shared/result';
import { sha256Hex } from '../crypto';
import { ledgerPath, openDatabase, type Db } from './open';
import { acquireWriter, releaseWriter, writerOf } from './writers';
import type { Finding, ReadQuery, RunFormat, RunRow, RunSource, StoredEvent } from './types';

interface EventRowDb {
  run_id: string;
  seq: number;
  kind: string;
  v: number;
  at: string;
  payload: string;
  prev: string;
  hash: string;
  digest: string;
  redacted: number;
}

export function rowToEvent(r: EventRowDb): StoredEvent {
  const e: StoredEvent = {
    seq: r.seq,
    run_id: r.run_id,
    kind: r.kind,
    v: r.v,
    at: r.at,
    payload: JSON.parse(r.payload) as Record<string, unknown>,
    prev: r.prev,
    hash: r.hash,
  };
  if (r.redacted) {
    e.digest = r.digest;
    e.redacted = true;
  }
  return e;
}

export interface CreateRunOptions {
  source?: RunSource;
  format?: RunFormat;
  chained?: boolean;
  origin?: string | null;
  meta?: Record<string, unknown>;
}

export type AppendListener = (runId: string, events: readonly StoredEvent[]) => void;

/** Read-only view of a ledger: code that holds only this cannot append. */
export interface LedgerReader {
  readonly folder: string;
  runs(): RunRow[];
  run(runId: string): RunRow | undefined;
  read(runId: string, q?: ReadQuery): StoredEvent[];
  iterate(runId: string, q?: ReadQuery): IterableIterator<StoredEvent>;
  event(runId: string, seq: number): StoredEvent | undefined;
  findings(runId?: string): Finding[];
}

const STATUS_OF: Record<string, string> = {
  run_started: 'running',
  run_resumed: 'running',
  run_completed: 'completed',
  run_failed: 'failed',
};

/**
 * The ledger of record of one runs folder: `<folder>/.proofloop/ledger.db`.
 * Appends are one BEGIN IMMEDIATE transaction each (or per batch) that assigns seq and chain.
 */
export class Ledger implements LedgerReader {
  readonly db: Db;
  private readonly listeners = new Set<AppendListener>();
  private readonly stmts;

  private constructor(
    readonly folder: string,
    readonly now: () => string,
  ) {
    this.db = openDatabase(ledgerPath(folder));
    const db = this.db;
    this.stmts = {
      head: db.prepare('SELECT head_seq, head_hash, source, status FROM runs WHERE run_id = ?'),
      insert: db.prepare(
        `INSERT INTO events (run_id, seq, kind, v, at, payload, prev, hash, digest, redacted)
         VALUES (@run_id, @seq, @kind, @v, @at, @payload, @prev, @hash, @digest, @redacted)`,
      ),
      updateHead: db.prepare(
        `UPDATE runs SET head_seq = @seq, head_hash = @hash, last_at = @at,
           first_at = COALESCE(first_at, @at), status = COALESCE(@status, status),
           task_id = COALESCE(@task_id, task_id), variant = COALESCE(@variant, variant)
         WHERE run_id = @run_id`,
      ),
      token: db.prepare('SELECT token FROM writers WHERE run_id = ?'),
      readRange: db.prepare(
        'SELECT * FROM events WHERE run_id = ? AND seq >= ? AND seq <= ? ORDER BY seq LIMIT ?',
      ),
      one: db.prepare('SELECT * FROM events WHERE run_id = ? AND seq = ?'),
    };
  }

  static open(folder: string, opts: { now?: () => string } = {}): Ledger {
    return new Ledger(path.resolve(folder), opts.now ?? (() => new Date().toISOString()));
  }

  close(): void {
    this.db.close();
  }

  onAppend(fn: AppendListener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  createRun(runId: string, opts: CreateRunOptions = {}): void {
    if (!/^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/.test(runId)) {
      throw new ProofloopError(
        'bad_args',
        `run id "${runId}" must be 1-200 letters, digits, '.', '_', ':' or '-'`,
      );
    }
    const r = this.db
      .prepare(
        `INSERT OR IGNORE INTO runs (run_id, source, format, chained, origin, created_at, head_hash, meta)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        runId,
        opts.source ?? 'executed',
        opts.format ?? 'proofloop',
        opts.chained === false ? 0 : 1,
        opts.origin ?? null,
        this.now(),
        ZERO_HASH,
        JSON.stringify(opts.meta ?? {}),
      );
    if (r.changes === 0) throw new ProofloopError('conflict', `run ${runId} already exists`);
  }

  /** Opens the single writer of an executed run; a second writer, in any process, gets a clear error. */
  writer(runId: string, opts: { label?: string; create?: CreateRunOptions | false } = {}): RunWriter {
    const existing = this.run(runId);
    if (!existing) {
      if (opts.create === false) throw new ProofloopError('not_found', `no run ${runId} in ${this.folder}`);
      this.createRun(runId, opts.create ?? {});
    } else if (existing.source !== 'executed') {
      throw new ProofloopError('read_only', `run ${runId} was ${existing.source}: it is read-only`);
    }
    const token = acquireWriter(this.db, runId, opts.label ?? null);
    return new RunWriter(this, runId, token);
  }

  /** @internal Appends inside one IMMEDIATE transaction; called by RunWriter only. */
  appendLocked(runId: string, token: string, items: readonly NewEvent[]): StoredEvent[] {
    const prepared = items.map((item) => this.prepare(item));
    const out: StoredEvent[] = [];
    const tx = this.db.transaction(() => {
      const held = this.stmts.token.get(runId) as { token: string } | undefined;
      if (!held || held.token !== token) {
        throw new ProofloopError('conflict', `the writer of run ${runId} lost its lock to another process`);
      }
      const head = this.stmts.head.get(runId) as { head_seq: number; head_hash: string } | undefined;
      if (!head) throw new ProofloopError('not_found', `no run ${runId}`);
      let seq = head.head_seq;
      let prev = head.head_hash;
      let status: string | null = null;
      let taskId: string | null = null;
      let variant: string | null = null;
      let at = '';
      for (const p of prepared) {
        seq += 1;
        at = p.at ?? this.now();
        const fields = { seq, run_id: runId, kind: p.kind, v: p.v, at, payload: p.payload };
        const digest = eventDigest(fields, sha256Hex);
        const hash = chainLink(prev, digest, sha256Hex);
        this.stmts.insert.run({ ...fields, payload: p.json, prev, hash, digest, redacted: 0 });
        out.push({ ...fields, prev, hash });
        prev = hash;
        status = STATUS_OF[p.kind] ?? status;
        if (p.kind === 'run_started') {
          taskId = typeof p.payload.task_id === 'string' ? p.payload.task_id : null;
          const agent = p.payload.agent as { variant?: unknown } | undefined;
          variant = typeof agent?.variant === 'string' ? agent.variant : null;
        }
      }
      this.stmts.updateHead.run({ run_id: runId, seq, hash: prev, at, status, task_id: taskId, variant });
    });
    tx.immediate();
    this.mirror(runId, out);
    for (const l of this.listeners) l(runId, out);
    return out;
  }

  private prepare(item: NewEvent) {
    if (!KIND_RE.test(item.kind))
      throw new ProofloopError('bad_args', `kind "${item.kind}" must be a snake_case name`);
    if (item.payload === null || typeof item.payload !== 'object' || Array.isArray(item.payload)) {
      throw new ProofloopError('bad_args', `payload of ${item.kind} must be a JSON object`);
    }
    // Secrets never enter the ledger: the credential redactor runs before the digest is taken.
    const payload = redactCredentials(item.payload).value;
    const v = item.v ?? CURRENT_V;
    const checked = checkPayload(item.kind, v, payload);
    if (!checked.ok) throw new ProofloopError('bad_args', checked.message);
    const json = JSON.stringify(payload);
    // Round-trip so what is hashed is exactly what a reader will parse back (drops undefined, NaN…).
    return { kind: item.kind, v, at: item.at, payload: JSON.parse(json) as Record<string, unknown>, json };
  }

  /** The JSONL mirror is a convenience copy; the database is the authority (repairMirrors rebuilds it). */
  private mirror(runId: string, events: readonly StoredEvent[]): void {
    if (events.length === 0) return;
    try {
      const dir = path.join(this.folder, runId);
      mkdirSync(dir, { recursive: true });
      appendFileSync(path.join(dir, 'events.jsonl'), events.map((e) => toJsonLine(e) + '\n').join(''));
    } catch {
      // A failed mirror write loses nothing: the next open repairs the mirror from the database.
    }
  }

  runs(): RunRow[] {
    const rows = this.db
      .prepare(
        `SELECT r.*, (SELECT COUNT(*) FROM findings f WHERE f.run_id = r.run_id) AS findings,
                (SELECT COUNT(*) FROM events e WHERE e.run_id = r.run_id) AS event_count
         FROM runs r ORDER BY r.created_at DESC, r.run_id`,
      )
      .all() as Record<string, unknown>[];
    return rows.map((r) => this.toRunRow(r));
  }

  run(runId: string): RunRow | undefined {
    const r = this.db
      .prepare(
        `SELECT r.*, (SELECT COUNT(*) FROM findings f WHERE f.run_id = r.run_id) AS findings,
                (SELECT COUNT(*) FROM events e WHERE e.run_id = r.run_id) AS event_count
         FROM runs r WHERE r.run_id = ?`,
      )
      .get(runId) as Record<string, unknown> | undefined;
    return r ? this.toRunRow(r) : undefined;
  }

  private toRunRow(r: Record<string, unknown>): RunRow {
    const w = writerOf(this.db, r.run_id as string);
    return {
      run_id: r.run_id as string,
      source: r.source as RunSource,
      format: r.format as RunFormat,
      chained: r.chained === 1,
      origin: (r.origin as string | null) ?? null,
      created_at: r.created_at as string,
      head_seq: r.head_seq as number,
      head_hash: r.head_hash as string,
      first_at: (r.first_at as string | null) ?? null,
      last_at: (r.last_at as string | null) ?? null,
      status: r.status as string,
      task_id: (r.task_id as string | null) ?? null,
      variant: (r.variant as string | null) ?? null,
      event_count: r.event_count as number,
      findings: r.findings as number,
      writer: w ? { pid: w.pid, hostname: w.hostname, label: w.label } : null,
    };
  }

  read(runId: string, q: ReadQuery = {}): StoredEvent[] {
    return [...this.iterate(runId, q)];
  }

  *iterate(runId: string, q: ReadQuery = {}): IterableIterator<StoredEvent> {
    const from = q.from ?? 1;
    const to = q.to ?? Number.MAX_SAFE_INTEGER;
    const limit = q.limit ?? -1;
    let stmt;
    let params: unknown[];
    if (q.kinds && q.kinds.length > 0) {
      const marks = q.kinds.map(() => '?').join(', ');
      stmt = this.db.prepare(
        `SELECT * FROM events WHERE run_id = ? AND kind IN (${marks}) AND seq >= ? AND seq <= ? ORDER BY seq LIMIT ?`,
      );
      params = [runId, ...q.kinds, from, to, limit];
    } else {
      stmt = this.stmts.readRange;
      params = [runId, from, to, limit];
    }
    for (const r of stmt.iterate(...params) as IterableIterator<EventRowDb>) yield rowToEvent(r);
  }

  event(runId: string, seq: number): StoredEvent | undefined {
    const r = this.stmts.one.get(runId, seq) as EventRowDb | undefined;
    return r ? rowToEvent(r) : undefined;
  }

  findings(runId?: string): Finding[] {
    const rows = (
      runId === undefined
        ? this.db.prepare('SELECT * FROM findings ORDER BY id').all()
        : this.db.prepare('SELECT * FROM findings WHERE run_id = ? ORDER BY id').all(runId)
    ) as (Finding & { id: number })[];
    return rows.map(({ id: _id, ...f }) => f);
  }

  addFindings(runId: string | null, findings: readonly Finding[]): void {
    const ins = this.db.prepare(
      'INSERT INTO findings (run_id, file, line, seq, code, message) VALUES (?, ?, ?, ?, ?, ?)',
    );
    this.db.transaction(() => {
      for (const f of findings) ins.run(runId, f.file, f.line, f.seq, f.code, f.message);
    })();
  }
}

/** The one writer of one run. Close it when done: the lock is released, the run stays. */
export class RunWriter {
  private closed = false;
  constructor(
    private readonly ledger: Ledger,
    readonly runId: string,
    private readonly token: string,
  ) {}

  append(
    kind: string,
    payload: Record<string, unknown>,
    opts: { v?: number; at?: string } = {},
  ): StoredEvent {
    return this.appendBatch([{ kind, payload, ...opts }])[0]!;
  }

  appendBatch(items: readonly NewEvent[]): StoredEvent[] {
    if (this.closed) throw new ProofloopError('conflict', `the writer of run ${this.runId} is closed`);
    if (items.length === 0) return [];
    return this.ledger.appendLocked(this.runId, this.token, items);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    releaseWriter(this.ledger.db, this.runId, this.token);
  }
}

export type { LedgerEvent };
