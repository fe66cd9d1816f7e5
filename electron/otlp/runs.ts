import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { ProofloopError, type ErrorCode } from '../../shared/result';
import type { Ledger, RunWriter } from '../ledger';
import { RunKeys, type PreparedPart, type RecordOf } from './run-keys';

/**
 * The one writer of each live run, and the appends of the parts prepared for it (run-keys.ts:
 * which run each record joins, its events mapped and serialised, in the decode thread). Records
 * are appended in the order they arrive, each with its own time; the requests of one group commit
 * (group-commit.ts) are one transaction per run. A run with nothing new for `idleMs` lets its
 * writer go and shows as `idle` (not failed); the next record takes the writer again.
 */

const LABEL = 'otlp receiver';

export interface IngestResult {
  accepted: number;
  rejected: number;
  /** Why records were refused (a run another process holds, …), for the partial-success message. */
  errors: string[];
  runs: string[];
}

interface LiveRun {
  runId: string;
  writer: RunWriter;
  lastAt: number;
}

/** Where the run keys are kept (the decode thread): told of new ledgers and of released runs. */
export interface KeyKeeper {
  reset(): void;
  released(key: string): void;
}

/** A run id from a source's id: ProofLoop's id characters only, at most 200, distinct ids kept distinct. */
export function safeId(prefix: string, id: string): string {
  const clean = id.replace(/[^A-Za-z0-9._:-]/g, '-').slice(0, 150);
  if (clean === id) return `${prefix}${clean}`;
  return `${prefix}${clean}-${createHash('sha256').update(id).digest('hex').slice(0, 8)}`;
}

/** A part's mapping error as the error it was in the thread that prepared it. */
export function errorOf(e: NonNullable<PreparedPart['error']>): Error {
  return e.code !== null ? new ProofloopError(e.code as ErrorCode, e.message) : new Error(e.message);
}

export class LiveRuns {
  private readonly live = new Map<string, LiveRun>();
  /** Run key → run id, once chosen (a key whose id was taken by a non-OTLP run gets another). */
  private readonly idOfKey = new Map<string, string>();
  private bound: Ledger | null = null;
  private readonly timer: NodeJS.Timeout;
  /** Keys prepared in this thread (ingest, ingestRecords), when no decode thread keeps them. */
  private here: RunKeys | null = null;

  constructor(
    private readonly ledgerOf: () => Ledger,
    private readonly idleMs: number,
    private readonly now: () => number = Date.now,
    private keys: KeyKeeper | null = null,
  ) {
    this.timer = setInterval(() => this.sweep(), Math.max(50, Math.min(idleMs / 2, 5000)));
    this.timer.unref();
  }

  /** One request's records, keyed and mapped in this thread (tests; the receiver prepares in its decode thread). */
  ingest(records: readonly RecordOf[]): IngestResult {
    return this.ingestRecords([records])[0]!;
  }

  /** ingestMany of requests' records keyed, mapped and serialised in this thread. */
  ingestRecords(requests: readonly (readonly RecordOf[])[]): IngestResult[] {
    if (!this.here) this.keys = this.here = new RunKeys();
    this.ledger();
    return this.ingestMany(requests.map((r) => this.here!.prepare(r)));
  }

  /**
   * Several requests at once (the receiver's group commit, server.ts), each as its parts per run
   * key: each run's events of all the requests are appended in one transaction: one commit (one
   * fsync) for the group instead of one per request. When that one append fails, each request's
   * share is appended again on its own, so a request is refused only for what is wrong with it,
   * as it would be alone. One result per request, in order.
   */
  ingestMany(requests: readonly (readonly PreparedPart[])[]): IngestResult[] {
    const ledger = this.ledger();
    const results: IngestResult[] = requests.map(() => ({ accepted: 0, rejected: 0, errors: [], runs: [] }));
    interface Part {
      request: number;
      part: PreparedPart;
    }
    const groups = new Map<string, { run: LiveRun | null; error: unknown; parts: Part[] }>();
    requests.forEach((parts, request) => {
      for (const part of parts) {
        let group = groups.get(part.key);
        if (!group) {
          group = { run: null, error: null, parts: [] };
          try {
            group.run = this.open(ledger, part.key, part);
          } catch (e) {
            group.error = e;
          }
          groups.set(part.key, group);
        }
        group.parts.push({ request, part });
      }
    });
    const refuse = (p: Part, e: unknown): void => {
      const r = results[p.request]!;
      r.rejected += p.part.records;
      r.errors.push(e instanceof ProofloopError ? e.message : `internal error: ${(e as Error).message}`);
    };
    const accept = (p: Part, run: LiveRun): void => {
      const r = results[p.request]!;
      r.accepted += p.part.records;
      r.runs.push(run.runId);
    };
    for (const [key, { run, error, parts }] of groups) {
      if (!run) {
        for (const part of parts) refuse(part, error);
        continue;
      }
      let failed = false;
      const ok: Part[] = [];
      for (const p of parts) {
        if (p.part.error === undefined) ok.push(p);
        else {
          refuse(p, errorOf(p.part.error));
          failed = true;
        }
      }
      if (ok.length > 0) {
        try {
          run.writer.appendSerialized(ok.length === 1 ? ok[0]!.part : joined(ok.map((p) => p.part)), {
            unread: true,
          });
          for (const part of ok) accept(part, run);
        } catch (e) {
          if (ok.length === 1) {
            refuse(ok[0]!, e);
            failed = true;
          } else {
            // Rolled back whole: each request's share again, alone, as without grouping.
            for (const part of ok) {
              try {
                run.writer.appendSerialized(part.part, { unread: true });
                accept(part, run);
              } catch (e2) {
                refuse(part, e2);
                failed = true;
              }
            }
          }
        }
      }
      run.lastAt = this.now();
      if (failed && this.live.get(key) === run) this.release(run, key);
    }
    return results;
  }

