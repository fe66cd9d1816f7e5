import path from 'node:path';
import { mkdirSync } from 'node:fs';
import { ZERO_HASH, MAX_SEQ, type LedgerEvent, type NewEvent } from '../../shared/protocol';
import { ProofloopError } from '../../shared/result';
import { confinedLedgerPath, isOwnLedger, openDatabase, type Db } from './open';
import { kindsQuery } from './kinds-index';
import { ID_RANGE, idOfSeq, idRange, idsBefore, LAST_HASH_SQL } from './event-ids';
import { MirrorAppender } from './mirror';
import { checkAfterEnd } from './terminal';
import { prepared } from './statements';
import { RowBatch } from './row-batch';
import { checkShape } from './prepare';
import { finishItems, linkChunk, type ChunkItems } from './chunk';
import { importedFacts, runFacts } from './run-facts';
import { AppendHelper, HelperFailed, type ChunkDone } from './append-helper';
import {
  itemsSource,
  serializedSource,
  stamp,
  type AppendSource,
  type SerializedItems,
} from './append-source';
import { acquireWriter, releaseWriter, writerOf } from './writers';
import type { Finding, ReadQuery, RunFormat, RunRow, RunSource, StoredEvent } from './types';
import type { WriterRights } from './terminal';

interface EventRowDb {
  seq: number;
  kind: string;
  v: number;
  at: string;
  payload: string;
  hash: Buffer;
  line?: number | null;
  source?: string | null;
  digest: Buffer | null;
}

/** An event of a read-only run (JSONL import, bundle) whose seq and hash come from its source. */
export interface ImportedEvent {
  seq: number;
  kind: string;
  v: number;
  at: string;
  /** The payload as stored (already redacted), JSON text. */
  payloadJson: string;
  /** The event's hash (hex) as its source chained it. */
  hash: string;
  /** The original digest (hex) when the stored payload differs from what was hashed (redaction). */
  digest?: string | null;
  /** The source line it came from. */
  line?: number | null;
  /** The source's own ids and the part of the record, JSON (electron/ingest/formats/types.ts). */
  source?: string | null;
}

function rowToEvent(r: EventRowDb, runId: string, prev: string): StoredEvent {
  const e: StoredEvent = {
    seq: r.seq,
    run_id: runId,
    kind: r.kind,
    v: r.v,
    at: r.at,
    payload: JSON.parse(r.payload) as Record<string, unknown>,
    prev,
    hash: r.hash.toString('hex'),
  };
  if (r.digest) {
    e.digest = r.digest.toString('hex');
    e.redacted = true;
  }
  if (r.line != null) e.source = { line: r.line, ...(r.source ? parseMeta(r.source) : {}) };
  return e;
}

function parseMeta(text: unknown): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(typeof text === 'string' ? text : '{}');
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

const hexToBlob = (hex: string): Buffer => Buffer.from(hex, 'hex');
const EMPTY: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;

/**
 * Appends of at least this many items are prepared in the append helper's thread while this one
 * inserts (append-helper.ts). Measured against one thread, alternating: 512 items no faster, 1,024
 * ~1.15x, 2,048 1.2-1.35x, 10,000 ~1.35x; the hand-over costs ~15% more CPU in all.
 */
const HELPER_MIN = 2048;
/** Items a chunk sent to the helper: answers come back while later chunks are still being sent. */
const HELPER_CHUNK = 256;

const READ_COLUMNS = 'seq, kind, v, at, payload, hash, digest, line, source';
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

/**
 * The ledger of record of one runs folder: `<folder>/.proofloop/ledger.db`.
 * Appends are one BEGIN IMMEDIATE transaction each (or per batch) that assigns seq and chain.
 */
/**
 * The first and last times of an append: of the events that have one. An imported record without
 * a time (`at` '') leaves the run's times as they were (null: no change).
 */
function timesOf(events: readonly { at: string }[]): { at: string | null; first_at: string | null } {
  let first: string | null = null;
  let last: string | null = null;
  for (const e of events) {
    if (e.at === '') continue;
    first ??= e.at;
    last = e.at;
  }
  return { at: last, first_at: first };
}

export class Ledger implements LedgerReader {
  readonly db: Db;
  private readonly listeners = new Set<AppendListener>();
  /** One transaction function for every append (building one per call measured ~7 µs an append). */
  private readonly appendTx: ReturnType<Db['transaction']>;
  private readonly helperTx: ReturnType<Db['transaction']>;
  /** The append helper thread, started at the first large append; false: none (failed, or not wanted). */
  private helper: AppendHelper | null | false = null;
  private readonly stmts;

