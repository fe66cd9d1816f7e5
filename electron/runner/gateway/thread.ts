/**
 * The gateway in a thread of its own (worker.ts), so that recording never sits on the answer's
 * path: the gateway's thread reads a request, gets the source's answer, sends it to the agent and
 * posts the exchange here; this thread (the run's, which owns the ledger) redacts and stores the
 * request and answer as artifacts and appends the events (each commit waits for its fsync) while
 * the gateway's thread answers the next request. Measured in bench/gateway.ts: with recording on
 * the gateway's own thread the 10 KB p99 added was +159 ms, the commit and artifact fsyncs of the
 * last exchange delaying the next answer.
 *
 * Nothing acknowledged is lost and nothing is out of order:
 * - the worker posts an exchange before it sends a sim or replay answer to the agent (and a
 *   streamed upstream answer right after it went out), and posts a hook call when the agent's hook
 *   client asks; messages of one port arrive in order, so a hook's decision is appended after the
 *   proposal it decides on, as when all of it was one thread;
 * - `settle()` asks the worker to answer `drained` once no request is in flight: every exchange it
 *   posted before is recorded when that answer arrives, so a run's last events (run_completed /
 *   run_failed) follow all its exchanges;
 * - the queue is bounded: past `maxQueuedBytes` of requests and answers posted and not yet
 *   recorded, the gateway's thread waits before answering more (memory stays bounded when the disk
 *   is slower than the agent);
 * - a failure to record is the host's event (`recordingFailed`), and the host ends the run; if even
 *   that fails, `settle()` rejects and the run's host records run_failed.
 * Without a worker to start (a bundle without worker.js) the gateway runs in this thread, recording
 * synchronously as before.
 */
import type { Worker } from 'node:worker_threads';
import { realAgent } from '../agents/registry';
import { startWorker } from '../../workers';
import { Gateway, type GatewayExchange, type GatewayHost } from './server';
import { buildSource, setGatewayUrl, type SourceSpec } from './source-spec';
import type {
  CanonicalRequest,
  DivergenceCause,
  ModelAnswer,
  NormaliseContext,
  ParsedRequest,
  SourceRequest,
} from './types';

export interface GatewayThreadOptions {
  /** The real agent (its dialect and sim tools). */
  agent: string;
  source: SourceSpec;
  token: string;
  host: GatewayHost;
  prompt: string;
  workspace: string;
  home: string;
  /** What is run-specific (normaliseText) for a request's canonical form; default: workspace and home. */
  ctx?: NormaliseContext;
  maxBody?: number;
  /** Bytes posted to this thread and not yet recorded past which the gateway waits (default 64 MB). */
  maxQueuedBytes?: number;
  /** Run the gateway in this thread (no worker). */
  inThread?: boolean;
}

/** What the run needs of its gateway, in a worker or not. */
export interface GatewayHandle {
  listen(): Promise<string>;
  /** Resolves once every exchange so far is recorded and no request is in flight. */
  settle(): Promise<void>;
  close(): Promise<void>;
  /** Whether the gateway answers from a thread of its own. */
  readonly threaded: boolean;
  /** The gateway thread's heap in use (bytes), or null when it runs in this thread. */
  heapUsed(): Promise<number | null>;
}

/** A request as posted between the threads (the body as bytes: the run's thread parses it). */
export interface WireRequest {
  parsed: ParsedRequest;
  raw: Uint8Array;
  index: number;
  headers: Record<string, string | string[] | undefined>;
  path: string;
}

export type FromWorker =
  | { t: 'listening'; url: string }
  | { t: 'listen_failed'; message: string }
  | {
      t: 'record';
      req: WireRequest;
      answer: ModelAnswer;
      responseBody: string;
      status: number;
      source: GatewayExchange['source'];
      bytes: number;
    }
  | {
      t: 'noAnswer';
      req: WireRequest;
      reason: string;
      cause?: DivergenceCause;
      detail?: Record<string, unknown>;
    }
  | { t: 'bad'; status: number; message: string }
  | { t: 'hook'; id: number; body: unknown }
  | { t: 'drained'; id: number }
  | { t: 'heap'; id: number; used: number }
  | { t: 'closed' };

export type ToWorker =
  | { t: 'ack'; bytes: number }
  | { t: 'refuse'; reason: string | null }
  | { t: 'hook_answer'; id: number; out: unknown }
  | { t: 'hook_error'; id: number; message: string }
  | { t: 'drain'; id: number }
  | { t: 'heap'; id: number }
  | { t: 'close' };

export interface WorkerInit {
  agent: string;
  source: SourceSpec;
  token: string;
  prompt: string;
  workspace: string;
  home: string;
  maxBody?: number;
  maxQueuedBytes: number;
}

const MAX_QUEUED = 64 * 1024 * 1024;

/** The run's gateway: in a worker thread when one starts, else in this thread. */
export function startGateway(o: GatewayThreadOptions): GatewayHandle {
  if (!o.inThread) {
    let worker: Worker | null = null;
    const init: WorkerInit = {
      agent: o.agent,
      source: o.source,
      token: o.token,
      prompt: o.prompt,
      workspace: o.workspace,
      home: o.home,
      maxBody: o.maxBody,
      maxQueuedBytes: o.maxQueuedBytes ?? MAX_QUEUED,
    };
    try {
      worker = startWorker(import.meta.url, './worker.ts', './gateway-worker.js', { workerData: init });
    } catch {
      worker = null;
    }
    if (worker) return new GatewayThread(worker, o);
  }
  const { dialect, source } = buildSource(o.agent, o.source);
  const gw = new Gateway({
    dialect,
    source,
    token: o.token,
    host: o.host,
    prompt: o.prompt,
    workspace: o.workspace,
    home: o.home,
    maxBody: o.maxBody,
  });
  return {
    listen: async () => {
      const url = await gw.listen();
      setGatewayUrl(o.source, url);
      return url;
    },
    settle: () => gw.settle(),
    close: () => gw.close(),
    threaded: false,
    heapUsed: () => Promise.resolve(null),
  };
}

