import type { NewEvent } from '../../shared/protocol';
import { ProofloopError } from '../../shared/result';
import { stateAt } from '../state/snapshots';
import { ID_RANGE, idRange } from './event-ids';
import { Ledger, type CreateRunOptions, type ImportedEvent, type RunWriter } from './ledger';
import {
  checkArtifact,
  missingFindings,
  sameMeta,
  verifyPaged,
  type EngineWriter,
  type EngineWriterOptions,
  type FeedPage,
  type LedgerEngine,
  type PortableRun,
  type ArtifactItem,
} from './engine';
import { artifactsHomeOf, holdsArtifact, runArtifactDigests } from './artifacts';
import { readArtifact, storeArtifact } from './artifact-store';
import type { Finding, ReadQuery, RunFormat, RunRow, StoredEvent } from './types';
import type { VerifyReport } from './verify';

/**
 * The embedded engine: a runs folder's SQLite ledger (ledger.ts) behind LedgerEngine. Every call is
 * the Ledger's own synchronous call, answered at once: nothing is added to an append but a promise.
 */
export class SqliteEngine implements LedgerEngine {
  readonly engine = 'sqlite' as const;
  readonly location: string;
  private readonly owned: boolean;

  /** `ledger`: an open Ledger to wrap (left open by close()); else the folder's is opened here. */
  constructor(ledgerOrFolder: Ledger | string) {
    this.owned = typeof ledgerOrFolder === 'string';
    this.ledger = typeof ledgerOrFolder === 'string' ? Ledger.open(ledgerOrFolder) : ledgerOrFolder;
    this.location = this.ledger.folder;
  }
  readonly ledger: Ledger;

  createRun(runId: string, opts?: CreateRunOptions): Promise<void> {
    return call(() => this.ledger.createRun(runId, opts));
  }

  writer(runId: string, opts: EngineWriterOptions = {}): Promise<EngineWriter> {
    return call(() => {
      const w = this.ledger.writer(runId, {
        label: opts.label,
        create: opts.create,
        ...(opts.live ? { live: opts.live as RunFormat } : {}),
      });
      const token = this.ledger.db.prepare('SELECT token FROM writers WHERE run_id = ?').pluck().get(runId);
      return new SqliteWriter(w, String(token));
    });
  }

  runs(): Promise<RunRow[]> {
    return call(() => this.ledger.runs());
  }

  run(runId: string): Promise<RunRow | undefined> {
    return call(() => this.ledger.run(runId));
  }

  read(runId: string, q?: ReadQuery): Promise<StoredEvent[]> {
    return call(() => this.ledger.read(runId, q));
  }

  tail(runId: string, afterSeq: number, limit = 1000): Promise<StoredEvent[]> {
    return call(() => this.ledger.read(runId, { from: afterSeq + 1, limit }));
  }

  event(runId: string, seq: number): Promise<StoredEvent | undefined> {
    return call(() => this.ledger.event(runId, seq));
  }

  async verify(runId: string): Promise<VerifyReport> {
    const run = this.ledger.run(runId);
    if (!run) throw new ProofloopError('not_found', `no run ${runId} in ${this.location}`);
    return verifyPaged(this, run);
  }

  findings(runId: string): Promise<Finding[]> {
    return call(() => this.ledger.findings(runId).map((f) => ({ ...f, run_id: runId })));
  }

  putRecord(run: PortableRun, findings: readonly Finding[]): Promise<{ meta: boolean; findings: number }> {
    return call(() => {
      const l = this.ledger;
      return l.db
        .transaction(() => {
          const row = l.run(run.run_id);
          if (!row) throw new ProofloopError('not_found', `no run ${run.run_id} in ${this.location}`);
          const meta = !sameMeta(row.meta, run.meta);
          if (meta)
            l.db
              .prepare('UPDATE runs SET meta = ? WHERE run_id = ?')
              .run(JSON.stringify(run.meta), run.run_id);
          const add = missingFindings(findings, l.findings(run.run_id));
          if (add.length > 0) l.addFindings(run.run_id, add);
          return { meta, findings: add.length };
        })
        .immediate();
    });
  }

  stateAt(runId: string, seq: number) {
    return call(() => stateAt(this.ledger, runId, seq));
  }

  /**
   * SQLite commits one transaction at a time and moves a run's head in the transaction that adds
   * its events, so a head seen is a head whose events are all there: the cursor is the head seen of
   * each run (JSON), and the next page is what lies between those heads and the current ones.
   */
  feedEnd(): Promise<string> {
    return call(() => {
      const heads = this.ledger.db.prepare('SELECT run_id, head_seq FROM runs').all() as {
        run_id: string;
        head_seq: number;
      }[];
      return JSON.stringify(Object.fromEntries(heads.map((h) => [h.run_id, h.head_seq])));
    });
  }