  /**
   * Where the folders of runs this ledger executes go (`<root>/<run_id>/`: workspace, artifacts,
   * events.jsonl mirror): the runs folder itself, or for another program's folder (a Claude Code
   * projects folder) `runs/` beside its ledger in ProofLoop's own directory, so nothing is written
   * into that folder.
   */
  readonly runsRoot: string;

  private constructor(
    readonly folder: string,
    readonly now: () => string,
  ) {
    const file = confinedLedgerPath(folder);
    this.runsRoot = isOwnLedger(folder, file) ? folder : path.join(path.dirname(file), 'runs');
    if (this.runsRoot !== folder) mkdirSync(this.runsRoot, { recursive: true, mode: 0o700 });
    this.db = openDatabase(file);
    this.appendTx = this.db.transaction(this.insertLocked.bind(this));
    this.helperTx = this.db.transaction(this.insertWithHelper.bind(this));
    const db = this.db;
    this.stmts = {
      head: db.prepare('SELECT run_no, head_seq, head_hash FROM runs WHERE run_id = ?'),
      headAndWriter: db.prepare(
        'SELECT r.run_no, r.head_seq, r.head_hash, r.status, w.token FROM runs r LEFT JOIN writers w USING (run_id) WHERE r.run_id = ?',
      ),
      runNo: db.prepare('SELECT run_no FROM runs WHERE run_id = ?').pluck(),
      format: db.prepare('SELECT format FROM runs WHERE run_no = ?').pluck(),
      updateHead: db.prepare(
        `UPDATE runs SET head_seq = @seq, head_hash = @hash, last_at = COALESCE(@at, last_at), event_count = event_count + @n,
           first_at = COALESCE(first_at, @first_at), status = COALESCE(@status, status),
           task_id = COALESCE(@task_id, task_id), variant = COALESCE(@variant, variant)
         WHERE run_no = @run_no`,
      ),
      readRange: db.prepare(`SELECT ${READ_COLUMNS} FROM events WHERE ${ID_RANGE} ORDER BY id LIMIT ?`),
      prevHash: db.prepare(LAST_HASH_SQL).pluck(),
      one: db.prepare(`SELECT ${READ_COLUMNS} FROM events WHERE id = ?`),
    };
  }

  /**
   * `appendHelper: false` keeps every append in this thread (large ones are otherwise prepared in
   * a helper thread, append-helper.ts).
   */
  static open(folder: string, opts: { now?: () => string; appendHelper?: boolean } = {}): Ledger {
    const l = new Ledger(path.resolve(folder), opts.now ?? (() => new Date().toISOString()));
    if (opts.appendHelper === false) l.helper = false;
    return l;
  }

