import { afterAll, describe, expect, it } from 'vitest';
import { decodeRequest, requestTypes } from '../../electron/otlp/decode';
import { DecodeThread } from '../../electron/otlp/decode-thread';
import { prepareRequest } from '../../electron/otlp/prepared';
import { RunKeys } from '../../electron/otlp/run-keys';
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
    const inOrder = bodies.map((b) => prepareRequest(here, 'traces', b, 'json'));
    const there = await Promise.all(bodies.map((b) => thread.prepare('traces', b, 'json')));
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
