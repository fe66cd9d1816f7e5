import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync } from 'node:fs';
import { request } from 'node:http';
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
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

describe('transports refuse what they must', () => {
  const f = freshFolder();
  const outside = freshFolder();
  let service: ProofloopService;
  let server: WebServer;
  const auth = () => ({
    'x-proofloop-token': server.token,
    host: `127.0.0.1:${server.port}`,
    'content-type': 'application/json',
  });

  beforeAll(async () => {
    const ledger = Ledger.open(f.dir);
    const w = ledger.writer('r1');
    w.append('run_started', { task_id: 't', goal: 'g', agent: { name: 'sim' } });
    w.close();
    ledger.close();
    mkdirSync(path.join(outside.dir, 'runs'));
    service = new ProofloopService();
    await service.openFolder(f.dir);
    server = await startWebServer(service, { staticDir: null });
  });
  afterAll(async () => {
    await server.close();
    service.closeFolder();
    f.cleanup();
    outside.cleanup();
  });

  it('HTTP answers a good call', async () => {
    const r = await raw(server, { path: '/api/runs.list', headers: auth() });
    expect(r.status).toBe(200);
    expect((r.body.value as { run_id: string }[]).map((x) => x.run_id)).toEqual(['r1']);
  });

  it('HTTP refuses a missing or wrong token', async () => {
    const none = await raw(server, { path: '/api/runs.list', headers: { host: `127.0.0.1:${server.port}` } });
    expect(none.status).toBe(401);
    expect(none.body.error?.message).toMatch(/missing or wrong token/);
    const wrong = await raw(server, {
      path: '/api/runs.list',
      headers: { ...auth(), 'x-proofloop-token': 'x'.repeat(32) },
    });
    expect(wrong.status).toBe(401);
  });

  it('HTTP refuses a foreign Host header (DNS rebinding)', async () => {
    const r = await raw(server, {
      path: '/api/runs.list',
      headers: { ...auth(), host: `evil.example:${server.port}` },
    });
    expect(r.status).toBe(403);
    expect(r.body.error?.message).toMatch(/Host "evil.example:\d+" refused/);
  });

  it('HTTP refuses bad arguments with the field named', async () => {
    const r = await raw(server, {
      path: '/api/events.read',
      headers: auth(),
      body: JSON.stringify({ run_id: 'r1', from: -3 }),
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'bad_args' });
    expect(r.body.error?.message).toMatch(/^events\.read: from:/);
    const notJson = await raw(server, { path: '/api/events.read', headers: auth(), body: '{oops' });
    expect(notJson.body.error?.message).toMatch(/body of events\.read/);
    const unknown = await raw(server, { path: '/api/fs.readAnything', headers: auth(), body: '{}' });
    expect(unknown.status).toBe(404);
  });

  it('HTTP refuses opening a folder the user did not choose', async () => {
    const r = await raw(server, {
      path: '/api/folder.open',
      headers: auth(),
      body: JSON.stringify({ folder: path.join(outside.dir, 'runs') }),
    });
    expect(r.body.error).toMatchObject({ code: 'forbidden_path' });
    const etc = await raw(server, {
      path: '/api/folder.open',
      headers: auth(),
      body: JSON.stringify({ folder: '/etc' }),
    });
    expect(etc.body.error).toMatchObject({ code: 'forbidden_path' });
    // The folder opened by the user stays allowed.
    const ok = await raw(server, {
      path: '/api/folder.open',
      headers: auth(),
      body: JSON.stringify({ folder: f.dir }),
    });
    expect(ok.body.ok).toBe(true);
  });

  it('HTTP does not serve files outside the renderer folder', async () => {
    const r = await raw(server, {
      path: '/../../etc/passwd',
      method: 'GET',
      headers: { host: `127.0.0.1:${server.port}` },
    });
    expect(r.status).toBe(404);
  });

  it('IPC refuses an untrusted sender, bad arguments and a folder outside', async () => {
    const untrusted = await ipcCall(service, false, 'runs.list', {});
    expect(untrusted).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    const bad = await ipcCall(service, true, 'events.read', { run_id: 42 });
    expect(bad).toMatchObject({ ok: false, error: { code: 'bad_args' } });
    const outsideFolder = await ipcCall(service, true, 'folder.open', {
      folder: path.join(outside.dir, 'runs'),
    });
    expect(outsideFolder).toMatchObject({ ok: false, error: { code: 'forbidden_path' } });
    const good = await ipcCall(service, true, 'run.get', { run_id: 'r1' });
    expect(good).toMatchObject({ ok: true });
  });
});

describe("web mode's push count: what a page's first push connection may have missed", () => {
  const f = freshFolder();
  let service: ProofloopService;
  let server: WebServer;

  beforeAll(async () => {
    service = new ProofloopService();
    await service.openFolder(f.dir);
    server = await startWebServer(service, { staticDir: null });
  });
  afterAll(async () => {
    await server.close();
    service.closeFolder();
    f.cleanup();
  });

  const count = async (method: string) => {
    const res = await fetch(`http://127.0.0.1:${server.port}/api/${method}`, {
      method: 'POST',
      headers: { 'x-proofloop-token': server.token, 'content-type': 'application/json' },
      body: '{}',
    });
    await res.json();
    return res.headers.get('x-proofloop-pushes');
  };
  /** The push stream's first message, then the stream closed. */
  const hello = async () => {
    const res = await fetch(`http://127.0.0.1:${server.port}/api/events?token=${server.token}`);
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
    service.ctx.emit('runs.changed', { run_ids: [] });
    service.ctx.emit('folder.changed', { folder: f.dir });
    const [server_, n] = first!.split('.');
    const after = `${server_}.${Number(n) + 2}`;
    expect(await hello()).toBe(after);
    expect(await count('folder.current')).toBe(after);
  });

  it('a failed call carries the count too; another server counts under another name', async () => {
    const res = await fetch(`http://127.0.0.1:${server.port}/api/events.read`, {
      method: 'POST',
      headers: { 'x-proofloop-token': server.token, 'content-type': 'application/json' },
      body: '{"run_id":42}',
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('x-proofloop-pushes')).toBe(await count('runs.list'));
    const other = await startWebServer(service, { staticDir: null });
    try {
      const a = (await count('runs.list'))!.split('.')[0];
      const b = await fetch(`http://127.0.0.1:${other.port}/api/runs.list`, {
        method: 'POST',
        headers: { 'x-proofloop-token': other.token, 'content-type': 'application/json' },
        body: '{}',
      });
      expect(b.headers.get('x-proofloop-pushes')!.split('.')[0]).not.toBe(a);
    } finally {
      await other.close();
    }
  });
});