  close(): void {
    if (this.helper) this.helper.close();
    this.helper = false;
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
    const r = prepared(
      this.db,
      `INSERT OR IGNORE INTO runs (run_id, source, format, chained, origin, created_at, head_hash, meta)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
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

  /**
   * Opens the single writer of an executed run; a second writer, in any process, gets a clear error.
   * `resume`: the host's resume, whose writer may append run_resumed after run_failed (terminal.ts).
   * `annotateOnly`: a writer that may append event_annotated and nothing else (the renderer's).
   * `live` names the format of a read-only run that a live receiver chains as it arrives (the OTLP
   * receiver's runs): only such a writer may continue it, and it keeps no JSONL mirror (a mirror
   * of a non-executed run would be imported again as a run of its own).
   */
  writer(
    runId: string,
    opts: {
      label?: string;
      create?: CreateRunOptions | false;
      resume?: boolean;
      annotateOnly?: boolean;
      live?: RunFormat;
    } = {},
  ): RunWriter {
    const existing = this.run(runId);
    const source = existing?.source ?? (opts.create ? opts.create.source : undefined) ?? 'executed';
    // Before anything is created: a run folder that is a link is refused here (forbidden_path).
    const mirror = new MirrorAppender(this.runsRoot, runId, source === 'executed');
    if (!existing) {
      if (opts.create === false) throw new ProofloopError('not_found', `no run ${runId} in ${this.folder}`);
      this.createRun(runId, opts.create ?? {});
    } else if (existing.source !== 'executed' && (opts.live === undefined || existing.format !== opts.live)) {
      throw new ProofloopError('read_only', `run ${runId} was ${existing.source}: it is read-only`);
    }
    const token = acquireWriter(this.db, runId, opts.label ?? null);
    return new RunWriter(this, runId, token, mirror, {
      resume: opts.resume ?? false,
      annotateOnly: opts.annotateOnly ?? false,
    });
  }

  /** @internal Appends inside one IMMEDIATE transaction; called by RunWriter only. */
  appendLocked(
    runId: string,
    token: string,
    src: AppendSource,
    mirror: MirrorAppender,
    rights: WriterRights = { resume: false, annotateOnly: false },
  ): StoredEvent[] {
    const out: StoredEvent[] = [];
    const lines: string[] = [];
    const helper = src.n >= HELPER_MIN ? this.appendHelper() : null;
    let done = false;
    if (helper) {
      try {
        this.helperTx.immediate(runId, token, rights, src, helper, out, lines, mirror.mirrored);
        done = true;
      } catch (e) {
        if (!(e instanceof HelperFailed)) throw e;
        // Rolled back: the same append again, in this thread, and no helper from now on.
        if (this.helper) this.helper.close();
        this.helper = false;
        out.length = 0;
        lines.length = 0;
      }
    }
    if (!done) {
      // Serialised, redacted and checked before the write lock is taken.
      const c = src.columns(0, src.n);
      let payloads: Record<string, unknown>[] | null = null;
      if (!src.finished) finishItems(c, (payloads = []));
      const light = src.unread && this.listeners.size === 0;
      this.appendTx.immediate(runId, token, rights, src, c, payloads, out, lines, mirror.mirrored, light);
      if (light) out.length = 0;
    }
    // The JSONL mirror is a convenience copy, written after the commit; repairMirrors rebuilds it.
    mirror.append(lines);
    for (const l of this.listeners) l(runId, out);
    return out;
  }

  private appendHelper(): AppendHelper | null {
    if (this.helper === null) this.helper = AppendHelper.start() ?? false;
    return this.helper || null;
  }

  /** The run's head, under the write lock, once this writer is known to still hold the run. */
  private lockedHead(runId: string, token: string, rights: WriterRights, items: readonly { kind: string }[]) {
    const n = items.length;
    const head = this.stmts.headAndWriter.get(runId) as
      | { run_no: number; head_seq: number; head_hash: string; status: string; token: string | null }
      | undefined;
    if (!head) throw new ProofloopError('not_found', `no run ${runId}`);
    if (head.token !== token) {
      throw new ProofloopError('conflict', `the writer of run ${runId} lost its lock to another process`);
    }
    if (head.head_seq + n > MAX_SEQ) {
      throw new ProofloopError('conflict', `run ${runId} cannot take more than ${MAX_SEQ} events`);
    }
    checkAfterEnd(runId, head.status, items, rights);
    return head;
  }

  private insertLocked(
    runId: string,
    token: string,
    rights: WriterRights,
    src: AppendSource,
    c: ChunkItems,
    payloads: Record<string, unknown>[] | null,
    out: StoredEvent[],
    lines: string[],
    mirrored: boolean,
    light: boolean,
  ): void {
    const head = this.lockedHead(runId, token, rights, src.heads);
    stamp(src, 0, c, this.now());
    const seq = head.head_seq + 1;
    const linked = linkChunk(runId, seq, head.head_hash, c, mirrored);
    const rows = new RowBatch(this.db, head.run_no);
    this.insertChunk(rows, runId, seq, head.head_hash, c, linked.hashes, payloads, out, light);
    if (mirrored) lines.push(linked.lines);
    rows.flush();
    this.moveHead(head.run_no, out);
  }

  /**
   * insertLocked with the helper: chunks are serialised here and sent, the helper finishes and
   * chains them in order, and each answer is inserted as it comes, while later chunks are still
   * being sent or worked on. One transaction, as in this thread: a bad item rolls back the batch.
   */
  private insertWithHelper(
    runId: string,
    token: string,
    rights: WriterRights,
    src: AppendSource,
    helper: AppendHelper,
    out: StoredEvent[],
    lines: string[],
    mirrored: boolean,
  ): void {
    const head = this.lockedHead(runId, token, rights, src.heads);
    const now = this.now();
    const job = helper.begin();
    const rows = new RowBatch(this.db, head.run_no);
    const sent: (ChunkItems | null)[] = [];
    let handled = 0;
    let seq = head.head_seq + 1;
    let prev = head.head_hash;
    const take = (done: ChunkDone): void => {
      const c = sent[handled]!;
      sent[handled++] = null;
      if (!done.ok) {
        if (done.bad) throw new ProofloopError('bad_args', done.message);
        throw new HelperFailed(done.message);
      }
      for (const [i, json] of done.redacted) c.jsons[i] = json;
      prev = this.insertChunk(rows, runId, seq, prev, c, done.hashes, null, out);
      seq += c.jsons.length;
      if (mirrored) lines.push(done.lines);
    };
    // Finished texts are redacted and checked again there: idempotent (placeholders are never
    // matched again), and an append this large is rare for a producer that finishes its own.
    for (let from = 0; from < src.n; from += HELPER_CHUNK) {
      const c = src.columns(from, Math.min(src.n, from + HELPER_CHUNK));
      stamp(src, from, c, now);
      helper.send({
        job,
        runId,
        seq: head.head_seq + 1 + from,
        prev: from === 0 ? head.head_hash : null,
        lines: mirrored,
        ...c,
      });
      sent.push(c);
      for (let d = helper.take(false); d; d = helper.take(false)) take(d);
    }
    while (handled < sent.length) take(helper.take(true)!);
    rows.flush();
    this.moveHead(head.run_no, out);
  }

  /** Rows and returned events of a chunk, its `hashes` as linkChunk gives them; the last hash. */
  private insertChunk(
    rows: RowBatch,
    runId: string,
    seq: number,
    prev: string,
    c: ChunkItems,
    hashes: string,
    payloads: Record<string, unknown>[] | null,
    out: StoredEvent[],
    light = false,
  ): string {
    const bytes = Buffer.from(hashes, 'hex');
    for (let i = 0; i < c.jsons.length; i++) {
      const json = c.jsons[i]!;
      const hash = hashes.slice(i * 64, i * 64 + 64);
      rows.add(seq + i, c.kinds[i]!, c.vs[i]!, c.ats[i]!, json, bytes.subarray(i * 32, i * 32 + 32));
      // What listeners get is exactly what a reader will parse. Light: events only moveHead reads
      // (its run facts parse run_started's payload alone).
      const payload = payloads
        ? payloads[i]!
        : light && c.kinds[i] !== 'run_started'
          ? EMPTY
          : (JSON.parse(json) as Record<string, unknown>);
      out.push({
        seq: seq + i,
        run_id: runId,
        kind: c.kinds[i]!,
        v: c.vs[i]!,
        at: c.ats[i]!,
        payload,
        prev,
        hash,
      });
      prev = hash;
    }
    return prev;
  }

  /** The runs row after an append of `events` (in seq order, at least one). */
  private moveHead(runNo: number, events: readonly StoredEvent[]): void {
    const last = events[events.length - 1]!;
    this.stmts.updateHead.run({
      run_no: runNo,
      seq: last.seq,
      hash: last.hash,
      ...timesOf(events),
      n: events.length,
      ...runFacts(events),
    });
  }

  /** How many runs the ledger holds (runs().length without reading them: a folder may hold 10,000). */
  runCount(): number {
    return this.db.prepare('SELECT COUNT(*) FROM runs').pluck().get() as number;
  }

  runs(): RunRow[] {
    const rows = this.db
      .prepare(
        `SELECT r.*, (SELECT COUNT(*) FROM findings f WHERE f.run_id = r.run_id) AS findings
         FROM runs r ORDER BY r.created_at DESC, r.run_id`,
      )
      .all() as Record<string, unknown>[];
    return rows.map((r) => this.toRunRow(r));
  }

  run(runId: string): RunRow | undefined {
    const r = this.db
      .prepare(
        `SELECT r.*, (SELECT COUNT(*) FROM findings f WHERE f.run_id = r.run_id) AS findings
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
      meta: parseMeta(r.meta),
    };
  }

