import { afterAll, describe, expect, it } from 'vitest';
import { decodeRequest, requestTypes } from '../../electron/otlp/decode';
import { DecodeThread } from '../../electron/otlp/decode-thread';
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

  it('gives the records decodeRequest gives in this thread, and the same refusals', async () => {
    expect(await thread.decode('traces', body, 'protobuf')).toEqual(
      decodeRequest('traces', body, 'protobuf'),
    );
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
    const there = await thread.decode('traces', json, 'json').catch((e: Error) => e);
    expect(there).toBeInstanceOf(DecodeError);
    expect((there as Error).message).toBe(inline!.message);
    const garbage = await thread
      .decode('traces', Buffer.from([0xff, 0xff, 0xff]), 'protobuf')
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
    const names = (await Promise.all(bodies.map((b) => thread.decode('traces', b, 'json')))).map((d) =>
      d.signal === 'traces' ? d.records[0]!.name : '',
    );
    expect(names).toEqual(bodies.map((_, i) => `s${i}`));
    thread.close();
    expect(await thread.decode('traces', body, 'protobuf')).toEqual(
      decodeRequest('traces', body, 'protobuf'),
    );
  });
});
