import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import type { NewEvent } from '../../shared/protocol';
import { ProofloopError } from '../../shared/result';
import type { Ledger, RunWriter } from '../ledger';
import type { Attrs, OtlpLog, OtlpSpan } from './types';
import { RunMapState } from './map-util';
import { mapLog, mapSpan } from './mapping';

/**
 * Which run each record joins, and the one writer of each live run.
 *
 * A run per conversation (`gen_ai.conversation.id`, `session.id` — Claude Code's —,
 * `conversation.id` — Codex's —, on the record or its resource), else per trace. A trace that named
 * its conversation once keeps joining it, so a child span without the id lands beside its parent,
 * late or out of order. Records are appended in the order they arrive, each with its own time;
 * the requests of one group commit (group-commit.ts) are one transaction per run. A run with
 * nothing new for `idleMs` lets its writer go and shows as `idle` (not failed); the next record
 * takes the writer again.
 */

const CONVERSATION_KEYS = ['gen_ai.conversation.id', 'session.id', 'conversation.id', 'gen_ai.session.id'];
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
  state: RunMapState;
  lastAt: number;
  resourceKey: string;
}

type RecordOf = { kind: 'span'; r: OtlpSpan } | { kind: 'log'; r: OtlpLog };

function conversationOf(a: Attrs, resource: Attrs): string | undefined {
  for (const src of [a, resource]) {
    for (const k of CONVERSATION_KEYS) {
      const v = src[k];
      if ((typeof v === 'string' && v !== '') || typeof v === 'number') return String(v);
    }
  }
  return undefined;
}

/** A run id from a source's id: ProofLoop's id characters only, at most 200, distinct ids kept distinct. */
function safeId(prefix: string, id: string): string {
  const clean = id.replace(/[^A-Za-z0-9._:-]/g, '-').slice(0, 150);
  if (clean === id) return `${prefix}${clean}`;
  return `${prefix}${clean}-${createHash('sha256').update(id).digest('hex').slice(0, 8)}`;
}

/** A map that forgets its oldest entry past 50,000 (a receiver may run for weeks). */
function bounded<K, V>(m: Map<K, V>): Map<K, V> {
  if (m.size >= 50_000) m.delete(m.keys().next().value as K);
  return m;
}