  read(runId: string, q: ReadQuery = {}): StoredEvent[] {
    return [...this.iterate(runId, q)];
  }

  *iterate(runId: string, q: ReadQuery = {}): IterableIterator<StoredEvent> {
    const runNo = this.stmts.runNo.get(runId) as number | undefined;
    if (runNo === undefined) return;
    const from = q.from ?? 1;
    const to = q.to ?? Number.MAX_SAFE_INTEGER;
    const limit = q.limit ?? -1;
    let rows: IterableIterator<EventRowDb>;
    const filtered = q.kinds !== undefined && q.kinds.length > 0;
    if (filtered) {
      const k = kindsQuery(READ_COLUMNS, q.kinds!);
      rows = this.db
        .prepare(k.sql)
        .iterate(...k.params(runNo, from, to, limit)) as IterableIterator<EventRowDb>;
    } else {
      rows = this.stmts.readRange.iterate(...idRange(runNo, from, to), limit) as IterableIterator<EventRowDb>;
    }
    // prev is the hash of the stored event before; a filtered read looks each one up.
    let prev: string | null = null;
    for (const r of rows) {
      if (prev === null || filtered) prev = this.prevOf(runNo, r.seq);
      const e = rowToEvent(r, runId, prev);
      prev = e.hash;
      yield e;
    }
  }

