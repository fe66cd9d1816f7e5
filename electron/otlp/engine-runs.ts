import type { NewEvent } from '../../shared/protocol';
import { ProofloopError } from '../../shared/result';
import type { EngineWriter, LedgerEngine } from '../ledger/engine';
import { errorOf, safeId, type IngestResult, type KeyKeeper } from './runs';
import type { PreparedPart } from './run-keys';

/**
 * LiveRuns (runs.ts) through the engine interface: the OTLP receiver's runs on a team ledger
 * (PostgreSQL). The same rules: one writer per live run (the engine's lease, taken as `live` for
 * the format 'otlp'), a run key's id chosen once (another id when a run of another kind holds it),
 * the requests of one group appended as one batch per run, and on its failure each request's share
 * again alone, so a request is refused only for what is wrong with it. A run with nothing new for
 * idleMs lets its writer go. A runs folder keeps LiveRuns, whose synchronous appends group-commit.ts
 * was measured with.
 */

const LABEL = 'otlp receiver';

interface LiveRun {
  runId: string;
  writer: EngineWriter;
  lastAt: number;
}

/** A prepared part's events as the engine's writer takes them (payloads redacted and checked again there). */
function itemsOf(part: PreparedPart): NewEvent[] {
  return part.kinds.map((kind, i) => ({
    kind,
    v: part.vs[i],
    ...(part.ats[i] ? { at: part.ats[i]! } : {}),
    payload: JSON.parse(part.jsons[i]!) as Record<string, unknown>,
  }));
}

export class EngineLiveRuns {
  private readonly live = new Map<string, Promise<LiveRun>>();
  private readonly idOfKey = new Map<string, string>();
  private bound: LedgerEngine | null = null;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly engineOf: () => LedgerEngine,
    private readonly idleMs: number,
    private readonly keys: KeyKeeper | null = null,
    private readonly now: () => number = Date.now,
  ) {
    this.timer = setInterval(() => void this.sweep(), Math.max(50, Math.min(idleMs / 2, 5000)));
    this.timer.unref();
  }

  async ingestMany(requests: readonly (readonly PreparedPart[])[]): Promise<IngestResult[]> {
    const engine = this.engine();
    const results: IngestResult[] = requests.map(() => ({ accepted: 0, rejected: 0, errors: [], runs: [] }));
    const groups = new Map<string, { request: number; part: PreparedPart }[]>();
    requests.forEach((parts, request) => {
      for (const part of parts) {
        const g = groups.get(part.key);
        if (g) g.push({ request, part });
        else groups.set(part.key, [{ request, part }]);
      }
    });
    const refuse = (p: { request: number; part: PreparedPart }, e: unknown): void => {
      const r = results[p.request]!;
      r.rejected += p.part.records;
      r.errors.push(e instanceof ProofloopError ? e.message : `internal error: ${(e as Error).message}`);
    };
    const accept = (p: { request: number; part: PreparedPart }, run: LiveRun): void => {
      const r = results[p.request]!;
      r.accepted += p.part.records;
      r.runs.push(run.runId);
    };
    // Runs apart in parallel; each run's appends in request order (its writer is one sequence).
    await Promise.all(
      [...groups].map(async ([key, parts]) => {
        let run: LiveRun;
        try {
          run = await this.open(engine, key, parts[0]!.part);
        } catch (e) {
          for (const p of parts) refuse(p, e);
          return;
        }
        let failed = false;
        const ok = parts.filter((p) => {
          if (p.part.error === undefined) return true;
          refuse(p, errorOf(p.part.error));
          failed = true;
          return false;
        });
        if (ok.length > 0) {
          try {
            await run.writer.appendBatch(ok.flatMap((p) => itemsOf(p.part)));
            for (const p of ok) accept(p, run);
          } catch (e) {
            if (ok.length === 1) {
              refuse(ok[0]!, e);
              failed = true;
            } else {
              for (const p of ok) {
                try {
                  await run.writer.appendBatch(itemsOf(p.part));
                  accept(p, run);
                } catch (e2) {
                  refuse(p, e2);
                  failed = true;
                }
              }
            }
          }
        }
        run.lastAt = this.now();
        if (failed) await this.release(key);
      }),
    );
    return results;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all([...this.live.keys()].map((k) => this.release(k)));
  }

  private engine(): LedgerEngine {
    const e = this.engineOf();
    if (e !== this.bound) {
      for (const key of [...this.live.keys()]) void this.release(key);
      this.idOfKey.clear();
      if (this.bound !== null) this.keys?.reset();
      this.bound = e;
    }
    return e;
  }

  private async runIdOf(engine: LedgerEngine, key: string): Promise<string> {
    const known = this.idOfKey.get(key);
    if (known) return known;
    const id = key.slice(2);
    const base =
      key[0] === 'c' ? safeId('otlp-', id) : key[0] === 't' ? `otlp-trace-${id}` : safeId('otlp-logs-', id);
    let runId = base;
    for (let n = 2; ; n++) {
      const row = await engine.run(runId);
      if (!row || row.format === 'otlp') break;
      runId = `${base}-${n}`; // taken by a run of another kind: never append to it
    }
    this.idOfKey.set(key, runId);
    return runId;
  }

  /** The key's live run, its writer taken once (concurrent groups of one key share the promise). */
  private open(engine: LedgerEngine, key: string, first: PreparedPart): Promise<LiveRun> {
    const known = this.live.get(key);
    if (known) return known;
    const opening = (async () => {
      const runId = await this.runIdOf(engine, key);
      const { traceId, service } = first.seed;
      const meta = {
        otlp: {
          ...(key[0] === 'c' ? { conversation_id: key.slice(2) } : {}),
          ...(traceId ? { trace_id: traceId } : {}),
          ...(service !== null ? { service } : {}),
        },
      };
      const writer = await engine.writer(runId, {
        label: LABEL,
        live: 'otlp',
        create: { source: 'imported', format: 'otlp', origin: 'otlp', meta },
      });
      return { runId, writer, lastAt: this.now() };
    })();
    this.live.set(key, opening);
    opening.catch(() => this.live.delete(key));
    return opening;
  }

  private async release(key: string): Promise<void> {
    const run = this.live.get(key);
    if (!run) return;
    this.live.delete(key);
    this.keys?.released(key);
    try {
      await (await run).writer.close();
    } catch {
      // never opened, or the server is gone: its lease lapses by itself
    }
  }

  private async sweep(): Promise<void> {
    const t = this.now();
    for (const [key, opening] of [...this.live]) {
      const run = await opening.catch(() => null);
      if (run && t - run.lastAt >= this.idleMs) await this.release(key);
    }
  }
}
