import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { decodeRequest, LIMITS, requestTypes } from '../../electron/otlp/decode';
import * as json from '../../electron/otlp/decode-json';
import * as proto from '../../electron/otlp/decode-proto';
import { RunKeys } from '../../electron/otlp/run-keys';
import { recordsOf } from '../../electron/otlp/prepared';
import type { Signal } from '../../electron/otlp/types';

// decode-proto.ts reads protobufjs's messages as they are; before, they went through toObject and
// the JSON walk. Both are held here to the same records, and to those of the same request in the
// OTLP JSON mapping, for generated requests (every AnyValue form, bounds, odd ids, times past 2^53).

type Json = Record<string, unknown>;

const hex = (bytes: number) =>
  fc.uint8Array({ minLength: bytes, maxLength: bytes }).map((b) => Buffer.from(b).toString('hex'));
/** An id of the right size mostly, else empty (unset) or of another size (refused, or read as hex). */
const anId = (bytes: number) =>
  fc.oneof(
    { weight: 8, arbitrary: hex(bytes) },
    { weight: 1, arbitrary: fc.constant('') },
    // Not 11 bytes: their 22 hex digits are also the base64 of 16 bytes, which JSON then reads.
    {
      weight: 1,
      arbitrary: fc
        .integer({ min: 1, max: 30 })
        .filter((n) => n !== 11)
        .chain(hex),
    },
  );
const u64 = fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }).map(String);
const key = fc.oneof(
  fc.constantFrom('a', 'b', 'gen_ai.operation.name', '__proto__', 'proofloop.payload', 'x.y', '1st'),
  fc.string({ maxLength: 6 }),
);

const anyValue: fc.Arbitrary<Json> = fc.letrec<{ v: Json }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({ stringValue: fc.oneof(fc.string(), fc.constant('x'.repeat(LIMITS.string + 3))) }),
    fc.record({ boolValue: fc.boolean() }),
    fc.record({ intValue: fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }).map(String) }),
    fc.record({
      doubleValue: fc.oneof(
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.constantFrom('NaN', 'Infinity', '-Infinity'),
      ),
    }),
    fc.record({ bytesValue: fc.uint8Array({ maxLength: 12 }).map((b) => Buffer.from(b).toString('base64')) }),
    fc.record({ arrayValue: fc.record({ values: fc.array(tie('v'), { maxLength: 4 }) }) }),
    fc.record({
      kvlistValue: fc.record({
        values: fc.array(fc.record({ key, value: tie('v') }, { requiredKeys: ['key'] }), { maxLength: 4 }),
      }),
    }),
    fc.constant({}),
  ),
})).v;

const attributes = fc.oneof(
  {
    weight: 9,
    arbitrary: fc.array(fc.record({ key, value: anyValue }, { requiredKeys: ['key'] }), { maxLength: 6 }),
  },
  {
    weight: 1,
    arbitrary: fc.constant(
      Array.from({ length: LIMITS.keys + 2 }, (_, i) => ({ key: `k${i}`, value: { intValue: String(i) } })),
    ),
  },
);

const scope = fc.option(fc.record({ name: fc.string(), version: fc.string() }, { requiredKeys: [] }), {
  nil: undefined,
});
const resource = fc.option(fc.record({ attributes }), { nil: undefined });
const status = fc.option(
  fc.record({ code: fc.integer({ min: 0, max: 2 }), message: fc.string() }, { requiredKeys: [] }),
  { nil: undefined },
);

const span = fc.record(
  {
    traceId: anId(16),
    spanId: anId(8),
    parentSpanId: anId(8),
    name: fc.string(),
    kind: fc.integer({ min: 0, max: 5 }),
    startTimeUnixNano: u64,
    endTimeUnixNano: u64,
    attributes,
    events: fc.array(fc.record({ name: fc.string(), timeUnixNano: u64, attributes }), { maxLength: 2 }),
    links: fc.array(fc.record({ traceId: anId(16), spanId: anId(8), attributes }), { maxLength: 2 }),
    status,
  },
  { requiredKeys: ['traceId', 'spanId'] },
);

const log = fc.record(
  {
    timeUnixNano: u64,
    observedTimeUnixNano: u64,
    severityNumber: fc.integer({ min: 0, max: 24 }),
    severityText: fc.string(),
    eventName: fc.string(),
    body: anyValue,
    attributes,
    traceId: anId(16),
    spanId: anId(8),
  },
  { requiredKeys: [] },
);

const traces = fc
  .array(
    fc.record({
      resource,
      scopeSpans: fc.array(fc.record({ scope, spans: fc.array(span, { maxLength: 3 }) }), { maxLength: 2 }),
    }),
    { maxLength: 2 },
  )
  .map((resourceSpans) => ({ resourceSpans }));