  private prevOf(runNo: number, seq: number): string {
    const h = this.stmts.prevHash.get(...idsBefore(runNo, seq)) as Buffer | undefined;
    return h ? h.toString('hex') : ZERO_HASH;
  }

  event(runId: string, seq: number): StoredEvent | undefined {
    const runNo = this.stmts.runNo.get(runId) as number | undefined;
    if (runNo === undefined) return undefined;
    const id = idOfSeq(runNo, seq);
    const r = id === null ? undefined : (this.stmts.one.get(id) as EventRowDb | undefined);
    return r ? rowToEvent(r, runId, this.prevOf(runNo, seq)) : undefined;
  }

  /** The integer key of a run in the events table (for modules that query it directly). */
  runNo(runId: string): number | undefined {
    return this.stmts.runNo.get(runId) as number | undefined;
  }

  /**
   * Inserts already-chained events of a read-only run (JSONL import, bundles) and moves its head.
   * Call inside the caller's transaction, with events in seq order and seqs above the run's head.
   */
  insertImported(runId: string, events: readonly ImportedEvent[]): void {
    if (events.length === 0) return;
    const head = this.stmts.head.get(runId) as { run_no: number } | undefined;
    if (!head) throw new ProofloopError('not_found', `no run ${runId}`);
    const rows = new RowBatch(this.db, head.run_no);
    // One hex decode for the whole batch: Buffer.from per event cost ~1.3 µs of the main thread's
    // ~16 µs an imported event (profile of `proofloop open`, 200,000 events).
    const hashes = Buffer.from(events.map((e) => e.hash).join(''), 'hex');
    for (let i = 0; i < events.length; i++) {
      const e = events[i]!;
      rows.add(
        e.seq,
        e.kind,
        e.v,
        e.at,
        e.payloadJson,
        hashes.subarray(i * 32, i * 32 + 32),
        e.digest ? hexToBlob(e.digest) : null,
        e.line ?? null,
        e.source ?? null,
      );
    }
    rows.flush();
    const last = events[events.length - 1]!;
    const facts = importedFacts(this.stmts.format.get(head.run_no) as string, runId, events);
    this.stmts.updateHead.run({
      run_no: head.run_no,
      seq: last.seq,
      hash: last.hash,
      ...timesOf(events),
      n: events.length,
      ...facts,
    });
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
    const ins = prepared(
      this.db,
      'INSERT INTO findings (run_id, file, line, seq, code, message, excerpt) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    this.db.transaction(() => {
      for (const f of findings) ins.run(runId, f.file, f.line, f.seq, f.code, f.message, f.excerpt ?? null);
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
    private readonly mirror: MirrorAppender,
    private readonly rights: WriterRights,
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
    for (const item of items) checkShape(item);
    return this.ledger.appendLocked(this.runId, this.token, itemsSource(items), this.mirror, this.rights);
  }

  /**
   * appendBatch of items whose payloads are serialised already (SerializedItems): the same rows,
   * chain and checks as appendBatch of the payloads they were serialised from, without serialising
   * them again in this thread. `unread`: the caller ignores what is returned, so the events are not
   * parsed back from their texts unless a listener wants them (it gets [] then).
   */
  appendSerialized(items: SerializedItems, opts: { unread?: boolean } = {}): StoredEvent[] {
    if (this.closed) throw new ProofloopError('conflict', `the writer of run ${this.runId} is closed`);
    if (items.kinds.length === 0) return [];
    return this.ledger.appendLocked(
      this.runId,
      this.token,
      serializedSource(items, opts.unread === true),
      this.mirror,
      this.rights,
    );
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.mirror.close();
    releaseWriter(this.ledger.db, this.runId, this.token);
  }
}

export type { LedgerEvent };
