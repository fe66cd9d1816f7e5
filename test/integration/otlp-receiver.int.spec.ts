import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'node:http';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { ProofloopService } from '../../electron/service/service';
import { startOtlpReceiver, type OtlpReceiver } from '../../electron/otlp';
import { requestTypes, responseTypes, StatusType } from '../../electron/otlp/decode';
import { cli, freshFolder } from './helpers/tmp';

interface Answer {
  status: number;
  type: string;
  body: Buffer;
  headers: Record<string, string | string[] | undefined>;
}

/** One raw HTTP request; `chunks` are written one by one until the answer comes (a body the server refuses early). */
function post(
  port: number,
  opts: {
    path?: string;
    method?: string;
    headers?: Record<string, string>;
    body?: Buffer | string;
    chunks?: () => Buffer | null;
  },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: opts.path ?? '/v1/traces',
        method: opts.method ?? 'POST',
        headers: { host: `127.0.0.1:${port}`, ...opts.headers },
      },
      (res) => {
        answered = true;
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            type: String(res.headers['content-type'] ?? ''),
            body: Buffer.concat(parts),
            headers: res.headers,
          }),
        );
      },
    );
    // A server that refuses a body closes the connection while it is still being sent.
    req.on('error', (e) => (answered ? undefined : reject(e)));
    if (opts.chunks) {
      const pump = () => {
        if (answered) return req.destroy();
        const c = opts.chunks!();
        if (c === null) return req.end();
        if (req.write(c)) setImmediate(pump);
        else req.once('drain', pump);
      };
      pump();
    } else req.end(opts.body);
  });
}

const span = (over: Record<string, unknown> = {}) => ({
  traceId: '5b8efff798038103d269b633813fc60c',
  spanId: 'eee19b7ec3c1b174',
  name: 'execute_tool grep',
  startTimeUnixNano: '1700000000000000000',
  endTimeUnixNano: 1700000000250000000,
  attributes: [
    { key: 'gen_ai.operation.name', value: { stringValue: 'execute_tool' } },
    { key: 'gen_ai.tool.name', value: { stringValue: 'grep' } },
    { key: 'gen_ai.conversation.id', value: { stringValue: 'c-refusals' } },
  ],
  ...over,
});
const traces = (spans: unknown[]) => ({
  resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ scope: { name: 't' }, spans }] }],
});
const json = { 'content-type': 'application/json' };
const rpcMessage = (a: Answer): string =>
  a.type.startsWith('application/x-protobuf')
    ? (StatusType.toObject(StatusType.decode(a.body)).message as string)
    : (JSON.parse(a.body.toString('utf8')) as { message: string }).message;