export class LiveRuns {
  private readonly live = new Map<string, LiveRun>();
  /** trace id → the conversation it named (bounded: oldest forgotten first). */
  private readonly traceConversation = new Map<string, string>();
  /** trace id and conversation id → the key of the run they joined (bounded likewise). */
  private readonly traceHome = new Map<string, string>();
  private readonly convHome = new Map<string, string>();
  /** Run key → run id, once chosen (a key whose id was taken by a non-OTLP run gets another). */
  private readonly idOfKey = new Map<string, string>();
  /** Mapping state per run key; it outlives an idle writer (a decision's result may come later). */
  private readonly states = new Map<string, RunMapState>();
  private bound: Ledger | null = null;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly ledgerOf: () => Ledger,
    private readonly idleMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.timer = setInterval(() => this.sweep(), Math.max(50, Math.min(idleMs / 2, 5000)));
    this.timer.unref();
  }

  ingest(records: readonly RecordOf[]): IngestResult {
    return this.ingestMany([records])[0]!;
  }

  /**
   * Several requests at once (the receiver's group commit, server.ts): each request's records are
   * keyed and mapped in arrival order exactly as `ingest` one request after another would, and
   * then each run's events of all the requests are appended in one transaction: one commit (one
   * fsync) for the group instead of one per request. When that one append fails, each request's
   * share is appended again on its own, so a request is refused only for what is wrong with it,
   * as it would be alone. One result per request, in order.
   */
  ingestMany(requests: readonly (readonly RecordOf[])[]): IngestResult[] {
    const ledger = this.ledger();
    const results: IngestResult[] = requests.map(() => ({ accepted: 0, rejected: 0, errors: [], runs: [] }));
    interface Part {
      request: number;
      records: number;
      items: NewEvent[];
      /** Why this request's records of the run could not be mapped (they are refused, alone). */
      error?: unknown;
    }
    const groups = new Map<string, { run: LiveRun | null; error: unknown; parts: Part[] }>();
    requests.forEach((records, request) => {
      // First the conversations this request names, so a child span in the same request as its
      // parent joins the parent's conversation whichever comes first.
      for (const rec of records) {
        const trace = rec.r.traceId;
        const conv = conversationOf(rec.r.attributes, rec.r.resource);
        if (trace && conv) this.rememberTrace(trace, conv);
      }
      const byKey = new Map<string, RecordOf[]>();
      for (const rec of records) {
        const key = this.keyOf(rec);
        const g = byKey.get(key);
        if (g) g.push(rec);
        else byKey.set(key, [rec]);
      }
      for (const [key, recs] of byKey) {
        let group = groups.get(key);
        if (!group) {
          group = { run: null, error: null, parts: [] };
          try {
            group.run = this.open(ledger, key, recs[0]!);
          } catch (e) {
            group.error = e;
          }
          groups.set(key, group);
        }
        const part: Part = { request, records: recs.length, items: [] };
        group.parts.push(part);
        const run = group.run;
        if (!run) continue;
        try {
          for (const rec of recs) {
            const rk = JSON.stringify(rec.r.resource);
            const withResource = rk !== run.resourceKey;
            run.resourceKey = rk;
            const mapped =
              rec.kind === 'span'
                ? mapSpan(rec.r, run.state, withResource)
                : mapLog(rec.r, run.state, withResource);
            for (const it of mapped) part.items.push(it);
          }
        } catch (e) {
          part.error = e;
          part.items = [];
        }
      }
    });
    const refuse = (part: Part, e: unknown): void => {
      const r = results[part.request]!;
      r.rejected += part.records;
      r.errors.push(e instanceof ProofloopError ? e.message : `internal error: ${(e as Error).message}`);
    };
    const accept = (part: Part, run: LiveRun): void => {
      const r = results[part.request]!;
      r.accepted += part.records;
      r.runs.push(run.runId);
    };
    for (const [key, { run, error, parts }] of groups) {
      if (!run) {
        for (const part of parts) refuse(part, error);
        continue;
      }
      let failed = false;
      const ok: Part[] = [];
      for (const part of parts) {
        if (part.error === undefined) ok.push(part);
        else {
          refuse(part, part.error);
          failed = true;
        }
      }
      if (ok.length > 0) {
        try {
          run.writer.appendBatch(ok.length === 1 ? ok[0]!.items : ok.flatMap((p) => p.items));
          for (const part of ok) accept(part, run);
        } catch (e) {
          if (ok.length === 1) {
            refuse(ok[0]!, e);
            failed = true;
          } else {
            // Rolled back whole: each request's share again, alone, as without grouping.
            for (const part of ok) {
              try {
                run.writer.appendBatch(part.items);
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
      this.states.clear();
      this.traceHome.clear();
      this.convHome.clear();
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

  private rememberTrace(trace: string, conv: string): void {
    if (this.traceConversation.get(trace) === conv) return;
    bounded(this.traceConversation).set(trace, conv);
  }

  /**
   * The run a record joins, as a key (`c:<conversation>`, `t:<trace>`, `s:<service>`). A trace
   * stays in the run it first joined and a conversation in the run it was first seen in, so a
   * record naming only one of them still finds the other's run. When a trace's first spans name
   * no conversation (a sender that sets it on the root span only, which ends last), that trace
   * keeps its own run and the conversation is bound to it from then on.
   */
  private keyOf(rec: RecordOf): string {
    const r = rec.r;
    const trace = r.traceId;
    const conv =
      conversationOf(r.attributes, r.resource) ?? (trace ? this.traceConversation.get(trace) : undefined);
    const byTrace = trace ? this.traceHome.get(trace) : undefined;
    if (byTrace) {
      if (conv && !this.convHome.has(conv)) bounded(this.convHome).set(conv, byTrace);
      return byTrace;
    }
    if (conv) {
      let home = this.convHome.get(conv);
      if (!home) bounded(this.convHome).set(conv, (home = `c:${conv}`));
      if (trace) bounded(this.traceHome).set(trace, home);
      return home;
    }
    if (trace) {
      const home = `t:${trace}`;
      bounded(this.traceHome).set(trace, home);
      return home;
    }
    const service = r.resource['service.name'];
    return `s:${typeof service === 'string' && service ? service : 'unknown'}`;
  }

  private runIdOf(ledger: Ledger, key: string): string {
    const known = this.idOfKey.get(key);
    if (known) return known;
    const id = key.slice(2);
    const base =
      key[0] === 'c' ? safeId('otlp-', id) : key[0] === 't' ? `otlp-trace-${id}` : safeId('otlp-logs-', id);
    let runId = base;
    for (let n = 2; ; n++) {
      const row = ledger.run(runId);
      if (!row || row.format === 'otlp') break;
      runId = `${base}-${n}`; // taken by a run of another kind: never append to it
    }
    this.idOfKey.set(key, runId);
    return runId;
  }

  private open(ledger: Ledger, key: string, firstRec: RecordOf): LiveRun {
    const existing = this.live.get(key);
    if (existing) return existing;
    const runId = this.runIdOf(ledger, key);
    const r = firstRec.r;
    const service = r.resource['service.name'];
    const meta = {
      otlp: {
        ...(key[0] === 'c' ? { conversation_id: key.slice(2) } : {}),
        ...(r.traceId ? { trace_id: r.traceId } : {}),
        ...(typeof service === 'string' ? { service } : {}),
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
    let state = this.states.get(key);
    if (!state) {
      state = new RunMapState();
      this.states.set(key, state);
      if (this.states.size > 10_000) this.states.delete(this.states.keys().next().value as string);
    }
    const run: LiveRun = { runId, writer, state, lastAt: this.now(), resourceKey: '' };
    this.live.set(key, run);
    return run;
  }

  private release(run: LiveRun, key: string): void {
    this.live.delete(key);
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
