import { afterAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { Ledger } from '../../electron/ledger';
import { startOtlpReceiver } from '../../electron/otlp';
import { freshFolder } from './helpers/tmp';
import { decodeRequest, requestTypes } from '../../electron/otlp/decode';
import { DecodeThread } from '../../electron/otlp/decode-thread';
import { prepareRequest } from '../../electron/otlp/prepared';
import { RunKeys } from '../../electron/otlp/run-keys';
import { LiveRuns } from '../../electron/otlp/runs';
import { recordsOf } from '../../electron/otlp/prepared';
import { DecodeError } from '../../electron/otlp/types';

const kv = (key: string, v: string) => ({ key, value: { stringValue: v } });
const T = requestTypes.traces;
const resource = { attributes: [kv('service.name', 'svc')] };
const body = Buffer.from(
  T.encode(
    T.fromObject({
      resourceSpans: [
        {
          resource,
          scopeSpans: [
            {
              scope: { name: 's', version: '1' },
              spans: [1, 2, 3].map((i) => ({
                traceId: Buffer.alloc(16, 7),
                spanId: Buffer.alloc(8, i),
                name: `execute_tool t${i}`,
                startTimeUnixNano: '1700000000000000000',
                endTimeUnixNano: '1700000000000000500',
                attributes: [
                  kv('gen_ai.tool.name', `t${i}`),
                  kv('gen_ai.tool.call.result', 'é\n'.repeat(50)),
                ],
                status: { code: 2, message: 'boom' },
              })),
            },
          ],
        },
      ],
    }),
  ).finish(),
);

describe('the receiver decode thread', () => {
  const thread = DecodeThread.start();
  afterAll(() => thread.close());

  it('gives the parts prepareRequest gives in this thread, and the same refusals', async () => {
    const prepared = await thread.prepare('traces', body, 'protobuf');
    expect(prepared).toEqual(prepareRequest(new RunKeys(), 'traces', body, 'protobuf'));
    // One run (one trace), three tool spans of two events each, serialised with their raw records.
    expect(
      prepared.signal === 'traces' && prepared.parts.map((p) => [p.key, p.records, p.kinds.length]),
    ).toEqual([[`t:${'07'.repeat(16)}`, 3, 6]]);
    const json = Buffer.from(
      JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: 'abc' }] }] }] }),
    );
    const inline = (() => {
      try {
        decodeRequest('traces', json, 'json');
      } catch (e) {
        return e as Error;
      }
    })();
    expect(inline).toBeInstanceOf(DecodeError);
    const there = await thread.prepare('traces', json, 'json').catch((e: Error) => e);
    expect(there).toBeInstanceOf(DecodeError);
    expect((there as Error).message).toBe(inline!.message);
    const garbage = await thread
      .prepare('traces', Buffer.from([0xff, 0xff, 0xff]), 'protobuf')
      .catch((e: Error) => e);
    expect(garbage).toBeInstanceOf(DecodeError);
    expect((garbage as Error).message).toMatch(/not an OTLP ExportTraceServiceRequest in protobuf/);
  });

  it('keeps the order of the bodies sent, and decodes in this thread once it is gone', async () => {
    const bodies = Array.from({ length: 20 }, (_, i) =>
      Buffer.from(
        JSON.stringify({
          resourceSpans: [
            {
              scopeSpans: [
                {
                  spans: [
                    {
                      traceId: '1'.repeat(32),
                      spanId: (i + 1).toString(16).padStart(16, '0'),
                      name: `s${i}`,
                    },
                  ],
                },
              ],
            },
          ],
        }),
      ),
    );
    // Bodies keyed and mapped in the order sent: as one RunKeys in this thread gives them in order.
    const here = new RunKeys();
    const there = await Promise.all(bodies.map((b) => thread.prepare('traces', b, 'json')));
    // Redacted and checked there, also when bodies queue behind others.
    const finished = there.map((d) => d.signal === 'traces' && d.parts[0]!.finished);
    expect(finished).toEqual(bodies.map(() => true));
    const inOrder = bodies.map((b) => prepareRequest(here, 'traces', b, 'json'));
    expect(there).toEqual(inOrder);
    const names = there.map((d) =>
      d.signal === 'traces'
        ? (JSON.parse(d.parts[0]!.jsons[0]!) as { otel: { name: string } }).otel.name
        : '',
    );
    expect(names).toEqual(bodies.map((_, i) => `s${i}`));
    thread.close();
    expect(await thread.prepare('traces', body, 'protobuf')).toEqual(
      prepareRequest(new RunKeys(), 'traces', body, 'protobuf'),
    );
  });
});

