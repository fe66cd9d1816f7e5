import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { isMethodName, PUSH_NAMES } from '../../shared/api/contract';
import { err, type ErrorCode } from '../../shared/result';
import { isWithin } from '../fs/paths';
import { CSP } from './csp';
import type { ProofloopService } from '../service/service';
import { STATIC_TYPES } from './static-types';

export interface WebServer {
  url: string;
  port: number;
  token: string;
  close(): Promise<void>;
}

const MAX_BODY = 4 << 20;
const TYPES = STATIC_TYPES;

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(text);
}

/** An error answer, shaped like the service's failed Result. */
function fail(res: ServerResponse, status: number, code: ErrorCode, message: string): void {
  send(res, status, err(code, message));
}

function tokenMatches(expected: string, given: string | null | undefined): boolean {
  if (!given) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** A request refused before it reaches the service, with its HTTP status. */
class Refused extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The body, refused with 413 from Content-Length before reading when it says too much, else once
 * it passes the limit. The rest is drained (not read into memory) so the answer reaches the client.
 */
function readBody(req: IncomingMessage): Promise<string> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (declared > MAX_BODY) {
    return Promise.reject(
      new Refused(413, 'too_large', `request body of ${declared} bytes is over the ${MAX_BODY}-byte limit`),
    );
  }
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY) return void chunks.push(chunk);
      req.off('data', onData);
      req.resume();
      chunks.length = 0;
      reject(new Refused(413, 'too_large', `request body over the ${MAX_BODY}-byte limit`));
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** HTTP status of a failed Result: the caller's fault (4xx) but for the service's own. */
const STATUS: Partial<Record<ErrorCode, number>> = {
  internal: 500,
  unauthorized: 401,
  forbidden: 403,
  too_large: 413,
};

/**
 * The path, decoded; a malformed escape (`/%`, `/%E0%A4%A`) is a 400 before anything else looks
 * at the request.
 */
function decodedPath(req: IncomingMessage): string {
  const raw = (req.url ?? '/').split('?')[0]!;
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new Refused(400, 'bad_args', 'malformed URL: a percent escape does not decode');
  }
}

/**
 * Cross-site requests are refused: a page elsewhere that has the token (leaked, or guessed from
 * history) must not drive the API from the user's browser. Browsers send `Sec-Fetch-Site` and
 * `Origin` on such requests; a same-origin page sends `same-origin` (or no Origin at all).
 */
function checkSite(req: IncomingMessage, origins: readonly string[]): void {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') {
    throw new Refused(403, 'unauthorized', `cross-site request refused (Sec-Fetch-Site: ${String(site)})`);
  }
  const origin = req.headers.origin;
  if (origin !== undefined && !origins.includes(origin)) {
    throw new Refused(
      403,
      'unauthorized',
      `Origin "${origin.slice(0, 200)}" refused: only the page web mode serves may call the API`,
    );
  }
}

/** Calls carry JSON, declared as such: a `text/plain` or form POST (no CORS preflight) is refused. */
function checkJson(req: IncomingMessage): void {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') {
    throw new Refused(
      415,
      'bad_args',
      `API calls send Content-Type: application/json (got "${type.slice(0, 100) || 'none'}")`,
    );
  }
}

/**
 * Web mode: the renderer in any browser, against the same service, as the renderer (its surface
 * only). Loopback only; a Host check so a DNS-rebound page cannot reach it; Origin and
 * Sec-Fetch-Site checked; the per-launch token in the `x-proofloop-token` header on every call
 * (only the push stream, which EventSource opens without headers, takes it in `?token=`).
 */
/**
 * The renderer's scripts and styles are named by their content's hash (Vite's `assets/`): a reload
 * takes them from the browser's cache without asking, and with them the code the browser compiled
 * last time. The page itself is asked again each time, so a new build's names are seen at once.
 */
export function cacheControl(rel: string): string {
  return /^assets\/[\w.-]+-[\w-]{8,}\.(?:js|css)$/.test(rel)
    ? 'public, max-age=31536000, immutable'
    : 'no-cache';
}

