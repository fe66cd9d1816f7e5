import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ProofloopService } from '../../electron/service/service';
import { startOtlpReceiver, type OtlpReceiver } from '../../electron/otlp';
import { freshFolder, repoRoot } from './helpers/tmp';

// Real OTLP JSON documents from public repositories (test/fixtures/otlp/README.md), posted as they
// are: everything in them becomes an event, with its attributes, and nothing is dropped.

const fixture = (name: string) => readFileSync(path.join(repoRoot, 'test/fixtures/otlp', name));

/** A service on a fresh folder with a receiver in front of it, for the describe block it is called in. */
function receiving() {
  const f = freshFolder();
  const r = {} as { svc: ProofloopService; rx: OtlpReceiver };
  beforeAll(async () => {
    r.svc = new ProofloopService();
    await r.svc.openFolder(f.dir);
    r.rx = await startOtlpReceiver({ ledger: () => r.svc.ctx.ledger(), port: 0 });
  });
  afterAll(async () => {
    await r.rx?.close();
    r.svc?.closeFolder();
    f.cleanup();
  });
  const post = async (signal: string, body: Buffer) => {
    const res = await fetch(`${r.rx.endpoint}/v1/${signal}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    return { status: res.status, body: (await res.json()) as unknown };
  };
  return { ledger: () => r.svc.ctx.ledger(), post };
}

describe('OTLP JSON recordings from public repositories', () => {
  const { ledger, post } = receiving();

  it("opentelemetry-proto's examples/trace.json: a span of its own kind, ids read from upper-case hex", async () => {
    expect(await post('traces', fixture('proto-examples-trace.json'))).toEqual({ status: 200, body: {} });
    const events = ledger().read('otlp-trace-5b8efff798038103d269b633813fc60c');
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
    const l = ledger();
    // The log record names the example trace: it joins that trace's run.
    const log = l.read('otlp-trace-5b8efff798038103d269b633813fc60c').find((e) => e.kind === 'otel_log')!;
    expect(log.payload).toMatchObject({ body: 'Example log record', severity: 'Information' });
    expect((log.payload.otel as { attributes: Record<string, unknown> }).attributes).toEqual({
      'string.attribute': 'some string',
      'boolean.attribute': true,
      'int.attribute': 10,
      'double.attribute': 637.704,
      'array.attribute': ['many', 'values'],
      'map.attribute': { 'some.map.key': 'some value' },
    });
    const runs = l.runs().filter((r) => r.format === 'otlp');
    const event = runs.flatMap((r) => l.read(r.run_id)).find((e) => e.kind === 'browser_page_view')!;
    expect(event.payload).toMatchObject({ event: 'browser.page_view' });
    expect((event.payload.body as Record<string, unknown>).type).toBe(0);
  });
});

// What GenAI instrumentations put on the wire, captured from the libraries themselves (OpenLLMetry's
// and OpenInference's OpenAI instrumentations over the Python SDK, against a local stand-in for the
// model API) and written as OTLP JSON by a plain receiver: enum fields spelled by name
// ("SPAN_KIND_CLIENT", "STATUS_CODE_OK"), as protobuf's JSON mapping writes them.
describe('OTLP JSON captured from GenAI instrumentations', () => {
  const { ledger, post: postAs } = receiving();
  interface Attr {
    key: string;
  }
  interface Span {
    traceId: string;
    spanId: string;
    name: string;
    attributes: Attr[];
  }
  /** The fixture's spans as the file has them, to hold the stored events against. */
  const spansOf = (name: string): Span[] =>
    (
      JSON.parse(fixture(name).toString()) as {
        resourceSpans: { scopeSpans: { spans: Span[] }[] }[];
      }
    ).resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
  const post = (name: string) => postAs('traces', fixture(name));
  type Otel = {
    span_id: string;
    span_kind: number;
    status: { code: number };
    mapped_by: string;
    attributes: Record<string, unknown>;
    scope: { name: string; version?: string };
  };

  it("OpenLLMetry 0.62.3: the chat span proposes the model's tool call, the workflow span is kept as a span", async () => {
    const file = 'openllmetry-openai-0.62.3.json';
    expect(await post(file)).toEqual({ status: 200, body: {} });
    const spans = spansOf(file);
    const events = ledger().read(`otlp-trace-${spans[0]!.traceId}`);
    expect(events.map((e) => e.kind)).toEqual(['model_proposed', 'otel_span']);
    const [chat, workflow] = events.map((e) => e.payload as Record<string, unknown> & { otel: Otel });
    expect(chat).toMatchObject({
      tool: 'lookup_order',
      call_id: 'call_9RtYbK2mXqLp',
      args: { order_id: 'A-1187' },
      model: 'gpt-4o-mini-2024-07-18',
      usage: { input_tokens: 412, output_tokens: 27 },
    });
    expect(chat!.otel).toMatchObject({ mapped_by: 'genai', span_kind: 3, span_id: spans[0]!.spanId });
    expect(workflow!.otel).toMatchObject({ mapped_by: 'fallback', span_kind: 1, span_id: spans[1]!.spanId });
    // Every attribute the library set is kept, under its own name.
    expect(Object.keys(chat!.otel.attributes).sort()).toEqual(spans[0]!.attributes.map((a) => a.key).sort());
    expect(Object.keys(workflow!.otel.attributes).sort()).toEqual(
      spans[1]!.attributes.map((a) => a.key).sort(),
    );
  });

  it('OpenInference openai 0.1.58: an LLM span with flattened messages, its status read by name', async () => {
    const file = 'openinference-openai-0.1.58.json';
    expect(await post(file)).toEqual({ status: 200, body: {} });
    const [span] = spansOf(file);
    const events = ledger().read(`otlp-trace-${span!.traceId}`);
    expect(events.map((e) => e.kind)).toEqual(['model_proposed']);
    const p = events[0]!.payload as Record<string, unknown> & { otel: Otel };
    expect(p).toMatchObject({
      tool: 'lookup_order',
      call_id: 'call_9RtYbK2mXqLp',
      args: { order_id: 'A-1187' },
      model: 'gpt-4o-mini-2024-07-18',
    });
    expect(p.input_messages).toHaveLength(2);
    expect(p.otel).toMatchObject({
      mapped_by: 'openinference',
      span_kind: 1,
      status: { code: 1 },
      scope: { name: 'openinference.instrumentation.openai', version: '0.1.58' },
    });
    expect(Object.keys(p.otel.attributes).sort()).toEqual(span!.attributes.map((a) => a.key).sort());
  });
});
