import { createHash } from 'node:crypto';
import { canonicalJson } from '../../shared/protocol';
import { dict } from '../../shared/dict';
import { ProofloopError } from '../../shared/result';
import type { LedgerReader, StoredEvent } from '../ledger';
import { requestTypes, responseTypes, StatusType } from './decode';

/**
 * `proofloop export-otlp`: ProofLoop runs as OTLP traces in the OTel GenAI conventions, for Phoenix,
 * Jaeger, Langfuse or any collector. A run is one trace; its run_started is the root
 * `invoke_agent` span; every other event is one span under it, named and attributed as GenAI does
 * where there is a GenAI name for it (`chat` for model_proposed / model_responded, `execute_tool`
 * for tool_invoked, lasting until its tool_returned, which sits inside it; judge verdicts carry a
 * `gen_ai.evaluation.result` event) and `proofloop.<kind>` where there is none. Every span also
 * carries its event as `proofloop.kind` / `proofloop.v` / `proofloop.payload`, which the receiver
 * restores first (map-proofloop.ts): a run sent and received back is the same run, event for event.
 * Spans are listed in seq order, the order the receiver appends them in.
 *
 * Logs are not written: a run's decisions are spans like its other events, because two signals
 * are two requests, and a receiver appends in the order requests arrive.
 */

type KV = { key: string; value: Record<string, unknown> };

function anyValue(v: unknown): Record<string, unknown> {
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  if (typeof v === 'number') return Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v };
  return { stringValue: JSON.stringify(v) };
}

function kvs(attrs: Record<string, unknown>): KV[] {
  return Object.entries(attrs)
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([key, v]) => ({ key, value: anyValue(v) }));
}

const hex = (s: string, chars: number): string =>
  createHash('sha256').update(s).digest('hex').slice(0, chars);

function nsOf(at: string): string {
  const ms = Date.parse(at);
  return Number.isNaN(ms) ? '0' : (BigInt(ms) * 1_000_000n).toString();
}

const plusMs = (ns: string, ms: number): string => (BigInt(ns) + BigInt(Math.round(ms * 1e6))).toString();

interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: KV[];
  events?: { name: string; timeUnixNano: string; attributes: KV[] }[];
  status?: { code: number; message?: string };
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The GenAI name and attributes of one event, beside its proofloop.* attributes. */
function genai(
  e: StoredEvent,
  returned: Map<string, StoredEvent>,
): { name: string; attrs: Record<string, unknown>; durationMs?: number; error?: string } {
  const p = e.payload;
  const callId = str(p.call_id);
  switch (e.kind) {
    case 'run_started': {
      const agent = (p.agent ?? {}) as Record<string, unknown>;
      const name = str(agent.name) ?? 'agent';
      return {
        name: `invoke_agent ${name}`,
        attrs: {
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.agent.name': name,
          'gen_ai.input.messages': str(p.goal),
        },
      };
    }
    case 'model_proposed':
      return {
        name: 'chat',
        attrs: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.output.messages': JSON.stringify([
            {
              role: 'assistant',
              parts: [{ type: 'tool_call', id: callId, name: str(p.tool), arguments: p.args }],
              finish_reason: 'tool_call',
            },
          ]),
          'gen_ai.usage.output_tokens': typeof p.tokens === 'number' ? p.tokens : undefined,
        },
      };
    case 'model_responded':
      return {
        name: 'chat',
        attrs: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.output.messages': JSON.stringify([
            {
              role: 'assistant',
              parts: [{ type: 'text', content: str(p.content) ?? '' }],
              finish_reason: 'stop',
            },
          ]),
          'gen_ai.usage.output_tokens': typeof p.tokens === 'number' ? p.tokens : undefined,
        },
      };
    case 'tool_invoked': {
      const ret = callId ? returned.get(callId) : undefined;
      const status = str(ret?.payload.status);
      return {
        name: `execute_tool ${str(p.tool) ?? ''}`.trim(),
        attrs: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': str(p.tool),
          'gen_ai.tool.call.id': callId,
          'gen_ai.tool.call.arguments': JSON.stringify(p.args ?? null),
          'gen_ai.tool.call.result': str(ret?.payload.excerpt),
        },
        durationMs: typeof ret?.payload.duration_ms === 'number' ? ret.payload.duration_ms : 0,
        error: status && status !== 'ok' ? status : undefined,
      };
    }
    default:
      return { name: `proofloop.${e.kind}`, attrs: callId ? { 'gen_ai.tool.call.id': callId } : {} };
  }
}