export async function startWebServer(
  service: ProofloopService,
  opts: { port?: number; staticDir?: string | null; token?: string } = {},
): Promise<WebServer> {
  const token = opts.token ?? randomBytes(24).toString('base64url');
  const staticDir = opts.staticDir ? path.resolve(opts.staticDir) : null;
  let port = 0;
  // The pushes this server has sent, named by the server and their count ("<server>.<n>"): a call's
  // answer says how many had gone out when it began (`x-proofloop-pushes`), the push stream's first
  // message (`hello`) how many before it listened. A page whose reads all began after every push its
  // stream missed has nothing to read again when the stream connects (renderer/api/pushGap.ts).
  const instance = randomBytes(6).toString('base64url');
  let pushes = 0;
  const pushesNow = () => `${instance}.${pushes}`;
  // Registered before any stream's listener: a push is counted before a stream sends it.
  const offCount = service.onPush((channel) => {
    if (PUSH_NAMES.includes(channel)) pushes += 1;
  });

  const server = createServer((req, res) => {
    void handle(req, res).catch((e: Error) => {
      if (res.headersSent) res.end();
      else if (e instanceof Refused) {
        // A refused body is not read further: this connection is not reused.
        if (e.status === 413) res.setHeader('connection', 'close');
        fail(res, e.status, e.code, e.message);
      } else fail(res, 500, 'internal', e.message);
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const pathname = decodedPath(req);
    const host = req.headers.host ?? '';
    if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`) {
      fail(
        res,
        403,
        'unauthorized',
        `Host "${host.slice(0, 200)}" refused: web mode answers on 127.0.0.1:${port} only`,
      );
      return;
    }
    if (pathname.startsWith('/api/')) {
      checkSite(req, [`http://127.0.0.1:${port}`, `http://localhost:${port}`]);
      const stream = pathname === '/api/events' && req.method === 'GET';
      const query = new URL(req.url ?? '/', 'http://x').searchParams.get('token');
      const given = (req.headers['x-proofloop-token'] as string | undefined) ?? (stream ? query : null);
      if (!tokenMatches(token, given)) {
        fail(
          res,
          401,
          'unauthorized',
          query !== null && !stream
            ? 'the token goes in the x-proofloop-token header, not the URL'
            : 'missing or wrong token: use the URL printed by `proofloop serve`',
        );
        return;
      }
      if (stream) return sse(req, res);
      const name = pathname.slice('/api/'.length);
      if (req.method !== 'POST') {
        fail(res, 405, 'bad_args', 'API calls are POST /api/<method> with JSON arguments');
        return;
      }
      if (!isMethodName(name)) {
        fail(res, 404, 'bad_args', `unknown method "${name.slice(0, 120)}"`);
        return;
      }
      checkJson(req);
      let args: unknown;
      const body = await readBody(req);
      try {
        args = body.trim() === '' ? {} : JSON.parse(body);
      } catch (e) {
        fail(res, 400, 'bad_args', `body of ${name}: ${(e as Error).message}`);
        return;
      }
      await service.readable(name);
      const at = pushesNow();
      const result = await service.call(name, args, 'renderer');
      send(res, result.ok ? 200 : (STATUS[result.error.code] ?? 400), result, { 'x-proofloop-pushes': at });
      return;
    }
    serveStatic(pathname, res);
  }

  function sse(req: IncomingMessage, res: ServerResponse): void {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
    });
    res.write(': proofloop\n\n');
    const off = service.onPush((channel, payload) => {
      if (!PUSH_NAMES.includes(channel)) return;
      res.write(`event: ${channel}\ndata: ${JSON.stringify(payload)}\n\n`);
    });
    // In the same turn as the listener's registration: every push counted here is one it missed.
    res.write(`event: hello\ndata: ${JSON.stringify({ pushes: pushesNow() })}\n\n`);
    const ping = setInterval(() => res.write(': ping\n\n'), 15_000);
    req.on('close', () => {
      clearInterval(ping);
      off();
    });
  }

  function serveStatic(pathname: string, res: ServerResponse): void {
    if (!staticDir) {
      fail(res, 404, 'not_found', 'no renderer build: run `npm run build`');
      return;
    }
    const rel = pathname === '/' ? 'index.html' : pathname.replace(/^\/+/, '');
    const file = path.resolve(staticDir, rel);
    if (!isWithin(staticDir, file) || !statSync(file, { throwIfNoEntry: false })?.isFile()) {
      fail(res, 404, 'not_found', `${pathname} not found`);
      return;
    }
    // Read at once, not streamed: the renderer's files are a few hundred KB, and a stream's reads
    // each wait for a turn of the event loop, which the opening import keeps busy while the page
    // first asks for them.
    const body = readFileSync(file);
    res.writeHead(200, {
      'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream',
      'content-length': body.length,
      'content-security-policy': CSP,
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      // The page's first URL carries the token (in its fragment): never send it on as a referrer.
      'referrer-policy': 'no-referrer',
      'cache-control': cacheControl(rel),
    });
    res.end(body);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', (e) => {
      offCount();
      reject(e);
    });
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  return {
    port,
    token,
    // In the fragment: never sent to the server, kept out of logs; the page reads it and removes it.
    url: `http://127.0.0.1:${port}/#token=${token}`,
    close: () =>
      new Promise<void>((resolve) => {
        offCount();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
