import pg from 'pg';
import { ZERO_HASH } from '../../../shared/protocol';
import { ProofloopError } from '../../../shared/result';
import type { RunState } from '../../../shared/state';
import { importedFacts } from '../run-facts';
import {
  missingFindings,
  sameMeta,
  type ArtifactItem,
  verifyPaged,
  type EngineWriter,
  type EngineWriterOptions,
  type FeedPage,
  type LedgerEngine,
  type PortableRun,
} from '../engine';
import type { CreateRunOptions, ImportedEvent } from '../ledger';
import type { Finding, FindingCode, ReadQuery, RunRow, StoredEvent } from '../types';
import type { VerifyReport } from '../verify';
import { migratePg } from './migrate';
import { PgWriter } from './writer';
import { copyInto, encodeCopyBinary } from './copy-binary';
import { asLedgerError, hexBytes, READ, RUNS_SQL, toRunRow, toStored, type EventRowPg } from './rows';
import { stateAtPg } from './state-at';
import { artifactDigestsPg, artifactPg, putArtifactsPg } from './artifacts';

const RUN_ID_RE = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/;

/** bigint (int8) as a JS number: seqs stay below 2^32, counts and fences below 2^53. */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === 20
      ? (v: string) => Number(v)
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/** The server URL without its password, for messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://…';
  }
}

/**
 * The ledger on a team's PostgreSQL server (DESIGN.md, "A second engine"). One pool per engine;
 * every append is one statement (writer.ts), so an acknowledged append is committed.
 */
export class PostgresEngine implements LedgerEngine {
  readonly engine = 'postgres' as const;
  readonly location: string;
  private constructor(
    readonly pool: pg.Pool,
    url: string,
    readonly now: () => string,
  ) {
    this.location = redactUrl(url);
  }

