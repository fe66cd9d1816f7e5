import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import { gunzip } from 'node:zlib';
import { promisify } from 'node:util';
import type { AddressInfo } from 'node:net';
import type { Ledger } from '../ledger';
import { responseTypes, StatusType, type Encoding } from './decode';
import { DecodeThread } from './decode-thread';
import { DecodeError, type Signal } from './types';
import { LiveRuns, type IngestResult } from './runs';
import { EngineLiveRuns } from './engine-runs';
import type { LedgerEngine } from '../ledger/engine';
import { GroupCommit } from './group-commit';

const gunzipAsync = promisify(gunzip);

export interface OtlpReceiverOptions {
  /** The open ledger, asked on every request (the app may switch folders); throwing means none is open. */
  ledger: () => Ledger;
  /**
   * The open ledger when it is a team's server (the engine interface), else null and `ledger` is
   * asked: records then go to the team ledger, each live run holding its lease there.
   */
  engine?: () => LedgerEngine | null;
  /** 4318 by default (OTLP/HTTP's port); 0 for any free one. */
  port?: number;
  /** When set, every request must carry `Authorization: Bearer <token>`. */
  token?: string | null;
  /** A run with nothing new for this long shows as idle and lets its writer go (default 2 minutes). */
  idleMs?: number;
  /** Bounds: bytes on the wire, and once inflated (defaults 16 MiB and 64 MiB). */
  maxBodyBytes?: number;
  maxInflatedBytes?: number;
  /** false: bodies are decoded in the receiver's own thread (decode-thread.ts; for comparisons). */
  decodeThread?: boolean;
}

export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: what OTEL_EXPORTER_OTLP_ENDPOINT should be. */
  endpoint: string;
  port: number;
  token: string | null;
  /** Requests appended and the commits they took (group commit: group-commit.ts). */
  stats: { requests: number; groups: number };
  close(): Promise<void>;
}

const ROUTES: Record<string, Signal> = {
  '/v1/traces': 'traces',
  '/v1/logs': 'logs',
  '/v1/metrics': 'metrics',
};
const CONTENT_TYPES: Record<string, Encoding> = {
  'application/x-protobuf': 'protobuf',
  'application/json': 'json',
};
/** google.rpc.Code values for the Status body of an error answer. */
const RPC = {
  invalidArgument: 3,
  permissionDenied: 7,
  resourceExhausted: 8,
  unimplemented: 12,
  unavailable: 14,
  unauthenticated: 16,
};

class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly rpc: number,
    message: string,
  ) {
    super(message);
  }
}

