/**
 * The run's gateway in a thread of its own (electron/runner/gateway/thread.ts): the agent's answers
 * do not wait for recording, and yet nothing answered is lost or out of order: every exchange is
 * recorded before settle() resolves (the run's last events wait for it), a hook call is handled
 * after the exchange that proposed its call, and a failure to record reaches the host as such.
 * The answers come from a stand-in API on 127.0.0.1 through the upstream source (streamed: the
 * exchange is posted after the agent has its answer, the hardest case for ordering).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropic } from '../../electron/runner/gateway/anthropic';
import type { GatewayExchange, GatewayHost } from '../../electron/runner/gateway/server';
import { startGateway } from '../../electron/runner/gateway/thread';
import type { SourceRequest } from '../../electron/runner/gateway/types';

const ANSWER = anthropic.render(
  {
    text: 'reading',
    calls: [{ id: 'toolu_1', name: 'Read', input: { file_path: '/w/a.js' } }],
    stop: 'tool_use',
    usage: { input_tokens: 10, output_tokens: 5 },
    model: 'stand-in',
  },
  'msg_1',
  true,
).body;

let standin: http.Server;
let upstream: string;
beforeAll(async () => {
  standin = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'text/event-stream' }).end(ANSWER));
  });
  await new Promise<void>((r) => standin.listen(0, '127.0.0.1', () => r()));
  upstream = `http://127.0.0.1:${(standin.address() as AddressInfo).port}`;
});
afterAll(() => standin?.close());

const busy = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

function gateway(host: GatewayHost) {
  return startGateway({
    agent: 'claude-code',
    source: {
      kind: 'upstream',
      env: { ANTHROPIC_API_KEY: 'test-key', PROOFLOOP_ANTHROPIC_UPSTREAM: upstream },
    },
    token: 'tok',
    host,
    prompt: 'fix it',
    workspace: '/w',
    home: '/h',
  });
}

const ask = (url: string, n: number) =>
  fetch(`${url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'tok' },
    body: JSON.stringify({
      model: 'm',
      stream: true,
      system: [{ type: 'text', text: `request ${n}` }],
      tools: [{ name: 'Read', input_schema: { type: 'object' } }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'fix it' }] }],
    }),
  });

const baseHost = (log: string[]): GatewayHost => ({
  admit: () => null,
  record: (ex: GatewayExchange) => log.push(`record ${ex.req.index}`),
  noAnswer: () => log.push('noAnswer'),
  hook: () => Promise.resolve({ ok: log.push('hook') }),
  badRequest: (s, m) => log.push(`bad ${s} ${m}`),
});

describe('the gateway in its own thread', { timeout: 60_000 }, () => {
  it('recording trails the answers; settle() resolves only once every exchange is recorded, in order', async () => {
    const log: string[] = [];
    const host = baseHost(log);
    // Recording as slow as a loaded disk's fsyncs: 40 ms an exchange, on the run's thread.
    host.record = (ex) => {
      busy(40);
      log.push(`record ${ex.req.index}`);
    };
    const gw = gateway(host);
    expect(gw.threaded).toBe(true);
    const url = await gw.listen();
    try {
      for (let i = 0; i < 5; i++) {
        const r = await ask(url, i);
        expect(r.status).toBe(200);
        expect(await r.text()).toBe(ANSWER);
      }
      await gw.settle();
      expect(log).toEqual([0, 1, 2, 3, 4].map((i) => `record ${i}`));
      // What the host received is the request as the agent sent it, parsed here.
      let seen: SourceRequest | null = null;
      host.record = (ex) => void (seen = ex.req);
      await (await ask(url, 5)).text();
      await gw.settle();
      expect((seen as SourceRequest | null)?.parsed.lane).toBe('main');
      expect(JSON.stringify((seen as SourceRequest | null)?.body)).toContain('request 5');
      expect((seen as SourceRequest | null)?.canonical.messages.length).toBe(1);
    } finally {
      await gw.close();
    }
  });

  it("a hook call is handled after the exchange that proposed its call, and its answer goes back to the agent's hook", async () => {
    const log: string[] = [];
    const host = baseHost(log);
    host.record = (ex) => {
      busy(30);
      log.push(`record ${ex.req.index}`);
    };
    const gw = gateway(host);
    const url = await gw.listen();
    try {
      await (await ask(url, 0)).text();
      const h = await fetch(`${url}/proofloop/hook`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-proofloop-token': 'tok' },
        body: '{"hook_event_name":"PreToolUse"}',
      });
      expect(await h.json()).toEqual({ ok: 2 });
      expect(log).toEqual(['record 0', 'hook']);
    } finally {
      await gw.close();
    }
  });

  it('a failure to record reaches the host as one (with the request), the agent keeps its answer, settle() resolves', async () => {
    const failures: { lane: string | null; message: string }[] = [];
    const host: GatewayHost = {
      ...baseHost([]),
      record: () => {
        throw new Error('ENOSPC: no space left on device');
      },
      recordingFailed: (req, e) => failures.push({ lane: req?.parsed.lane ?? null, message: e.message }),
    };
    const gw = gateway(host);
    const url = await gw.listen();
    try {
      const r = await ask(url, 0);
      expect(r.status).toBe(200);
      await r.text();
      await gw.settle();
      expect(failures).toEqual([{ lane: 'main', message: 'ENOSPC: no space left on device' }]);
    } finally {
      await gw.close();
    }
  });

  it('when even the failure cannot be recorded, settle() rejects (the run then ends failed)', async () => {
    const host: GatewayHost = {
      ...baseHost([]),
      record: () => {
        throw new Error('disk gone');
      },
      recordingFailed: () => {
        throw new Error('ledger gone');
      },
    };
    const gw = gateway(host);
    const url = await gw.listen();
    try {
      await (await ask(url, 0)).text();
      await expect(gw.settle()).rejects.toThrow('ledger gone');
    } finally {
      await gw.close();
    }
  });

  it("once the host refuses (the run ended), the gateway's thread refuses later requests as an event", async () => {
    const log: string[] = [];
    let ended = false;
    const host: GatewayHost = {
      ...baseHost(log),
      admit: () => (ended ? 'the run has ended (budget_exhausted)' : null),
      record: (ex) => {
        log.push(`record ${ex.req.index}`);
        ended = true;
      },
      noAnswer: (_r, reason) => log.push(`noAnswer ${reason}`),
    };
    const gw = gateway(host);
    const url = await gw.listen();
    try {
      await (await ask(url, 0)).text();
      await gw.settle();
      const r = await ask(url, 1);
      expect(r.status).toBe(400);
      await gw.settle();
      expect(log).toEqual(['record 0', 'noAnswer the run has ended (budget_exhausted)']);
    } finally {
      await gw.close();
    }
  });
});