  static async connect(
    url: string,
    opts: { now?: () => string; max?: number } = {},
  ): Promise<PostgresEngine> {
    const pool = new pg.Pool({ connectionString: url, max: opts.max ?? 4, types });
    // An idle client that the server dropped (restart, failover) is an error of that client, not of the process.
    pool.on('error', () => undefined);
    const e = new PostgresEngine(pool, url, opts.now ?? (() => new Date().toISOString()));
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw new ProofloopError('io', `cannot reach the ledger at ${e.location}: ${(err as Error).message}`);
    }
    try {
      await migratePg(client, e.location);
    } finally {
      client.release();
    }
    return e;
  }

  async q<R extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<pg.QueryResult<R>> {
    try {
      return await this.pool.query<R>(sql, params);
    } catch (err) {
      throw asLedgerError(err, this.location);
    }
  }

  /** `fn` in one transaction on one connection: committed when it returns, rolled back when it throws. */
  async transaction<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const out = await fn(client);
      await client.query('COMMIT');
      return out;
    } catch (e) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw asLedgerError(e, this.location);
    } finally {
      client.release();
    }
  }

  /** q() as a named prepared statement: parsed and planned once a connection, not at every call. */
  async prepared<R extends pg.QueryResultRow>(
    name: string,
    sql: string,
    params: unknown[],
  ): Promise<pg.QueryResult<R>> {
    try {
      return await this.pool.query<R>({ name, text: sql, values: params });
    } catch (err) {
      throw asLedgerError(err, this.location);
    }
  }

  async createRun(runId: string, opts: CreateRunOptions = {}): Promise<void> {
    if (!RUN_ID_RE.test(runId)) {
      throw new ProofloopError(
        'bad_args',
        `run id "${runId}" must be 1-200 letters, digits, '.', '_', ':' or '-'`,
      );
    }
    const r = await this.q(
      `INSERT INTO runs (run_id, source, format, chained, origin, created_at, meta)
       VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (run_id) DO NOTHING`,
      [
        runId,
        opts.source ?? 'executed',
        opts.format ?? 'proofloop',
        opts.chained !== false,
        opts.origin ?? null,
        this.now(),
        JSON.stringify(opts.meta ?? {}),
      ],
    );
    if (r.rowCount === 0)
      throw new ProofloopError('conflict', `run ${runId} already exists in ${this.location}`);
  }

  async writer(runId: string, opts: EngineWriterOptions = {}): Promise<EngineWriter> {
    let run = await this.run(runId);
    if (!run) {
      if (opts.create === false) throw new ProofloopError('not_found', `no run ${runId} in ${this.location}`);
      await this.createRun(runId, opts.create ?? {}).catch((e: unknown) => {
        // Another process made it meanwhile: take it as made.
        if (!(e instanceof ProofloopError && e.code === 'conflict')) throw e;
      });
      run = (await this.run(runId))!;
    }
    if (run.source !== 'executed' && (opts.live === undefined || run.format !== opts.live)) {
      throw new ProofloopError('read_only', `run ${runId} was ${run.source}: it is read-only`);
    }
    return PgWriter.acquire(this, runId, {
      label: opts.label ?? null,
      leaseMs: opts.leaseMs ?? 15_000,
      holdOpenMs: opts.holdOpenMs,
    });
  }

  async runs(): Promise<RunRow[]> {
    const r = await this.q(`${RUNS_SQL} ORDER BY r.created_at DESC, r.run_id`);
    return r.rows.map(toRunRow);
  }

  async run(runId: string): Promise<RunRow | undefined> {
    const r = await this.q(`${RUNS_SQL} WHERE r.run_id = $1`, [runId]);
    return r.rows[0] ? toRunRow(r.rows[0]) : undefined;
  }

  async read(runId: string, q: ReadQuery = {}): Promise<StoredEvent[]> {
    const no = await this.runNo(runId);
    if (no === undefined) return [];
    const params: unknown[] = [no, q.from ?? 1, q.to ?? Number.MAX_SAFE_INTEGER];
    let where = 'e.run_no = $1 AND e.seq BETWEEN $2 AND $3';
    if (q.kinds && q.kinds.length > 0) {
      params.push(q.kinds);
      where += ` AND e.kind = ANY($${params.length})`;
    }
    params.push(q.limit !== undefined && q.limit >= 0 ? q.limit : null);
    const r = await this.q<EventRowPg>(
      `${READ} WHERE ${where} ORDER BY e.seq LIMIT $${params.length}`,
      params,
    );
    return r.rows.map((row) => toStored(row, runId));
  }

  tail(runId: string, afterSeq: number, limit = 1000): Promise<StoredEvent[]> {
    return this.read(runId, { from: afterSeq + 1, limit });
  }

  async event(runId: string, seq: number): Promise<StoredEvent | undefined> {
    return (await this.read(runId, { from: seq, to: seq }))[0];
  }

  async verify(runId: string): Promise<VerifyReport> {
    const run = await this.run(runId);
    if (!run) throw new ProofloopError('not_found', `no run ${runId} in ${this.location}`);
    return verifyPaged(this, run);
  }

  async findings(runId: string): Promise<Finding[]> {
    const r = await this.q<{
      file: string | null;
      line: number | null;
      seq: number | null;
      code: string;
      message: string;
      excerpt: string | null;
    }>('SELECT file, line, seq, code, message, excerpt FROM findings WHERE run_id = $1 ORDER BY id', [runId]);
    return r.rows.map((f) => ({
      code: f.code as FindingCode,
      file: f.file,
      line: f.line,
      seq: f.seq,
      message: f.message,
      run_id: runId,
      excerpt: f.excerpt,
    }));
  }

  async putRecord(
    run: PortableRun,
    findings: readonly Finding[],
  ): Promise<{ meta: boolean; findings: number }> {
    return this.transaction(async (client) => {
      // The run's row lock orders two pushes of one run: the second sees what the first added.
      const r = await client.query<{ meta: string }>('SELECT meta FROM runs WHERE run_id = $1 FOR UPDATE', [
        run.run_id,
      ]);
      const row = r.rows[0];
      if (!row) throw new ProofloopError('not_found', `no run ${run.run_id} in ${this.location}`);
      const meta = !sameMeta(JSON.parse(row.meta) as Record<string, unknown>, run.meta);
      if (meta)
        await client.query('UPDATE runs SET meta = $2 WHERE run_id = $1', [
          run.run_id,
          JSON.stringify(run.meta),
        ]);
      const have = await client.query<Finding>(
        'SELECT code, file, line, seq, message, excerpt FROM findings WHERE run_id = $1 ORDER BY id',
        [run.run_id],
      );
      const add = missingFindings(findings, have.rows);
      if (add.length > 0) {
        await client.query(
          `INSERT INTO findings (run_id, file, line, seq, code, message, excerpt)
           SELECT $1, f, l, s, c, m, x FROM unnest($2::text[], $3::bigint[], $4::bigint[], $5::text[], $6::text[], $7::text[])
             WITH ORDINALITY AS u(f, l, s, c, m, x, i) ORDER BY i`,
          [
            run.run_id,
            add.map((f) => f.file),
            add.map((f) => f.line),
            add.map((f) => f.seq),
            add.map((f) => f.code),
            add.map((f) => f.message),
            add.map((f) => f.excerpt ?? null),
          ],
        );
      }
      return { meta, findings: add.length };
    });
  }

  private runNos = new Map<string, number>();
  async runNo(runId: string): Promise<number | undefined> {
    const known = this.runNos.get(runId);
    if (known !== undefined) return known;
    const r = await this.q<{ run_no: number }>('SELECT run_no FROM runs WHERE run_id = $1', [runId]);
    const no = r.rows[0]?.run_no;
    if (no !== undefined) this.runNos.set(runId, no);
    return no;
  }

  /** The state at seq: see state-at.ts. */
  stateAt(runId: string, seq: number): Promise<{ seq: number; state: RunState; via: string }> {
    return stateAtPg(this, runId, seq);
  }

  /**
   * The cross-run feed, as Emmett, Marten and Message DB read PostgreSQL: rows in (tx, run_no, seq)
   * order, only of transactions older than the oldest one still running
   * (pg_snapshot_xmin(pg_current_snapshot())). A transaction below that xmin has ended, and every
   * transaction to come gets an xid above it, so nothing can appear later below the cursor: an event
   * whose transaction committed late is read when it commits, never skipped, never read twice. (An
   * identity column would be skipped past: ids are taken at insert, rows become visible at commit.)
   * A transaction held open holds the feed back, not the writers.
   */
  async feedEnd(): Promise<string> {
    // The feed's last event now, by its index (events_feed) read backwards: one row, however long
    // the ledger. Transactions below the snapshot's xmin have all ended, so none can add before it.
    // (Ordered by the column itself: an output named tx would sort the xids as text, and scan.)
    const r = await this.q<{ at_tx: string; run_no: number; seq: number }>(
      `SELECT e.tx::text AS at_tx, e.run_no, e.seq FROM events e
        WHERE e.tx < pg_snapshot_xmin(pg_current_snapshot())
        ORDER BY e.tx DESC, e.run_no DESC, e.seq DESC LIMIT 1`,
    );
    const last = r.rows[0];
    return last ? `${last.at_tx}:${last.run_no}:${last.seq}` : '';
  }

  async feed(cursor: string, limit = 10_000): Promise<FeedPage> {
    const [tx, runNo, seq] = cursor ? cursor.split(':') : ['0', '0', '0'];
    const r = await this.q<{
      tx: string;
      run_no: number;
      seq: number;
      run_id: string;
      kind: string;
      hash: Buffer;
    }>(
      `SELECT e.tx::text AS tx, e.run_no, e.seq, r.run_id, e.kind, e.hash
         FROM events e JOIN runs r USING (run_no)
        WHERE (e.tx, e.run_no, e.seq) > ($1::xid8, $2::bigint, $3::bigint)
          AND e.tx < pg_snapshot_xmin(pg_current_snapshot())
        ORDER BY e.tx, e.run_no, e.seq LIMIT $4`,
      [tx, runNo, seq, limit],
    );
    const last = r.rows.at(-1);
    return {
      events: r.rows.map((x) => ({
        run_id: x.run_id,
        seq: x.seq,
        kind: x.kind,
        hash: x.hash.toString('hex'),
      })),
      cursor: last ? `${last.tx}:${last.run_no}:${last.seq}` : cursor,
    };
  }

  async putChained(run: PortableRun, events: readonly ImportedEvent[], after?: number): Promise<void> {
    await this.transaction(async (client) => {
      await client.query(
        `INSERT INTO runs (run_id, source, format, chained, origin, created_at, meta)
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (run_id) DO NOTHING`,
        [
          run.run_id,
          run.source,
          run.format,
          run.chained,
          run.origin,
          run.created_at,
          JSON.stringify(run.meta),
        ],
      );
      if (events.length > 0) {
        const first = events[0]!;
        const last = events[events.length - 1]!;
        const facts = importedFacts(run.format, run.run_id, events);
        const prevHash = first.seq === 1 ? ZERO_HASH : null;
        // The head moves only from where the caller says these events continue it (engine.ts);
        // under its row lock the insert follows.
        const at = after ?? first.seq - 1;
        if (first.seq <= at)
          throw new ProofloopError(
            'conflict',
            `run ${run.run_id}: events from seq ${first.seq} are not after seq ${at}`,
          );
        const h = await client.query<{ run_no: number }>(
          `UPDATE runs SET head_seq = $3, head_hash = decode($4, 'hex'), last_at = $5, first_at = COALESCE(first_at, $6),
             event_count = event_count + $7, status = COALESCE($8, status), task_id = COALESCE($9, task_id),
             variant = COALESCE($10, variant)
           WHERE run_id = $1 AND head_seq = $2 AND ($11::text IS NULL OR head_hash = decode($11, 'hex'))
           RETURNING run_no`,
          [
            run.run_id,
            at,
            last.seq,
            last.hash,
            last.at,
            first.at,
            events.length,
            facts.status,
            facts.task_id,
            facts.variant,
            prevHash,
          ],
        );
        if (h.rowCount === 0) {
          throw new ProofloopError(
            'conflict',
            `run ${run.run_id}: events from seq ${first.seq} do not continue its head in ${this.location}`,
          );
        }
        await insertRows(client, h.rows[0]!.run_no, events);
      }
    });
  }

  async readChained(runId: string, from: number, limit: number): Promise<ImportedEvent[]> {
    const no = await this.runNo(runId);
    if (no === undefined) return [];
    const r = await this.q<EventRowPg>(
      `SELECT seq, kind, v, at, payload, hash, digest, line, source FROM events
        WHERE run_no = $1 AND seq >= $2 ORDER BY seq LIMIT $3`,
      [no, from, limit],
    );
    return r.rows.map((e) => ({
      seq: e.seq,
      kind: e.kind,
      v: e.v,
      at: e.at,
      payloadJson: e.payload.toString('utf8'),
      hash: e.hash.toString('hex'),
      digest: e.digest ? e.digest.toString('hex') : null,
      line: e.line,
      source: e.source,
    }));
  }

  /** A run's artifacts: see artifacts.ts. */
  artifactDigests(runId: string): Promise<string[]> {
    return artifactDigestsPg(this, runId);
  }

  artifact(runId: string, digest: string): Promise<string | null> {
    return artifactPg(this, runId, digest);
  }

  putArtifacts(runId: string, items: readonly ArtifactItem[]): Promise<number> {
    return putArtifactsPg(this, runId, items);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/** Inserts stored events of one run as given (putChained), by binary COPY. */
async function insertRows(
  client: pg.ClientBase,
  runNo: number,
  events: readonly ImportedEvent[],
): Promise<void> {
  const n = events.length;
  const rows = encodeCopyBinary(
    [
      { type: 'int8', values: new Array<number>(n).fill(runNo) },
      { type: 'int8', values: events.map((e) => e.seq) },
      { type: 'text', values: events.map((e) => e.kind) },
      { type: 'int4', values: events.map((e) => e.v) },
      { type: 'text', values: events.map((e) => e.at) },
      { type: 'bytea', values: events.map((e) => e.payloadJson) },
      { type: 'bytea', values: events.map((e) => hexBytes(e.hash, 'hash', e.seq)) },
      { type: 'bytea', values: events.map((e) => (e.digest ? hexBytes(e.digest, 'digest', e.seq) : null)) },
      { type: 'int8', values: events.map((e) => e.line ?? null) },
      { type: 'text', values: events.map((e) => e.source ?? null) },
    ],
    n,
  );
  const stored = await copyInto(
    client,
    'COPY events (run_no, seq, kind, v, at, payload, hash, digest, line, source) FROM STDIN (FORMAT binary)',
    rows,
  );
  if (stored !== n) throw new ProofloopError('io', `stored ${stored} of ${n} events`);
}