class GatewayThread implements GatewayHandle {
  readonly threaded = true;
  private listening: { resolve: (url: string) => void; reject: (e: Error) => void } | null = null;
  private readonly drains = new Map<number, () => void>();
  private readonly heaps = new Map<number, (used: number | null) => void>();
  private nextDrain = 0;
  private refusal: string | null = null;
  /** A failure to record that could not be made an event either: settle() rejects with it. */
  private lost: Error | null = null;
  private exited: Error | null = null;
  private closing: (() => void) | null = null;

  constructor(
    private readonly worker: Worker,
    private readonly o: GatewayThreadOptions,
  ) {
    worker.on('message', (m: FromWorker) => this.onMessage(m));
    const gone = (e: Error) => {
      this.exited ??= e;
      this.listening?.reject(e);
      this.listening = null;
      for (const d of this.drains.values()) d();
      this.drains.clear();
      for (const h of this.heaps.values()) h(null);
      this.heaps.clear();
      this.closing?.();
    };
    worker.on('error', (e) => {
      gone(e);
      this.safely(() => o.host.badRequest(500, `the gateway's thread failed: ${e.message}`));
    });
    worker.on('exit', (code) => gone(new Error(`the gateway's thread exited (${code})`)));
  }

  listen(): Promise<string> {
    if (this.exited) return Promise.reject(this.exited);
    return new Promise((resolve, reject) => (this.listening = { resolve, reject }));
  }

  async settle(): Promise<void> {
    if (!this.exited) {
      const id = ++this.nextDrain;
      await new Promise<void>((resolve) => {
        this.drains.set(id, resolve);
        this.post({ t: 'drain', id });
      });
    }
    if (this.lost) throw this.lost;
  }

  heapUsed(): Promise<number | null> {
    if (this.exited) return Promise.resolve(null);
    const id = ++this.nextDrain;
    return new Promise((resolve) => {
      this.heaps.set(id, resolve);
      this.post({ t: 'heap', id });
    });
  }

  async close(): Promise<void> {
    if (!this.exited) {
      await new Promise<void>((resolve) => {
        this.closing = resolve;
        this.post({ t: 'close' });
      });
    }
    await this.worker.terminate();
  }

  private post(m: ToWorker): void {
    this.worker.postMessage(m);
  }

  /** The request as the host knows it: the body parsed here, its canonical form when asked for. */
  private request(w: WireRequest): SourceRequest {
    const rawBody = Buffer.from(w.raw.buffer, w.raw.byteOffset, w.raw.byteLength);
    const body: unknown = JSON.parse(rawBody.toString('utf8'));
    const ctx = this.o.ctx ?? { workspace: this.o.workspace, home: this.o.home };
    const dialect = realAgent(this.o.agent).dialect;
    let canonical: CanonicalRequest | null = null;
    return {
      parsed: w.parsed,
      body,
      rawBody,
      get canonical() {
        canonical ??= dialect.canonical(body, ctx);
        return canonical;
      },
      index: w.index,
      headers: w.headers,
      path: w.path,
    };
  }

  /** Runs a host call whose own failure has nowhere else to go: kept for settle() to report. */
  private safely(f: () => void): void {
    try {
      f();
    } catch (e) {
      this.lost ??= e instanceof Error ? e : new Error(String(e));
    }
  }

  private recordFailed(req: SourceRequest | null, e: unknown): void {
    const err = e instanceof Error ? e : new Error(String(e));
    this.safely(() => {
      if (this.o.host.recordingFailed) this.o.host.recordingFailed(req, err);
      else throw err;
    });
  }

  private onMessage(m: FromWorker): void {
    const host = this.o.host;
    switch (m.t) {
      case 'listening':
        this.listening?.resolve(m.url);
        this.listening = null;
        break;
      case 'listen_failed':
        this.listening?.reject(new Error(m.message));
        this.listening = null;
        break;
      case 'record': {
        let req: SourceRequest | null = null;
        try {
          req = this.request(m.req);
          host.record({
            req,
            answer: m.answer,
            responseBody: m.responseBody,
            status: m.status,
            source: m.source,
          });
        } catch (e) {
          this.recordFailed(req, e);
        } finally {
          this.post({ t: 'ack', bytes: m.bytes });
        }
        break;
      }
      case 'noAnswer': {
        let req: SourceRequest | null = null;
        try {
          req = this.request(m.req);
          host.noAnswer(req, m.reason, m.cause, m.detail);
        } catch (e) {
          this.recordFailed(req, e);
        }
        break;
      }
      case 'bad':
        this.safely(() => host.badRequest(m.status, m.message));
        break;
      case 'hook':
        host.hook(m.body).then(
          (out) => this.post({ t: 'hook_answer', id: m.id, out }),
          (e: unknown) => this.post({ t: 'hook_error', id: m.id, message: (e as Error).message }),
        );
        break;
      case 'drained':
        this.drains.get(m.id)?.();
        this.drains.delete(m.id);
        break;
      case 'heap':
        this.heaps.get(m.id)?.(m.used);
        this.heaps.delete(m.id);
        break;
      case 'closed':
        this.closing?.();
        this.closing = null;
        break;
    }
    // The run may have ended on this message (a budget, a failure): later requests are refused there.
    let refusal: string | null = null;
    try {
      refusal = host.admit();
    } catch {
      refusal = null;
    }
    if (refusal !== this.refusal) {
      this.refusal = refusal;
      this.post({ t: 'refuse', reason: refusal });
    }
  }
}
