import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import { request, type IncomingHttpHeaders } from 'node:http';
import path from 'node:path';
import { ProofloopService } from '../../electron/service/service';
import { startWebServer, type WebServer } from '../../electron/transports/http';
import { Ledger } from '../../electron/ledger';
import { freshFolder } from './helpers/tmp';
import { handleIpcCall } from '../../electron/transports/ipc-call';

// ipc.ts registers `handleIpcCall` for every method with the real ipcMain (Electron e2e covers that);
// the sender check and argument validation are that one function, exercised here.
const ipcCall = (service: ProofloopService, trusted: boolean, method: string, args: unknown) =>
  handleIpcCall(service, () => trusted, method, {}, args);

function raw(
  server: WebServer,
  opts: { path: string; method?: string; headers?: Record<string, string>; body?: string },
) {
  return new Promise<{
    status: number;
    headers: IncomingHttpHeaders;
    body: { ok: boolean; value?: unknown; error?: { code: string; message: string } };
  }>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: server.port,
        path: opts.path,
        method: opts.method ?? 'POST',
        headers: opts.headers,
      },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(text) }),
        );
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** The headers of a good call to `server`. */
const authOf = (server: WebServer) => ({
  'x-proofloop-token': server.token,
  host: `127.0.0.1:${server.port}`,
  'content-type': 'application/json',
});

/** For a describe block: a service on a fresh folder (`prepare` fills it first) and its web server. */
function webOnFolder(prepare: (dir: string) => void = () => undefined) {
  const f = freshFolder();
  const web = { dir: f.dir } as { dir: string; service: ProofloopService; server: WebServer };
  beforeAll(async () => {
    prepare(f.dir);
    web.service = new ProofloopService();
    await web.service.openFolder(f.dir);
    web.server = await startWebServer(web.service, { staticDir: null });
  });
  afterAll(async () => {
    await web.server.close();
    web.service.closeFolder();
    f.cleanup();
  });
  return web;
}

describe('transports refuse what they must', () => {
  const outside = freshFolder();
  const web = webOnFolder((dir) => {
    const ledger = Ledger.open(dir);
    const w = ledger.writer('r1');
    w.append('run_started', { task_id: 't', goal: 'g', agent: { name: 'sim' } });
    w.close();
    ledger.close();
    mkdirSync(path.join(outside.dir, 'runs'));
  });
  const auth = () => authOf(web.server);
  afterAll(() => outside.cleanup());

  it('HTTP answers a good call', async () => {
    const r = await raw(web.server, { path: '/api/runs.list', headers: auth() });
    expect(r.status).toBe(200);
    expect((r.body.value as { run_id: string }[]).map((x) => x.run_id)).toEqual(['r1']);
  });

  it('HTTP refuses a missing or wrong token', async () => {
    const none = await raw(web.server, {
      path: '/api/runs.list',
      headers: { host: `127.0.0.1:${web.server.port}` },
    });
    expect(none.status).toBe(401);
    expect(none.body.error?.message).toMatch(/missing or wrong token/);
    const wrong = await raw(web.server, {
      path: '/api/runs.list',
      headers: { ...auth(), 'x-proofloop-token': 'x'.repeat(32) },
    });
    expect(wrong.status).toBe(401);
  });

  it('HTTP refuses a foreign Host header (DNS rebinding)', async () => {
    const r = await raw(web.server, {
      path: '/api/runs.list',
      headers: { ...auth(), host: `evil.example:${web.server.port}` },
    });
    expect(r.status).toBe(403);
    expect(r.body.error?.message).toMatch(/Host "evil.example:\d+" refused/);
  });

  it('HTTP refuses bad arguments with the field named', async () => {
    const r = await raw(web.server, {
      path: '/api/events.read',
      headers: auth(),
      body: JSON.stringify({ run_id: 'r1', from: -3 }),
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'bad_args' });
    expect(r.body.error?.message).toMatch(/^events\.read: from:/);
    const notJson = await raw(web.server, { path: '/api/events.read', headers: auth(), body: '{oops' });
    expect(notJson.body.error?.message).toMatch(/body of events\.read/);
    const unknown = await raw(web.server, { path: '/api/fs.readAnything', headers: auth(), body: '{}' });
    expect(unknown.status).toBe(404);
  });

  it('HTTP refuses opening a folder the user did not choose', async () => {
    const r = await raw(web.server, {
      path: '/api/folder.open',
      headers: auth(),
      body: JSON.stringify({ folder: path.join(outside.dir, 'runs') }),
    });
    expect(r.body.error).toMatchObject({ code: 'forbidden_path' });
    const etc = await raw(web.server, {
      path: '/api/folder.open',
      headers: auth(),
      body: JSON.stringify({ folder: '/etc' }),
    });
    expect(etc.body.error).toMatchObject({ code: 'forbidden_path' });
    // The folder opened by the user stays allowed.
    const ok = await raw(web.server, {
      path: '/api/folder.open',
      headers: auth(),
      body: JSON.stringify({ folder: web.dir }),
    });
    expect(ok.body.ok).toBe(true);
  });

  it('HTTP does not serve files outside the renderer folder', async () => {
    const r = await raw(web.server, {
      path: '/../../etc/passwd',
      method: 'GET',
      headers: { host: `127.0.0.1:${web.server.port}` },
    });
    expect(r.status).toBe(404);
  });

  it('IPC refuses an untrusted sender, bad arguments and a folder outside', async () => {
    const untrusted = await ipcCall(web.service, false, 'runs.list', {});
    expect(untrusted).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    const bad = await ipcCall(web.service, true, 'events.read', { run_id: 42 });
    expect(bad).toMatchObject({ ok: false, error: { code: 'bad_args' } });
    const outsideFolder = await ipcCall(web.service, true, 'folder.open', {
      folder: path.join(outside.dir, 'runs'),
    });
    expect(outsideFolder).toMatchObject({ ok: false, error: { code: 'forbidden_path' } });
    const good = await ipcCall(web.service, true, 'run.get', { run_id: 'r1' });
    expect(good).toMatchObject({ ok: true });
  });
});