  feed(cursor: string, limit = 10_000): Promise<FeedPage> {
    return call(() => {
      const seen = cursor ? (JSON.parse(cursor) as Record<string, number>) : {};
      const heads = this.ledger.db
        .prepare('SELECT run_id, run_no, head_seq FROM runs ORDER BY run_no')
        .all() as {
        run_id: string;
        run_no: number;
        head_seq: number;
      }[];
      const rows = this.ledger.db.prepare(
        `SELECT id & 4294967295 AS seq, kind, lower(hex(hash)) AS hash FROM events WHERE ${ID_RANGE} ORDER BY id LIMIT ?`,
      );
      const events: FeedPage['events'] = [];
      for (const h of heads) {
        const from = (seen[h.run_id] ?? 0) + 1;
        if (h.head_seq < from || events.length >= limit) continue;
        const got = rows.all(...idRange(h.run_no, from, h.head_seq), limit - events.length) as {
          seq: number;
          kind: string;
          hash: string;
        }[];
        for (const r of got) events.push({ run_id: h.run_id, seq: r.seq, kind: r.kind, hash: r.hash });
        if (got.length > 0) seen[h.run_id] = got[got.length - 1]!.seq;
      }
      return { events, cursor: JSON.stringify(seen) };
    });
  }

  putChained(run: PortableRun, events: readonly ImportedEvent[], after?: number): Promise<void> {
    return call(() => {
      const l = this.ledger;
      l.db
        .transaction(() => {
          let row = l.run(run.run_id);
          if (!row) {
            l.createRun(run.run_id, {
              source: run.source,
              format: run.format,
              chained: run.chained,
              origin: run.origin,
              meta: run.meta,
            });
            row = l.run(run.run_id)!;
          }
          if (events.length === 0) return;
          const first = events[0]!;
          const at = after ?? first.seq - 1;
          if (row.head_seq !== at || first.seq <= at) {
            throw new ProofloopError(
              'conflict',
              `run ${run.run_id}: events from seq ${first.seq} do not continue its head seq ${row.head_seq} in ${this.location}`,
            );
          }
          l.insertImported(run.run_id, events);
        })
        .immediate();
    });
  }

  artifactDigests(runId: string): Promise<string[]> {
    return call(() => {
      const run = this.ledger.run(runId);
      return run ? runArtifactDigests(this.ledger, run) : [];
    });
  }

  artifact(runId: string, digest: string): Promise<string | null> {
    return call(() => {
      const run = this.ledger.run(runId);
      return run ? readArtifact(artifactsHomeOf(this.ledger, run), digest) : null;
    });
  }

  putArtifacts(runId: string, items: readonly ArtifactItem[]): Promise<number> {
    return call(() => {
      const run = this.ledger.run(runId);
      if (!run) throw new ProofloopError('not_found', `no run ${runId} in ${this.location}`);
      for (const a of items) checkArtifact(runId, a);
      const home = artifactsHomeOf(this.ledger, run);
      let added = 0;
      for (const a of items) {
        if (holdsArtifact(home, a.digest)) continue;
        // As stored where it came from: redacted there already, so not again (its digest would move).
        storeArtifact(home, a.text, { redacted: true });
        added += 1;
      }
      return added;
    });
  }

  readChained(runId: string, from: number, limit: number): Promise<ImportedEvent[]> {
    return call(() => {
      const runNo = this.ledger.runNo(runId);
      if (runNo === undefined) return [];
      const rows = this.ledger.db
        .prepare(
          `SELECT id & 4294967295 AS seq, kind, v, at, payload, hash, digest, line, source FROM events
           WHERE ${ID_RANGE} ORDER BY id LIMIT ?`,
        )
        .all(...idRange(runNo, from, Number.MAX_SAFE_INTEGER), limit) as {
        seq: number;
        kind: string;
        v: number;
        at: string;
        payload: string;
        hash: Buffer;
        digest: Buffer | null;
        line: number | null;
        source: string | null;
      }[];
      return rows.map((r) => ({
        seq: r.seq,
        kind: r.kind,
        v: r.v,
        at: r.at,
        payloadJson: r.payload,
        hash: r.hash.toString('hex'),
        digest: r.digest ? r.digest.toString('hex') : null,
        line: r.line,
        source: r.source,
      }));
    });
  }

  close(): Promise<void> {
    if (this.owned) this.ledger.close();
    return Promise.resolve();
  }
}

class SqliteWriter implements EngineWriter {
  constructor(
    private readonly w: RunWriter,
    readonly fence: string,
  ) {}
  get runId(): string {
    return this.w.runId;
  }
  append(kind: string, payload: Record<string, unknown>, opts?: { v?: number; at?: string }) {
    return call(() => this.w.append(kind, payload, opts));
  }
  appendBatch(items: readonly NewEvent[]) {
    return call(() => this.w.appendBatch(items));
  }
  close() {
    return call(() => this.w.close());
  }
}

/** A synchronous call as a promise: its throw becomes a rejection, as the networked engine's would. */
function call<T>(fn: () => T): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (e) {
    return Promise.reject(e as Error);
  }
}
