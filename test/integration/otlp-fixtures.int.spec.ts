import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ProofloopService } from '../../electron/service/service';
import { startOtlpReceiver, type OtlpReceiver } from '../../electron/otlp';
import { freshFolder, repoRoot } from './helpers/tmp';

// Real OTLP JSON documents from public repositories (test/fixtures/otlp/README.md), posted as they
// are: everything in them becomes an event, with its attributes, and nothing is dropped.

const fixture = (name: string) => readFileSync(path.join(repoRoot, 'test/fixtures/otlp', name));

describe('OTLP JSON recordings from public repositories', () => {
  const f = freshFolder();
  let svc: ProofloopService;
  let rx: OtlpReceiver;
  const post = async (signal: string, body: Buffer) => {
    const res = await fetch(`${rx.endpoint}/v1/${signal}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    return { status: res.status, body: (await res.json()) as unknown };
  };

  beforeAll(async () => {
    svc = new ProofloopService();
    await svc.openFolder(f.dir);
    rx = await startOtlpReceiver({ ledger: () => svc.ctx.ledger(), port: 0 });
  });
  afterAll(async () => {
    await rx?.close();
    svc?.closeFolder();
    f.cleanup();
  });

  it("opentelemetry-proto's examples/trace.json: a span of its own kind, ids read from upper-case hex", async () => {
    expect(await post('traces', fixture('proto-examples-trace.json'))).toEqual({ status: 200, body: {} });
    const events = svc.ctx.ledger().read('otlp-trace-5b8efff798038103d269b633813fc60c');
    expect(events.map((e) => e.kind)).toEqual(['otel_span']);
    const p = events[0]!.payload as { name: string; duration_ms: number; otel: Record<string, unknown> };
    expect(p.name).toBe("I'm a server span");
    expect(p.duration_ms).toBe(1000);
    expect(p.otel).toMatchObject({
      span_id: 'eee19b7ec3c1b174',
      parent_span_id: 'eee19b7ec3c1b173',
      span_kind: 2,
      attributes: { 'my.span.attr': 'some value' },
      scope: { name: 'my.library', version: '1.0.0' },
      resource: { 'service.name': 'my.service' },
    });
    // A span is an event when it ends: its time is the span's end.
    expect(events[0]!.at).toBe(new Date(1544712661000).toISOString());
  });

  it('examples/logs.json and events.json: every AnyValue form kept, the event under its own name', async () => {
    expect((await post('logs', fixture('proto-examples-logs.json'))).status).toBe(200);
    expect((await post('logs', fixture('proto-examples-events.json'))).status).toBe(200);
    const ledger = svc.ctx.ledger();
    // The log record names the example trace: it joins that trace's run.
    const log = ledger
      .read('otlp-trace-5b8efff798038103d269b633813fc60c')
      .find((e) => e.kind === 'otel_log')!;
    expect(log.payload).toMatchObject({ body: 'Example log record', severity: 'Information' });
    expect((log.payload.otel as { attributes: Record<string, unknown> }).attributes).toEqual({
      'string.attribute': 'some string',
      'boolean.attribute': true,
      'int.attribute': 10,
      'double.attribute': 637.704,
      'array.attribute': ['many', 'values'],
      'map.attribute': { 'some.map.key': 'some value' },
    });
    const runs = ledger.runs().filter((r) => r.format === 'otlp');
    const event = runs.flatMap((r) => ledger.read(r.run_id)).find((e) => e.kind === 'browser_page_view')!;
    expect(event.payload).toMatchObject({ event: 'browser.page_view' });
    expect((event.payload.body as Record<string, unknown>).type).toBe(0);
  });
});