function runSpans(runId: string, events: readonly StoredEvent[]): Span[] {
  const traceId = hex(`proofloop:${runId}`, 32);
  const spanIdOf = (seq: number) => hex(`proofloop:${runId}:${seq}`, 16);
  const root = events.find((e) => e.kind === 'run_started') ?? events[0];
  const returned = new Map<string, StoredEvent>();
  const invokedSpan = new Map<string, string>();
  for (const e of events)
    if (e.kind === 'tool_returned' && typeof e.payload.call_id === 'string')
      returned.set(e.payload.call_id, e);
  const lastNs = nsOf(events[events.length - 1]?.at ?? '');
  return events.map((e) => {
    const g = genai(e, returned);
    const start = nsOf(e.at);
    const spanId = spanIdOf(e.seq);
    const callId = str(e.payload.call_id);
    if (e.kind === 'tool_invoked' && callId) invokedSpan.set(callId, spanId);
    const parent =
      e === root
        ? undefined
        : e.kind === 'tool_returned' && callId && invokedSpan.has(callId)
          ? invokedSpan.get(callId)
          : root
            ? spanIdOf(root.seq)
            : undefined;
    const span: Span = {
      traceId,
      spanId,
      ...(parent ? { parentSpanId: parent } : {}),
      name: g.name,
      kind: e.kind === 'model_proposed' || e.kind === 'model_responded' ? 3 : 1,
      startTimeUnixNano: start,
      endTimeUnixNano: e === root ? lastNs : g.durationMs ? plusMs(start, g.durationMs) : start,
      attributes: kvs({
        ...g.attrs,
        'gen_ai.conversation.id': runId,
        'proofloop.run_id': runId,
        'proofloop.seq': e.seq,
        'proofloop.kind': e.kind,
        'proofloop.v': e.v,
        'proofloop.at': e.at,
        'proofloop.payload': canonicalJson(e.payload),
      }),
      ...(g.error ? { status: { code: 2, message: g.error } } : {}),
    };
    if (e.kind === 'judge_verdict') {
      span.events = [
        {
          name: 'gen_ai.evaluation.result',
          timeUnixNano: start,
          attributes: kvs({
            'gen_ai.evaluation.name': 'judge',
            'gen_ai.evaluation.score.label': e.payload.passed === true ? 'pass' : 'fail',
          }),
        },
      ];
    }
    return span;
  });
}

export interface OtlpExport {
  /** ExportTraceServiceRequests in the OTLP JSON mapping, `spansPer` spans at most each. */
  requests: Record<string, unknown>[];
  spans: number;
}

/** The runs as OTLP JSON requests (one resource per run), in seq order within each run. */
export function exportRunsOtlp(
  ledger: LedgerReader,
  runIds: readonly string[],
  spansPer = Infinity,
): OtlpExport {
  const requests: Record<string, unknown>[] = [];
  let spans = 0;
  for (const runId of runIds) {
    if (!ledger.run(runId)) throw new ProofloopError('not_found', `no run ${runId} in ${ledger.folder}`);
    const all = runSpans(runId, ledger.read(runId));
    spans += all.length;
    const resource = { attributes: kvs({ 'service.name': 'proofloop', 'proofloop.run_id': runId }) };
    const scope = { name: 'proofloop.export-otlp', version: '1' };
    for (let i = 0; i < all.length; i += Math.min(spansPer, all.length)) {
      requests.push({
        resourceSpans: [
          { resource, scopeSpans: [{ scope, spans: all.slice(i, i + Math.min(spansPer, all.length)) }] },
        ],
      });
    }
  }
  return { requests, spans };
}

/** One JSON request as protobuf bytes (hex ids become bytes; the rest is the same object). */
export function toProtobuf(request: Record<string, unknown>): Uint8Array {
  const T = requestTypes.traces;
  const json = JSON.stringify(request, (k, v: unknown) =>
    (k === 'traceId' || k === 'spanId' || k === 'parentSpanId') && typeof v === 'string'
      ? Buffer.from(v, 'hex').toString('base64')
      : v,
  );
  return T.encode(T.fromObject(JSON.parse(json) as Record<string, unknown>)).finish();
}

/** OTEL_EXPORTER_OTLP_HEADERS' form: `k=v,k2=v2`, values URL-encoded. */
export function parseOtlpHeaders(text: string | undefined): Record<string, string> {
  const out = dict<string>();
  for (const part of (text ?? '').split(',')) {
    const i = part.indexOf('=');
    if (i <= 0) continue;
    out[decodeURIComponent(part.slice(0, i).trim())] = decodeURIComponent(part.slice(i + 1).trim());
  }
  return out;
}

/** POSTs each request to `<endpoint>/v1/traces` in turn; a refusal stops it with the receiver's answer. */
export async function sendOtlp(
  endpoint: string,
  requests: readonly Record<string, unknown>[],
  opts: { protocol?: 'http/protobuf' | 'http/json'; headers?: Record<string, string> } = {},
): Promise<{ requests: number; rejected: number }> {
  const url = new URL(endpoint);
  if (url.pathname === '/' || url.pathname === '') url.pathname = '/v1/traces';
  const protobuf = (opts.protocol ?? 'http/protobuf') === 'http/protobuf';
  let rejected = 0;
  for (const r of requests) {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': protobuf ? 'application/x-protobuf' : 'application/json', ...opts.headers },
      body: protobuf ? toProtobuf(r) : JSON.stringify(r),
    });
    const body = Buffer.from(await res.arrayBuffer());
    const binary = (res.headers.get('content-type') ?? '').startsWith('application/x-protobuf');
    if (!res.ok) {
      let text = body.toString('utf8').slice(0, 500);
      try {
        if (binary) text = StatusType.toObject(StatusType.decode(body)).message as string;
      } catch {
        text = `${body.length} bytes`;
      }
      throw new ProofloopError('io', `${url.href} answered ${res.status} ${res.statusText}: ${text}`);
    }
    try {
      const answer = binary
        ? responseTypes.traces.toObject(responseTypes.traces.decode(body), { longs: Number })
        : body.length > 0
          ? (JSON.parse(body.toString('utf8')) as Record<string, unknown>)
          : {};
      const ps = answer.partialSuccess as { rejectedSpans?: number | string } | undefined;
      rejected += Number(ps?.rejectedSpans ?? 0);
    } catch {
      // an answer that is not an export response: the request was accepted all the same
    }
  }
  return { requests: requests.length, rejected };
}