  /** Lets every writer go (the receiver stops, or the folder changes). */
  close(): void {
    clearInterval(this.timer);
    for (const [key, run] of this.live) this.release(run, key);
  }

  private ledger(): Ledger {
    const l = this.ledgerOf();
    if (l !== this.bound) {
      for (const [key, run] of this.live) this.release(run, key);
      this.idOfKey.clear();
      if (this.bound !== null) this.keys?.reset();
      this.bound = l;
      // Runs a receiver that died left `running` are idle: nobody is sending to them now.
      const running = l.db
        .prepare(`SELECT run_id FROM runs WHERE format = 'otlp' AND status = 'running'`)
        .pluck()
        .all() as string[];
      const idle = l.db.prepare(`UPDATE runs SET status = 'idle' WHERE run_id = ?`);
      for (const id of running) if (!l.run(id)?.writer) idle.run(id);
    }
    return l;
  }

  private runIdOf(ledger: Ledger, key: string): string {
    const known = this.idOfKey.get(key);
    if (known) return known;
    const id = key.slice(2);
    const base =
      key[0] === 'c'
        ? safeId('otlp-', id)
        : key[0] === 't'
          ? `otlp-trace-${id}`
          : key[0] === 'm'
            ? safeId('otlp-metrics-', id)
            : safeId('otlp-logs-', id);
    let runId = base;
    for (let n = 2; ; n++) {
      const row = ledger.run(runId);
      if (!row || row.format === 'otlp') break;
      runId = `${base}-${n}`; // taken by a run of another kind: never append to it
    }
    this.idOfKey.set(key, runId);
    return runId;
  }

  private open(ledger: Ledger, key: string, first: PreparedPart): LiveRun {
    const existing = this.live.get(key);
    if (existing) return existing;
    const runId = this.runIdOf(ledger, key);
    const { traceId, service } = first.seed;
    // conversation_id: the session it is of (session.ts, conversationOfRun).
    const meta = {
      otlp: {
        ...(key[0] === 'c' ? { conversation_id: key.slice(2) } : {}),
        ...(traceId ? { trace_id: traceId } : {}),
        ...(service !== null ? { service } : {}),
      },
    };
    const opts = {
      create: { source: 'imported' as const, format: 'otlp' as const, origin: 'otlp', meta },
      live: 'otlp' as const,
      label: LABEL,
    };
    let writer: RunWriter;
    try {
      writer = ledger.writer(runId, opts);
    } catch (e) {
      if (!(e instanceof ProofloopError) || e.code !== 'conflict') throw e;
      // A writer this process left behind when its ledger was closed under it (a folder switch):
      // it is not live here, so it is nobody's.
      const freed = ledger.db
        .prepare('DELETE FROM writers WHERE run_id = ? AND pid = ? AND hostname = ? AND label = ?')
        .run(runId, process.pid, hostname(), LABEL);
      if (freed.changes === 0) throw e;
      writer = ledger.writer(runId, opts);
    }
    ledger.db
      .prepare(`UPDATE runs SET status = 'running' WHERE run_id = ? AND status IN ('empty', 'idle')`)
      .run(runId);
    const run: LiveRun = { runId, writer, lastAt: this.now() };
    this.live.set(key, run);
    return run;
  }

  private release(run: LiveRun, key: string): void {
    this.live.delete(key);
    this.keys?.released(key);
    try {
      run.writer.close();
    } catch {
      // the ledger closed first: its writer rows went with this process's lock (see open)
    }
  }

  /** Runs with nothing new for idleMs: their writer goes, and they show as idle. */
  private sweep(): void {
    const t = this.now();
    for (const [key, run] of this.live) {
      if (t - run.lastAt < this.idleMs) continue;
      this.release(run, key);
      try {
        this.bound?.db
          .prepare(`UPDATE runs SET status = 'idle' WHERE run_id = ? AND status = 'running'`)
          .run(run.runId);
      } catch {
        // the ledger is closed: it is marked on the next open
      }
    }
  }
}

export type { RecordOf };

/** The parts of several requests for one run as one append, in order. */
function joined(parts: readonly PreparedPart[]): PreparedPart {
  return {
    ...parts[0]!,
    kinds: parts.flatMap((p) => p.kinds),
    vs: parts.flatMap((p) => p.vs),
    ats: parts.flatMap((p) => p.ats),
    jsons: parts.flatMap((p) => p.jsons),
  };
}