const logs = fc
  .array(
    fc.record({
      resource,
      scopeLogs: fc.array(fc.record({ scope, logRecords: fc.array(log, { maxLength: 3 }) }), {
        maxLength: 2,
      }),
    }),
    { maxLength: 2 },
  )
  .map((resourceLogs) => ({ resourceLogs }));

const IDS = new Set(['traceId', 'spanId', 'parentSpanId']);

/** The request in protobuf: ids from hex to base64 (protobufjs's fromObject reads bytes as base64). */
function toProtobuf(signal: Signal, req: Json): Buffer {
  const T = requestTypes[signal];
  const text = JSON.stringify(req, (k, v: unknown) =>
    IDS.has(k) && typeof v === 'string' ? Buffer.from(v, 'hex').toString('base64') : v,
  );
  return Buffer.from(T.encode(T.fromObject(JSON.parse(text) as Json)).finish());
}

/** The records, or the refusal's message (`bare`: without the id's text, hex in JSON and base64 in protobuf). */
function outcome(f: () => unknown, bare = false): unknown {
  try {
    return { ok: f() };
  } catch (e) {
    const m = (e as Error).message;
    return { refused: bare ? m.replace(/"[^"]*" is not/, '(id) is not') : m };
  }
}

/** What protobufjs's toObject and the JSON walk gave a protobuf body before decode-proto.ts. */
function viaToObject(signal: Signal, body: Buffer): unknown {
  const T = requestTypes[signal];
  const req = T.toObject(T.decode(body), { longs: String, bytes: String, enums: Number });
  if (signal === 'traces') return { signal, records: json.spansOf(req) };
  if (signal === 'logs') return { signal, records: json.logsOf(req) };
  return { signal, records: json.metricsOf(req) };
}

function same(signal: Signal, req: Json): void {
  const pb = toProtobuf(signal, req);
  const fromPb = outcome(() => decodeRequest(signal, pb, 'protobuf'));
  expect(fromPb).toStrictEqual(outcome(() => viaToObject(signal, pb)));
  expect(outcome(() => decodeRequest(signal, pb, 'protobuf'), true)).toStrictEqual(
    outcome(() => decodeRequest(signal, Buffer.from(JSON.stringify(req)), 'json'), true),
  );
}

/** One metric of each type, as an exporter sends them (OTLP JSON mapping). */
const METRICS = {
  resourceMetrics: [
    {
      resource: { attributes: [{ key: 'service.name', value: { stringValue: 'claude-code' } }] },
      scopeMetrics: [
        {
          scope: { name: 'com.anthropic.claude_code' },
          metrics: [
            {
              name: 'tokens',
              unit: 'tokens',
              sum: {
                aggregationTemporality: 2,
                isMonotonic: true,
                dataPoints: ['input', 'output'].map((type, i) => ({
                  attributes: [
                    { key: 'session.id', value: { stringValue: 's1' } },
                    { key: 'type', value: { stringValue: type } },
                  ],
                  startTimeUnixNano: '1690000000000000000',
                  timeUnixNano: '1700000000000000000',
                  asInt: String([120, 30][i]),
                })),
              },
            },
            {
              name: 'cost',
              unit: 'USD',
              gauge: { dataPoints: [{ timeUnixNano: '1700000000000000001', asDouble: 0.25 }] },
            },
            {
              name: 'latency',
              unit: 'ms',
              histogram: {
                aggregationTemporality: 1,
                dataPoints: [
                  {
                    timeUnixNano: '1700000000000000002',
                    count: '3',
                    sum: 12.5,
                    min: 1,
                    max: 9,
                    bucketCounts: ['1', '2'],
                    explicitBounds: [5],
                  },
                ],
              },
            },
            {
              name: 'sizes',
              exponentialHistogram: {
                aggregationTemporality: 2,
                dataPoints: [
                  {
                    count: '4',
                    sum: 10,
                    scale: 2,
                    zeroCount: '1',
                    positive: { offset: 1, bucketCounts: ['3'] },
                  },
                ],
              },
            },
            {
              name: 'q',
              summary: {
                dataPoints: [{ count: '2', sum: 3, quantileValues: [{ quantile: 0.5, value: 1.5 }] }],
              },
            },
            { name: 'empty' },
          ],
        },
      ],
    },
  ],
};

describe('OTLP protobuf read from its messages', () => {
  it('gives the records toObject and the JSON walk gave, and those of the same request in JSON', () => {
    fc.assert(
      fc.property(traces, (req) => same('traces', req)),
      { numRuns: 400 },
    );
    fc.assert(
      fc.property(logs, (req) => same('logs', req)),
      { numRuns: 400 },
    );
    same('metrics', {
      resourceMetrics: [{ scopeMetrics: [{ metrics: [{ name: 'a' }, { name: 'b' }] }, {}] }],
    });
    same('metrics', METRICS);
  });

  it('reads every metric data point of each type, the same from protobuf and JSON', () => {
    const d = decodeRequest('metrics', toProtobuf('metrics', METRICS), 'protobuf');
    expect(d).toStrictEqual(decodeRequest('metrics', Buffer.from(JSON.stringify(METRICS)), 'json'));
    if (d.signal !== 'metrics') throw new Error('not metrics');
    expect(
      d.records.map((m) => [m.name, m.type, m.monotonic, m.temporality, m.attributes, m.value, m.timeNs]),
    ).toEqual([
      ['tokens', 'sum', true, 2, { 'session.id': 's1', type: 'input' }, 120, '1700000000000000000'],
      ['tokens', 'sum', true, 2, { 'session.id': 's1', type: 'output' }, 30, '1700000000000000000'],
      ['cost', 'gauge', null, null, {}, 0.25, '1700000000000000001'],
      [
        'latency',
        'histogram',
        null,
        1,
        {},
        { count: 3, sum: 12.5, min: 1, max: 9, bucket_counts: [1, 2], explicit_bounds: [5] },
        '1700000000000000002',
      ],
      [
        'sizes',
        'exponential_histogram',
        null,
        2,
        {},
        { count: 4, sum: 10, scale: 2, zero_count: 1, positive: { offset: 1, bucket_counts: [3] } },
        '0',
      ],
      ['q', 'summary', null, null, {}, { count: 2, sum: 3, quantiles: [{ quantile: 0.5, value: 1.5 }] }, '0'],
      // A metric with no data point is still a record.
      ['empty', '', null, null, {}, null, '0'],
    ]);
    expect(d.records[0]!.resource).toEqual({ 'service.name': 'claude-code' });
    expect(d.records[0]!.scope).toEqual({ name: 'com.anthropic.claude_code' });
  });

  it('refuses ids of the wrong size naming the field, as the JSON walk does', () => {
    const req = {
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: [
                { traceId: '00'.repeat(16), spanId: 'ab'.repeat(8) },
                { traceId: 'ab'.repeat(5), spanId: 'ab'.repeat(8) },
              ],
            },
          ],
        },
      ],
    };
    const pb = toProtobuf('traces', req);
    expect(() => decodeRequest('traces', pb, 'protobuf')).toThrow(
      'resourceSpans[0].scopeSpans[0].spans[0].traceId: missing (a span needs a trace id)',
    );
    req.resourceSpans[0]!.scopeSpans[0]!.spans.shift();
    expect(() => decodeRequest('traces', toProtobuf('traces', req), 'protobuf')).toThrow(
      /^resourceSpans\[0\]\.scopeSpans\[0\]\.spans\[0\]\.traceId: "q6urq6s=" is not a 16-byte id/,
    );
  });

  it('reads 64-bit integers given as numbers (protobufjs without the long package) as toObject did', () => {
    const T = requestTypes.traces;
    const ids = { traceId: 'ab'.repeat(16), spanId: 'cd'.repeat(8) };
    const message = T.decode(toProtobuf('traces', { resourceSpans: [{ scopeSpans: [{ spans: [ids] }] }] }));
    const span = (message as unknown as proto.PbTraces).resourceSpans[0]!.scopeSpans[0]!.spans[0]!;
    Object.assign(span, { startTimeUnixNano: 1_700_000_000_123_456_000, endTimeUnixNano: 2 ** 60 });
    span.attributes.push({
      key: 'n',
      value: T.lookupType('opentelemetry.proto.common.v1.AnyValue').fromObject({
        intValue: 1,
      }) as unknown as (typeof span.attributes)[number]['value'],
    });
    (span.attributes[0]!.value as unknown as { intValue: number }).intValue = -(2 ** 60);
    const [record] = proto.spansOf(message as unknown as proto.PbTraces);
    expect(record!.startNs).toBe('1700000000123456000');
    expect(record!.endNs).toBe(String(2 ** 60));
    expect(record!.attributes.n).toBe(String(-(2 ** 60)));
  });

  it('stores the same events from either encoding', () => {
    fc.assert(
      fc.property(traces, logs, (t, l) => {
        const prepared = (enc: 'protobuf' | 'json') => {
          const keys = new RunKeys();
          return (['traces', 'logs'] as const).map((signal) => {
            const req = signal === 'traces' ? t : l;
            const body = enc === 'protobuf' ? toProtobuf(signal, req) : Buffer.from(JSON.stringify(req));
            return outcome(() => keys.prepare(recordsOf(decodeRequest(signal, body, enc))), true);
          });
        };
        expect(prepared('protobuf')).toStrictEqual(prepared('json'));
      }),
      { numRuns: 200 },
    );
  });
});