describe('the receiver with and without its decode thread', () => {
  it('stores the same events, hashes and redactions', async () => {
    const conv = (i: number) => kv('gen_ai.conversation.id', `c${i % 2}`);
    const requests = Array.from({ length: 6 }, (_, r) =>
      JSON.stringify({
        resourceSpans: [
          {
            resource: { attributes: [kv('service.name', `svc${r >> 1}`)] },
            scopeSpans: [
              {
                spans: Array.from({ length: 5 }, (_, i) => ({
                  traceId: (r + 1).toString(16).padStart(32, '0'),
                  spanId: (r * 10 + i + 1).toString(16).padStart(16, '0'),
                  name: i % 2 ? 'chat m' : 'execute_tool t',
                  startTimeUnixNano: String(1_700_000_000_000_000_000n + BigInt(r * 10 + i) * 1_000_000n),
                  endTimeUnixNano: String(1_700_000_000_000_000_000n + BigInt(r * 10 + i) * 1_000_000n + 7n),
                  attributes: [
                    conv(r),
                    kv('gen_ai.operation.name', i % 2 ? 'chat' : 'execute_tool'),
                    kv('gen_ai.tool.name', 't'),
                    kv('gen_ai.tool.call.result', `key sk-proj-${'A'.repeat(20)}${r}${i} and more`),
                    kv('gen_ai.usage.input_tokens', '12'),
                    kv('zeta', 'z'),
                    kv('alpha', 'a'),
                  ],
                })),
              },
            ],
          },
        ],
      }),
    );
    const stored = async (decodeThread: boolean) => {
      const f = freshFolder();
      const ledger = Ledger.open(f.dir, { now: () => '2026-12-01T00:00:00.000Z' });
      const rx = await startOtlpReceiver({ ledger: () => ledger, port: 0, decodeThread });
      try {
        for (const body of requests) {
          const res = await fetch(`${rx.endpoint}/v1/traces`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body,
          });
          expect(res.status).toBe(200);
        }
        return ['otlp-c0', 'otlp-c1'].map((id) => ledger.read(id));
      } finally {
        await rx.close();
        ledger.close();
        f.cleanup();
      }
    };
    const there = await stored(true);
    const here = await stored(false);
    expect(there[0]!.length).toBeGreaterThan(10);
    expect(there).toEqual(here);
    const text = JSON.stringify(there);
    expect(text).not.toContain('sk-proj-');
    expect(text).toContain('[REDACTED:');
  });
});

describe('parts as RunKeys prepares them (in the decode thread or, without it, in this one)', () => {
  it('store no planted credential, and the same events whether requests are appended together or apart', () => {
    const spans = (r: number) =>
      JSON.stringify({
        resourceSpans: [
          {
            scopeSpans: [
              {
                spans: Array.from({ length: 4 }, (_, i) => ({
                  traceId: '3'.repeat(32),
                  spanId: (r * 10 + i + 1).toString(16).padStart(16, '0'),
                  name: 'execute_tool t',
                  startTimeUnixNano: String(1_700_000_000_000_000_000n + BigInt(r * 10 + i)),
                  attributes: [
                    kv('gen_ai.tool.name', 't'),
                    kv('gen_ai.tool.call.result', `Bearer ${'x'.repeat(20)}${r}${i}`),
                    kv('api_key', `k${r}`),
                  ],
                })),
              },
            ],
          },
        ],
      });
    const bodies = [0, 1, 2, 3].map((r) => Buffer.from(spans(r)));
    const stored = (groups: number[][]) => {
      const f = freshFolder();
      const ledger = Ledger.open(f.dir, { now: () => '2026-12-01T00:00:00.000Z' });
      const keys = new RunKeys();
      const runs = new LiveRuns(() => ledger, 60_000);
      const parts = bodies.map((b) => keys.prepare(recordsOf(decodeRequest('traces', b, 'json'))));
      // A group is one append (GroupCommit's): its requests' texts joined.
      const results = groups.flatMap((g) => runs.ingestMany(g.map((r) => parts[r]!)));
      runs.close();
      expect(results.every((x) => x.accepted === 4 && x.rejected === 0)).toBe(true);
      const events = ledger.read(`otlp-trace-${'3'.repeat(32)}`);
      ledger.close();
      f.cleanup();
      return events;
    };
    const all = stored([[0, 1, 2, 3]]);
    expect(all).toHaveLength(4 * 4 * 2);
    const text = JSON.stringify(all);
    expect(text).not.toMatch(/Bearer x|"k[0-3]"/);
    expect(text).toMatch(/REDACTED/);
    expect(
      stored([
        [0, 1],
        [2, 3],
      ]),
    ).toEqual(all);
    expect(stored([[0], [1], [2], [3]])).toEqual(all);
  });
});

describe('the decode thread of a receiver that gets no span', () => {
  /** This process's OS threads (Linux's /proc, as the CI machine has it): a worker thread adds some. */
  const threads = () => Number(/^Threads:\s+(\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'))![1]);

  it('is started by the first body, not with the receiver', async () => {
    const before = threads();
    const thread = DecodeThread.start();
    try {
      // A moment for a thread that was started to show in /proc.
      await new Promise((r) => setTimeout(r, 200));
      expect(threads()).toBe(before);
      const prepared = await thread.prepare('traces', body, 'protobuf');
      expect(prepared.signal).toBe('traces');
      expect(threads()).toBeGreaterThan(before);
    } finally {
      thread.close();
    }
  });
});
