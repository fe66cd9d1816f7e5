/**
 * The run's model gateway (see types.ts): 127.0.0.1 only, a random port, the per-run token required
 * in the agent's API-key slot (401 without it, so no other local process can use the run's model),
 * and one more route for ProofLoop's hook client (`POST /proofloop/hook`, the same token in
 * `x-proofloop-token`). The host owns the ledger: the gateway only tells it what happened.
 */
import http from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type {
  AnswerSource,
  CanonicalRequest,
  Dialect,
  DivergenceCause,
  ModelAnswer,
  ParsedRequest,
  SourceRequest,
} from './types';

/** What the gateway tells the run (real-run.ts) and asks of it. */
export interface GatewayHost {
  /** Before the source is asked: why the request is refused (budget, run ending), or null. */
  admit(): string | null;
  /** An answered exchange, to record (artifacts, model_responded / model_proposed). */
  record(ex: GatewayExchange): void;
  /**
   * Recording an exchange the agent has had (or a request it made) failed (disk full, ledger gone):
   * the host makes it an event and ends the run. Absent: the failure is a `badRequest(500)`.
   */
  recordingFailed?(req: SourceRequest | null, error: Error): void;
  /** A request the source had no answer for (divergence, exhausted, upstream error): an event. */
  noAnswer(
    req: SourceRequest,
    reason: string,
    cause?: DivergenceCause,
    detail?: Record<string, unknown>,
  ): void;
  /** ProofLoop's hook client: the agent's hook input in, the agent's hook output back. */
  hook(body: unknown): Promise<unknown>;
  /** A request that could not be read (bad JSON, wrong route): an event, not a log line. */
  badRequest(status: number, message: string): void;
}

export interface GatewayExchange {
  req: SourceRequest;
  /** The model's answer (parsed from raw bytes when the source gave bytes). */
  answer: ModelAnswer;
  /** The response body as the agent received it. */
  responseBody: string;
  status: number;
  source: AnswerSource['kind'];
}

export interface GatewayOptions {
  dialect: Dialect;
  source: AnswerSource;
  token: string;
  host: GatewayHost;
  /** The run's prompt (names the main lane). */
  prompt: string;
  /** The canonical form needs the run's paths. */
  workspace: string;
  home: string;
  /** Largest request body accepted. */
  maxBody?: number;
  /**
   * Awaited before a model request is answered: the gateway thread's bound on exchanges not yet
   * recorded (thread.ts). Absent: recording is synchronous, nothing to wait for.
   */
  room?: () => Promise<void> | undefined;
}

const MAX_BODY = 64 * 1024 * 1024;