function tokenMatches(expected: string, header: string | undefined): boolean {
  const m = /^Bearer\s+(.+)$/i.exec(header ?? '');
  if (!m) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(m[1]!.trim());
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The body, refused as soon as it passes `max` bytes, whether its length was declared or it is chunked. */
async function readBounded(req: IncomingMessage, max: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (declared > max)
    throw new Refusal(
      413,
      RPC.resourceExhausted,
      `request body of ${declared} bytes is over the ${max}-byte limit`,
    );
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > max)
      throw new Refusal(413, RPC.resourceExhausted, `request body is over the ${max}-byte limit`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

async function inflate(body: Buffer, encoding: string, max: number): Promise<Buffer> {
  if (encoding === '' || encoding === 'identity') return body;
  if (encoding !== 'gzip')
    throw new Refusal(
      415,
      RPC.invalidArgument,
      `Content-Encoding "${encoding}" is not supported (gzip or none)`,
    );
  try {
    // Important: the bound is on the output, so a small gzip bomb stops at `max`, not at its size.
    return await gunzipAsync(body, { maxOutputLength: max });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || e instanceof RangeError) {
      throw new Refusal(413, RPC.resourceExhausted, `gzip body inflates past the ${max}-byte limit`);
    }
    throw new Refusal(400, RPC.invalidArgument, `gzip body does not inflate: ${(e as Error).message}`);
  }
}

function answer(res: ServerResponse, status: number, encoding: Encoding, body: Uint8Array | string): void {
  res.writeHead(status, {
    'content-type': encoding === 'protobuf' ? 'application/x-protobuf' : 'application/json',
    'cache-control': 'no-store',
    ...(status >= 400 ? { connection: 'close' } : {}),
  });
  res.end(body);
}

/** An OTLP error answer: the status code, and a google.rpc.Status in the request's encoding. */
function refuse(res: ServerResponse, r: Refusal, encoding: Encoding): void {
  const status = { code: r.rpc, message: r.message };
  answer(
    res,
    r.status,
    encoding,
    encoding === 'protobuf' ? StatusType.encode(status).finish() : JSON.stringify(status),
  );
}

function exportResponse(signal: Signal, result: IngestResult, encoding: Encoding): Uint8Array | string {
  const field =
    signal === 'traces' ? 'rejectedSpans' : signal === 'logs' ? 'rejectedLogRecords' : 'rejectedDataPoints';
  const body =
    result.rejected > 0
      ? {
          partialSuccess: {
            [field]: result.rejected,
            errorMessage: [...new Set(result.errors)].join('; ').slice(0, 2000),
          },
        }
      : {};
  if (encoding === 'json') return JSON.stringify(body);
  const type = responseTypes[signal];
  return type.encode(type.fromObject(body)).finish();
}

/**
 * The OTLP/HTTP receiver: POST /v1/traces, /v1/logs and /v1/metrics (each data point an event),
 * protobuf or JSON, plain or gzip. It is an input anyone on this machine can reach, so: loopback
 * only; the Host header must name this address (DNS rebinding); no CORS headers and only the two
 * OTLP content types, so a web page cannot post into it (any other type, and any preflight, is
 * refused); the body is bounded before it is read whole, and gzip by what it inflates to; an
 * optional bearer token. An answer is sent after its records are committed.
 */
export async function startOtlpReceiver(opts: OtlpReceiverOptions): Promise<OtlpReceiver> {
  const maxBody = opts.maxBodyBytes ?? 16 << 20;
  const maxInflated = opts.maxInflatedBytes ?? 64 << 20;
  const token = opts.token ?? null;
  const decoder = opts.decodeThread === false ? DecodeThread.none() : DecodeThread.start();
  const runs = new LiveRuns(opts.ledger, opts.idleMs ?? 120_000, Date.now, decoder);
  const teamOf = opts.engine;
  const teamRuns = teamOf ? new EngineLiveRuns(() => teamOf()!, opts.idleMs ?? 120_000, decoder) : null;
  const commits = new GroupCommit({
    ingestMany: (requests) =>
      teamRuns && teamOf?.() ? teamRuns.ingestMany(requests) : runs.ingestMany(requests),
  });
  let port = 0;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    const encoding: Encoding = CONTENT_TYPES[type] ?? 'json';
    try {
      const host = (req.headers.host ?? '').toLowerCase();
      if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}` && host !== `[::1]:${port}`) {
        throw new Refusal(
          403,
          RPC.permissionDenied,
          `Host "${req.headers.host ?? ''}" is not this receiver (127.0.0.1:${port} or localhost:${port})`,
        );
      }
      const path = (req.url ?? '').split('?')[0]!;
      const signal = ROUTES[path];
      if (!signal)
        throw new Refusal(
          404,
          RPC.unimplemented,
          `no OTLP route ${path}: POST /v1/traces, /v1/logs or /v1/metrics`,
        );
      if (req.method !== 'POST')
        throw new Refusal(405, RPC.unimplemented, `${req.method ?? ''} ${path}: only POST is accepted`);
      if (token !== null && !tokenMatches(token, req.headers.authorization)) {
        throw new Refusal(
          401,
          RPC.unauthenticated,
          'missing or wrong bearer token (set OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer%20<token>)',
        );
      }
      if (!CONTENT_TYPES[type]) {
        throw new Refusal(
          415,
          RPC.invalidArgument,
          `Content-Type "${type}" is not accepted: application/x-protobuf or application/json`,
        );
      }
      const wire = await readBounded(req, maxBody);
      const body = await inflate(
        wire,
        String(req.headers['content-encoding'] ?? '').toLowerCase(),
        maxInflated,
      );
      let prepared;
      try {
        prepared = await decoder.prepare(signal, body, encoding);
      } catch (e) {
        if (e instanceof DecodeError) throw new Refusal(400, RPC.invalidArgument, e.message);
        throw e;
      }
      try {
        if (!teamOf?.()) opts.ledger();
      } catch (e) {
        throw new Refusal(503, RPC.unavailable, (e as Error).message);
      }
      const parts = prepared.parts;
      const result =
        parts.length > 0 ? await commits.submit(parts) : { accepted: 0, rejected: 0, errors: [], runs: [] };
      answer(res, 200, encoding, exportResponse(signal, result, encoding));
    } catch (e) {
      const r = e instanceof Refusal ? e : new Refusal(500, 13, `internal error: ${(e as Error).message}`);
      refuse(res, r, encoding);
      // What is left of a refused body is not read: the connection closes after the answer.
      req.resume();
    }
  }

  const server = createServer((req, res) => void handle(req, res));
  server.requestTimeout = 60_000;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port ?? 4318, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (e) {
    // A port in use (a collector on 4318) is reported and the inspector serves on: the decode
    // thread started above must not outlive it (it kept `serve` alive ~3 s after its signal).
    decoder.close();
    runs.close();
    void teamRuns?.close();
    throw e;
  }
  port = (server.address() as AddressInfo).port;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    token,
    stats: commits.stats,
    close: async () => {
      await new Promise<void>((resolve) => {
        commits.close();
        decoder.close();
        runs.close();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      // The team ledger's live runs give their leases back before the caller closes the engine.
      await teamRuns?.close();
    },
  };
}