describe('the OTLP receiver over a real socket', () => {
  const f = freshFolder();
  let svc: ProofloopService;
  let rx: OtlpReceiver;
  let secured: OtlpReceiver;
  const eventCount = () =>
    svc.ctx
      .ledger()
      .runs()
      .reduce((n, r) => n + r.event_count, 0);

  beforeAll(async () => {
    svc = new ProofloopService();
    await svc.openFolder(f.dir);
    rx = await startOtlpReceiver({
      ledger: () => svc.ctx.ledger(),
      port: 0,
      maxBodyBytes: 4 << 20,
      maxInflatedBytes: 16 << 20,
    });
    secured = await startOtlpReceiver({ ledger: () => svc.ctx.ledger(), port: 0, token: 'the-token' });
  });
  afterAll(async () => {
    await rx?.close();
    await secured?.close();
    svc?.closeFolder();
    f.cleanup();
  });

  describe('refuses, with a clear status and message, and appends nothing', () => {
    it('a content type other than the two OTLP ones (what a web page could post without a preflight)', async () => {
      const a = await post(rx.port, {
        headers: { 'content-type': 'text/plain' },
        body: JSON.stringify(traces([span()])),
      });
      expect(a.status).toBe(415);
      expect(rpcMessage(a)).toMatch(/Content-Type "text\/plain" is not accepted/);
      expect(a.headers['access-control-allow-origin']).toBeUndefined();
      const pre = await post(rx.port, {
        method: 'OPTIONS',
        headers: { origin: 'http://evil.example', 'access-control-request-method': 'POST' },
      });
      expect(pre.status).toBe(405);
      expect(pre.headers['access-control-allow-origin']).toBeUndefined();
      expect(eventCount()).toBe(0);
    });

    it('a foreign Host (DNS rebinding)', async () => {
      const a = await post(rx.port, {
        headers: { ...json, host: `evil.example:${rx.port}` },
        body: JSON.stringify(traces([span()])),
      });
      expect(a.status).toBe(403);
      expect(rpcMessage(a)).toMatch(/Host "evil.example:\d+" is not this receiver/);
      expect(eventCount()).toBe(0);
    });

    it('garbage protobuf, and JSON whose ids are neither hex nor base64 (naming the field)', async () => {
      const a = await post(rx.port, {
        headers: { 'content-type': 'application/x-protobuf' },
        body: Buffer.from('garbage protobuf, not OTLP at all \xff\xff', 'latin1'),
      });
      expect(a.status).toBe(400);
      expect(a.type).toBe('application/x-protobuf');
      expect(rpcMessage(a)).toMatch(/not an OTLP ExportTraceServiceRequest in protobuf/);
      const b = await post(rx.port, {
        headers: json,
        body: JSON.stringify(traces([span({ traceId: 'abc123' })])),
      });
      expect(b.status).toBe(400);
      expect(rpcMessage(b)).toMatch(
        /resourceSpans\[0\]\.scopeSpans\[0\]\.spans\[0\]\.traceId: "abc123" is not a 16-byte id/,
      );
      expect(eventCount()).toBe(0);
    });

    // Tried again on a reset: the receiver answers 413 and closes, and the bytes this sender had
    // already written reach the closed socket, which answers them with a reset; now and then
    // (1 of 4 runs of npm test on 12-02) that reset overtakes the answer and the write fails with
    // EPIPE. A lingering close in the receiver would end it; Node's server does not linger, and
    // reading on after the answer did not work through its parser (12-02, see that day's note).
    it('a 100 MB body, declared or chunked, before it is read whole', { retry: 2 }, async () => {
      const mb = Buffer.alloc(1 << 20, 0x61);
      let sent = 0;
      const declared = await post(rx.port, {
        headers: { ...json, 'content-length': String(100 << 20) },
        chunks: () => (sent++ < 100 ? mb : null),
      });
      expect(declared.status).toBe(413);
      expect(rpcMessage(declared)).toMatch(/104857600 bytes is over the 4194304-byte limit/);
      expect(sent).toBeLessThan(100); // answered long before the 100 MB were sent
      sent = 0;
      const chunked = await post(rx.port, { headers: json, chunks: () => (sent++ < 100 ? mb : null) });
      expect(chunked.status).toBe(413);
      expect(rpcMessage(chunked)).toMatch(/over the 4194304-byte limit/);
      expect(sent).toBeLessThan(100);
      expect(eventCount()).toBe(0);
    });

    it('a gzip bomb (a small body that inflates past the bound)', async () => {
      const bomb = gzipSync(Buffer.alloc(64 << 20, 0x20), { level: 9 });
      expect(bomb.length).toBeLessThan(256 << 10);
      const a = await post(rx.port, { headers: { ...json, 'content-encoding': 'gzip' }, body: bomb });
      expect(a.status).toBe(413);
      expect(rpcMessage(a)).toMatch(/gzip body inflates past the 16777216-byte limit/);
      expect(eventCount()).toBe(0);
    });

    it('a missing or wrong token when one is set', async () => {
      const body = JSON.stringify(traces([span()]));
      const none = await post(secured.port, { headers: json, body });
      expect(none.status).toBe(401);
      expect(rpcMessage(none)).toMatch(/missing or wrong bearer token/);
      const wrong = await post(secured.port, { headers: { ...json, authorization: 'Bearer nope' }, body });
      expect(wrong.status).toBe(401);
      expect(eventCount()).toBe(0);
      const right = await post(secured.port, {
        headers: { ...json, authorization: 'Bearer the-token' },
        body,
      });
      expect(right.status).toBe(200);
      expect(eventCount()).toBe(2);
    });
  });

  it('accepts gzip, base64 ids, 64-bit times as numbers or strings, and answers an empty export response', async () => {
    const before = eventCount();
    const b64 = span({
      traceId: Buffer.from('0af7651916cd43dd8448eb211c80319c', 'hex').toString('base64'),
      spanId: Buffer.from('b7ad6b7169203331', 'hex').toString('base64'),
      startTimeUnixNano: 1700000001000000000,
    });
    const a = await post(rx.port, {
      headers: { ...json, 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify(traces([b64]))),
    });
    expect(a.status).toBe(200);
    expect(JSON.parse(a.body.toString())).toEqual({});
    const run = svc.ctx.ledger().read('otlp-c-refusals');
    const last = run.at(-1)!;
    expect((last.payload.otel as { trace_id: string }).trace_id).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(eventCount()).toBe(before + 2);
    // protobuf in, protobuf out; metrics are accepted and discarded.
    const m = await post(rx.port, {
      path: '/v1/metrics',
      headers: { 'content-type': 'application/x-protobuf' },
      body: Buffer.alloc(0),
    });
    expect(m.status).toBe(200);
    expect(responseTypes.metrics.toObject(responseTypes.metrics.decode(m.body))).toEqual({});
    expect(eventCount()).toBe(before + 2);
  });

  it('answers partial success for the records of a run another process writes, and takes the rest', async () => {
    // Another writer holds the conversation's run: its records are refused, another run's are kept.
    const ledger = svc.ctx.ledger();
    const held = ledger.writer('otlp-held', {
      create: { source: 'imported', format: 'otlp' },
      live: 'otlp',
      label: 'someone else',
    });
    const T = requestTypes.traces;
    const body = Buffer.from(
      T.encode(
        T.fromObject({
          resourceSpans: [
            {
              scopeSpans: [
                {
                  spans: [
                    {
                      ...span(),
                      traceId: Buffer.alloc(16, 1),
                      spanId: Buffer.alloc(8, 1),
                      endTimeUnixNano: '1700000000250000000',
                      attributes: [{ key: 'gen_ai.conversation.id', value: { stringValue: 'held' } }],
                    },
                    {
                      ...span(),
                      traceId: Buffer.alloc(16, 2),
                      spanId: Buffer.alloc(8, 2),
                      endTimeUnixNano: '1700000000250000000',
                      attributes: [{ key: 'gen_ai.conversation.id', value: { stringValue: 'free' } }],
                    },
                  ],
                },
              ],
            },
          ],
        }),
      ).finish(),
    );
    // The held writer is this process's own, so the receiver would free it as a leftover: label it as another's.
    ledger.db.prepare('UPDATE writers SET pid = 1 WHERE run_id = ?').run('otlp-held');
    const a = await post(rx.port, { headers: { 'content-type': 'application/x-protobuf' }, body });
    held.close();
    expect(a.status).toBe(200);
    const r = responseTypes.traces.toObject(responseTypes.traces.decode(a.body), { longs: Number }) as {
      partialSuccess?: { rejectedSpans: number; errorMessage: string };
    };
    expect(r.partialSuccess?.rejectedSpans).toBe(1);
    expect(r.partialSuccess?.errorMessage).toMatch(/run otlp-held already has a writer/);
    expect(ledger.run('otlp-held')?.event_count).toBe(0);
    expect(ledger.run('otlp-free')?.event_count).toBe(2); // tool_invoked and tool_returned
  });
});