function tokenOk(given: string | null, want: string): boolean {
  if (given === null) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(want);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** One request header's value (the first, if it was sent more than once): for the dialects' token(). */
export function header(h: Record<string, string | string[] | undefined>, name: string): string | null {
  const v = h[name];
  return typeof v === 'string' ? v : Array.isArray(v) ? (v[0] ?? null) : null;
}

export class Gateway {
  private server: http.Server | null = null;
  private readonly laneCounts = new Map<string, number>();
  private messageCount = 0;
  /** Requests being answered (the run waits for them before it ends). */
  inFlight = 0;

  constructor(private readonly o: GatewayOptions) {}

  get url(): string {
    const a = this.server?.address() as AddressInfo | null;
    if (!a) throw new Error('gateway is not listening');
    return `http://127.0.0.1:${a.port}`;
  }

  async listen(): Promise<string> {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    this.server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(0, '127.0.0.1', () => resolve());
    });
    return this.url;
  }

  async close(): Promise<void> {
    const s = this.server;
    if (!s) return;
    this.server = null;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  /** Resolves once no model request is being answered (the run's end waits for it), or after 1 s. */
  async settle(): Promise<void> {
    for (let i = 0; i < 50 && this.inFlight > 0; i++) await new Promise((r) => setTimeout(r, 20));
    // A streamed upstream answer is recorded one turn of the loop after it went out.
    await new Promise((r) => setImmediate(r));
  }

  /** host.record, a failure of which is the host's event (never the agent's error: it has its answer). */
  private record(ex: GatewayExchange): void {
    try {
      this.o.host.record(ex);
    } catch (e) {
      const err = e instanceof Error ? e : new Error(String(e));
      if (this.o.host.recordingFailed) this.o.host.recordingFailed(ex.req, err);
      else this.o.host.badRequest(500, `recording the exchange failed: ${err.message}`);
    }
  }

  private send(res: http.ServerResponse, status: number, contentType: string, body: string): void {
    res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
    res.end(body);
  }

  private async readBody(req: http.IncomingMessage): Promise<Buffer | null> {
    const max = this.o.maxBody ?? MAX_BODY;
    const chunks: Buffer[] = [];
    let n = 0;
    for await (const c of req as AsyncIterable<Buffer>) {
      n += c.length;
      if (n > max) return null;
      chunks.push(c);
    }
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, n);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const { dialect } = this.o;
    const pathname = (req.url ?? '/').split('?')[0]!;
    try {
      if (pathname === '/proofloop/hook') {
        if (!tokenOk((req.headers['x-proofloop-token'] as string | undefined) ?? null, this.o.token)) {
          this.send(res, 401, 'application/json', '{"error":"bad token"}');
          return;
        }
        const raw = await this.readBody(req);
        const out = await this.o.host.hook(raw ? JSON.parse(raw.toString('utf8')) : null);
        this.send(res, 200, 'application/json', JSON.stringify(out));
        return;
      }
      if (!tokenOk(dialect.token(req.headers), this.o.token)) {
        this.send(res, 401, 'application/json', dialect.error('authentication_error', 'invalid x-api-key'));
        return;
      }
      const route = dialect.route(req.method ?? 'GET', pathname);
      if (!route) {
        this.o.host.badRequest(404, `${req.method} ${pathname}: not a route of the ${dialect.name} gateway`);
        this.send(res, 404, 'application/json', dialect.error('not_found_error', `no route ${pathname}`));
        return;
      }
      const raw = await this.readBody(req);
      if (!raw) {
        this.o.host.badRequest(413, `${pathname}: request body over the gateway's limit`);
        this.send(res, 413, 'application/json', dialect.error('request_too_large', 'request too large'));
        return;
      }
      let body: unknown;
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch (e) {
        this.o.host.badRequest(400, `${pathname}: body is not JSON: ${(e as Error).message}`);
        this.send(res, 400, 'application/json', dialect.error('invalid_request_error', 'body is not JSON'));
        return;
      }
      if (route === 'count') {
        this.send(res, 200, 'application/json', JSON.stringify(dialect.count(body)));
        return;
      }
      this.inFlight += 1;
      try {
        await this.model(req, res, body, raw);
      } finally {
        this.inFlight -= 1;
      }
    } catch (e) {
      try {
        this.o.host.badRequest(500, `gateway: ${(e as Error).message}`);
      } catch {
        // the run's ledger is gone (the run ended): the agent still gets its 500
      }
      if (!res.headersSent)
        this.send(res, 500, 'application/json', dialect.error('api_error', 'gateway error'));
      else res.destroy();
    }
  }

  private async model(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    body: unknown,
    rawBody: Buffer,
  ): Promise<void> {
    const { dialect, source, host } = this.o;
    const o = this.o;
    const parsed: ParsedRequest = dialect.parse(body, req.headers, this.o.prompt);
    const index = this.laneCounts.get(parsed.lane) ?? 0;
    this.laneCounts.set(parsed.lane, index + 1);
    // Upstream needs no canonical form to answer: computed later, off the answer's path.
    let canonical: CanonicalRequest | null = null;
    const sreq: SourceRequest = {
      parsed,
      body,
      rawBody,
      get canonical() {
        canonical ??= dialect.canonical(body, { workspace: o.workspace, home: o.home });
        return canonical;
      },
      index,
      headers: req.headers,
      path: req.url ?? '/',
    };
    await o.room?.();
    const refused = host.admit();
    if (refused) {
      host.noAnswer(sreq, refused);
      this.send(res, 400, 'application/json', dialect.error('invalid_request_error', refused));
      return;
    }
    if (source.kind === 'upstream') {
      sreq.start = (status, contentType) => res.writeHead(status, { 'content-type': contentType });
      sreq.write = (chunk) => res.write(chunk);
    }
    const a = await source.answer(sreq);
    if (a.type === 'none') {
      host.noAnswer(sreq, a.reason, a.cause, a.detail);
      if (res.headersSent) res.destroy();
      else
        this.send(
          res,
          400,
          'application/json',
          dialect.error('invalid_request_error', `proofloop: ${a.reason}`),
        );
      return;
    }
    if (a.type === 'answer') {
      const id = `msg_pl${String(++this.messageCount).padStart(6, '0')}`;
      const r = dialect.render(a.answer, id, parsed.stream);
      // Recorded before the agent sees it: the hook's decision must find the proposal in the ledger.
      this.record({ req: sreq, answer: a.answer, responseBody: r.body, status: 200, source: source.kind });
      this.send(res, 200, r.contentType, r.body);
      return;
    }
    const record = (): void => {
      let answer: ModelAnswer;
      try {
        answer = dialect.parseAnswer(a.body);
      } catch {
        answer = {
          text: '',
          calls: [],
          stop: 'end_turn',
          usage: { input_tokens: 0, output_tokens: 0 },
          model: '',
        };
      }
      this.record({ req: sreq, answer, responseBody: a.body, status: a.status, source: source.kind });
    };
    // Replayed bytes: recorded before the agent sees them (as above). Streamed upstream bytes are
    // with the agent already; recording waits for the next turn of the loop, off the answer's path.
    if (a.streamed) {
      res.end();
      setImmediate(record);
    } else {
      record();
      this.send(res, a.status, a.contentType, a.body);
    }
  }
}
