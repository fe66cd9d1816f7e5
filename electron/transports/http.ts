import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createReadStream, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { isMethodName, PUSH_NAMES } from '../../shared/api/contract';
import { err, type ErrorCode } from '../../shared/result';
import { isWithin } from '../fs/paths';
import { CSP } from './csp';
import type { ProofloopService } from '../service/service';

export interface WebServer {
  url: string;
  port: number;
  token: string;
  close(): Promise<void>;
}

const MAX_BODY = 4 << 20;
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
  '.map': 'application/json',
  '.ico': 'image/x-icon',
};

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
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

async function readBody(req: IncomingMessage): Promise<string> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new Error(`request body over ${MAX_BODY} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Web mode: the renderer in any browser, against the same service. Loopback only, a per-launch
 * token on every API call, and a Host check so a DNS-rebound page cannot reach it.
 */
export async function startWebServer(
  service: ProofloopService,
  opts: { port?: number; staticDir?: string | null; token?: string } = {},
): Promise<WebServer> {
  const token = opts.token ?? randomBytes(24).toString('base64url');
  const staticDir = opts.staticDir ? path.resolve(opts.staticDir) : null;
  let port = 0;

  const server = createServer((req, res) => {
    void handle(req, res).catch((e: Error) => {
      if (!res.headersSent) fail(res, 500, 'internal', e.message);
      else res.end();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const host = req.headers.host ?? '';
    if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`) {
      fail(res, 403, 'unauthorized', `Host "${host}" refused: web mode answers on 127.0.0.1:${port} only`);
      return;
    }
    const url = new URL(req.url ?? '/', `http://${host}`);
    if (url.pathname.startsWith('/api/')) {
      const given = (req.headers['x-proofloop-token'] as string | undefined) ?? url.searchParams.get('token');
      if (!tokenMatches(token, given)) {
        fail(res, 401, 'unauthorized', 'missing or wrong token: use the URL printed by `proofloop serve`');
        return;
      }
      if (url.pathname === '/api/events' && req.method === 'GET') return sse(req, res);
      const name = decodeURIComponent(url.pathname.slice('/api/'.length));
      if (req.method !== 'POST') {
        fail(res, 405, 'bad_args', 'API calls are POST /api/<method> with JSON arguments');
        return;
      }
      if (!isMethodName(name)) {
        fail(res, 404, 'bad_args', `unknown method "${name}"`);
        return;
      }
      let args: unknown;
      try {
        const body = await readBody(req);
        args = body.trim() === '' ? {} : JSON.parse(body);
      } catch (e) {
        fail(res, 400, 'bad_args', `body of ${name}: ${(e as Error).message}`);
        return;
      }
      const result = await service.call(name, args, 'renderer');
      send(res, result.ok ? 200 : result.error.code === 'internal' ? 500 : 400, result);
      return;
    }
    serveStatic(url.pathname, res);
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
    const rel = pathname === '/' ? 'index.html' : decodeURIComponent(pathname).replace(/^\/+/, '');
    const file = path.resolve(staticDir, rel);
    if (!isWithin(staticDir, file) || !existsSync(file) || !statSync(file).isFile()) {
      fail(res, 404, 'not_found', `${pathname} not found`);
      return;
    }
    res.writeHead(200, {
      'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream',
      'content-security-policy': CSP,
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-cache',
    });
    createReadStream(file).pipe(res);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  return {
    port,
    token,
    url: `http://127.0.0.1:${port}/?token=${token}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