describe("web mode's push count: what a page's first push connection may have missed", () => {
  const web = webOnFolder();

  /** The count in an answer of `server` (by default the block's) to `method`. */
  const count = async (method: string, body = '{}', server = web.server) =>
    (await raw(server, { path: `/api/${method}`, headers: authOf(server), body })).headers[
      'x-proofloop-pushes'
    ];
  /** The push stream's first message, then the stream closed. */
  const hello = async () => {
    const res = await fetch(`http://127.0.0.1:${web.server.port}/api/events?token=${web.server.token}`);
    const reader = res.body!.getReader();
    let text = '';
    while (!/event: hello\ndata: .*\n\n/.test(text)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the stream ended before its hello: ${text}`);
      text += new TextDecoder().decode(value);
    }
    await reader.cancel();
    return (JSON.parse(/event: hello\ndata: (.*)\n\n/.exec(text)![1]!) as { pushes: string }).pushes;
  };

  it('a call’s answer and the stream’s hello carry the same count until a push goes out, then both the next', async () => {
    const first = await count('runs.list');
    expect(first).toMatch(/^[\w-]+\.\d+$/);
    expect(await hello()).toBe(first);
    web.service.ctx.emit('runs.changed', { run_ids: [] });
    web.service.ctx.emit('folder.changed', { folder: web.dir });
    const [server_, n] = (first as string).split('.');
    const after = `${server_}.${Number(n) + 2}`;
    expect(await hello()).toBe(after);
    expect(await count('folder.current')).toBe(after);
  });

  it('a failed call carries the count too; another server counts under another name', async () => {
    const failed = await raw(web.server, {
      path: '/api/events.read',
      headers: authOf(web.server),
      body: '{"run_id":42}',
    });
    expect(failed.status).toBe(400);
    expect(failed.headers['x-proofloop-pushes']).toBe(await count('runs.list'));
    const other = await startWebServer(web.service, { staticDir: null });
    try {
      const a = ((await count('runs.list')) as string).split('.')[0];
      expect(((await count('runs.list', '{}', other)) as string).split('.')[0]).not.toBe(a);
    } finally {
      await other.close();
    }
  });
});

describe('web mode serves the page fresh and its hashed assets for keeps', () => {
  const f = freshFolder();
  const service = new ProofloopService();
  let server: WebServer;
  beforeAll(async () => {
    mkdirSync(path.join(f.dir, 'assets'));
    writeFileSync(path.join(f.dir, 'index.html'), '<!doctype html><title>p</title>');
    writeFileSync(path.join(f.dir, 'assets', 'boot-BPtzdFo-.js'), 'export {};');
    writeFileSync(path.join(f.dir, 'assets', 'index-Dbsip7FP.css'), 'body{}');
    writeFileSync(path.join(f.dir, 'assets', 'boot-BPtzdFo-.js.map'), '{}');
    writeFileSync(path.join(f.dir, 'assets', 'logo.js'), 'export {};');
    server = await startWebServer(service, { staticDir: f.dir });
  });
  afterAll(async () => {
    await server.close();
    f.cleanup();
  });

  it.each([
    ['/', 'no-cache'],
    ['/index.html', 'no-cache'],
    ['/assets/boot-BPtzdFo-.js', 'public, max-age=31536000, immutable'],
    ['/assets/index-Dbsip7FP.css', 'public, max-age=31536000, immutable'],
    // Not a build's hashed name: asked again each time.
    ['/assets/boot-BPtzdFo-.js.map', 'no-cache'],
    ['/assets/logo.js', 'no-cache'],
  ])('%s: %s', async (p, expected) => {
    const res = await fetch(`http://127.0.0.1:${server.port}${p}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe(expected);
  });
});