describe('export-otlp, and back: a runner run received again is the same run, event for event', () => {
  const a = freshFolder();
  const b = freshFolder();
  let svc: ProofloopService;
  let rx: OtlpReceiver;
  let runId = '';

  beforeAll(async () => {
    const r = await cli([
      '--folder',
      a.dir,
      '--json',
      'run',
      'fix-discount',
      '--variant',
      'hasty',
      '--seed',
      '3',
    ]);
    expect(r.code, r.stderr).toBeLessThanOrEqual(1);
    runId = (JSON.parse(r.stdout) as { run_id: string }).run_id;
    svc = new ProofloopService();
    await svc.openFolder(b.dir);
    rx = await startOtlpReceiver({ ledger: () => svc.ctx.ledger(), port: 0 });
  }, 120_000);
  afterAll(async () => {
    await rx?.close();
    svc?.closeFolder();
    a.cleanup();
    b.cleanup();
  });

  const original = async () => {
    const s = new ProofloopService();
    await s.openFolder(a.dir);
    try {
      return s.ctx.ledger().read(runId);
    } finally {
      s.closeFolder();
    }
  };
  const sameEvents = (
    got: { kind: string; v: number; payload: Record<string, unknown> }[],
    want: typeof got,
  ) => {
    const strip = (e: (typeof got)[number]) => {
      const { otel: _otel, ...payload } = e.payload;
      return { kind: e.kind, v: e.v, payload };
    };
    expect(got.map(strip)).toEqual(want.map(strip));
  };

  it('over --endpoint (protobuf, in 512-span requests)', async () => {
    const r = await cli(['--folder', a.dir, '--json', 'export-otlp', runId, '--endpoint', rx.endpoint]);
    expect(r.code, r.stderr).toBe(0);
    const want = await original();
    expect(want.length).toBeGreaterThan(10);
    expect(JSON.parse(r.stdout)).toMatchObject({ spans: want.length, rejected: 0 });
    const got = svc.ctx.ledger().read(`otlp-${runId}`);
    sameEvents(got, want);
    expect(svc.ctx.ledger().run(`otlp-${runId}`)?.status).toBe(
      want.at(-1)!.kind === 'run_failed' ? 'failed' : 'completed',
    );
  });

  it('through --out file.json, posted as OTLP JSON', async () => {
    const out = path.join(a.dir, 'run.otlp.json');
    const r = await cli(['--folder', a.dir, 'export-otlp', runId, '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    // The GenAI view of the same spans: agent, inference and tool spans a viewer understands.
    const doc = JSON.parse(readFileSync(out, 'utf8')) as {
      resourceSpans: { scopeSpans: { spans: { name: string; parentSpanId?: string }[] }[] }[];
    };
    const spans = doc.resourceSpans[0]!.scopeSpans[0]!.spans;
    expect(spans[0]!.name).toMatch(/^invoke_agent /);
    expect(spans[0]!.parentSpanId).toBeUndefined();
    expect(spans.some((s) => s.name === 'chat')).toBe(true);
    expect(spans.some((s) => s.name.startsWith('execute_tool '))).toBe(true);
    const b2 = freshFolder();
    const s2 = new ProofloopService();
    await s2.openFolder(b2.dir);
    const rx2 = await startOtlpReceiver({ ledger: () => s2.ctx.ledger(), port: 0 });
    try {
      const ans = await post(rx2.port, { headers: json, body: readFileSync(out) });
      expect(ans.status).toBe(200);
      sameEvents(s2.ctx.ledger().read(`otlp-${runId}`), await original());
    } finally {
      await rx2.close();
      s2.closeFolder();
      b2.cleanup();
    }
  });
});
