/**
 * The model gateway's cost: `npm run bench gateway`. A stand-in API server on 127.0.0.1 answers a
 * fixed streamed answer at once; the same Anthropic Messages requests (10 KB and 200 KB, streamed)
 * go to it directly and through a gateway with the upstream source, interleaved, one at a time. The
 * gateway's host does what a run's does after each answer: redact the request, store it as
 * content-addressed parts, its canonical form and the answer (fsync'd files, after the answer has
 * gone out), in this same process as the client and stand-in, so that work counts; `*_proxy_only`
 * rows leave it out. Goal: p99 added ≤ 2 ms per call.
 * Then a 500-turn conversation (each turn resends the history) through the gateway: heap and RSS
 * every 100 turns, which must stay bounded (the gateway keeps no per-turn state but a counter).
 */
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { anthropic } from '../electron/runner/gateway/anthropic';
import { Gateway, type GatewayHost } from '../electron/runner/gateway/server';
import { upstreamSource } from '../electron/runner/gateway/upstream-source';
import { canonicalDigests } from '../electron/runner/gateway/canonical';
import { storeParts } from '../electron/runner/real-run';
import { storeArtifact } from '../electron/runner/artifacts';
import { redactCredentials } from '../shared/redact';
import { isMain } from './is-main';
import { dict } from '../shared/dict.js';

const ANSWER = anthropic.render(
  {
    text: 'I will read the file first.',
    calls: [{ id: 'toolu_bench', name: 'Read', input: { file_path: '/w/slug.js' } }],
    stop: 'tool_use',
    usage: { input_tokens: 100, output_tokens: 20 },
    model: 'bench',
  },
  'msg_bench',
  true,
).body;

function body(bytes: number, turns = 1): string {
  const messages: unknown[] = [];
  const per = Math.max(1, Math.floor(bytes / (turns * 2)));
  for (let i = 0; i < turns; i++) {
    messages.push({ role: 'user', content: [{ type: 'text', text: `turn ${i} `.padEnd(per, 'x') }] });
    if (i < turns - 1)
      messages.push({
        role: 'assistant',
        content: [{ type: 'text', text: `answer ${i} `.padEnd(per, 'y') }],
      });
  }
  return JSON.stringify({
    model: 'bench',
    max_tokens: 1000,
    stream: true,
    system: [{ type: 'text', text: 'You are a bench.' }],
    tools: [{ name: 'Read', input_schema: { type: 'object' } }],
    messages,
  });
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
function post(url: string, data: string, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request(
      url + '/v1/messages',
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'x-api-key': key,
          'content-length': Buffer.byteLength(data),
        },
      },
      (res) => {
        res.on('data', () => {});
        res.on('end', () =>
          res.statusCode === 200
            ? resolve(performance.now() - t0)
            : reject(new Error(`status ${res.statusCode}`)),
        );
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return +s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!.toFixed(3);
};

export async function benchGateway(calls = 300): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pl-bench-gw-'));
  const runDir = path.join(dir, 'run');
  const standin = http.createServer((req, res) => {
    req.on('data', () => {});
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(ANSWER);
    });
  });
  await new Promise<void>((r) => standin.listen(0, '127.0.0.1', () => r()));
  const direct = `http://127.0.0.1:${(standin.address() as AddressInfo).port}`;
  let recording = true;
  const host: GatewayHost = {
    admit: () => null,
    record: (ex) => {
      if (!recording) return;
      const redacted = redactCredentials(ex.req.body).value as Record<string, unknown>;
      storeParts(runDir, redacted);
      const c = canonicalDigests(anthropic.canonical(redacted, { workspace: '/w', home: '/h' }));
      storeArtifact(runDir, JSON.stringify(c), { redacted: true });
      storeArtifact(runDir, ex.responseBody);
    },
    noAnswer: (_r, reason) => {
      throw new Error(reason);
    },
    hook: () => Promise.resolve({}),
    badRequest: (_s, m) => {
      throw new Error(m);
    },
  };
  const gw = new Gateway({
    dialect: anthropic,
    source: upstreamSource(anthropic, {
      ANTHROPIC_API_KEY: 'bench-key',
      PROOFLOOP_ANTHROPIC_UPSTREAM: direct,
    }),
    token: 'bench-token',
    host,
    prompt: 'turn 0',
    workspace: '/w',
    home: '/h',
  });
  const via = await gw.listen();
  const out: Record<string, unknown> = dict();
  try {
    for (const [name, size, rec] of [
      ['10KB', 10_000, true],
      ['200KB', 200_000, true],
      // The proxy alone: what the agent waits for when the recording of the last answer is done.
      ['10KB_proxy_only', 10_000, false],
      ['200KB_proxy_only', 200_000, false],
    ] as const) {
      recording = rec;
      const d: number[] = [];
      const g: number[] = [];
      for (let i = 0; i < 20; i++) {
        await post(direct, body(size), 'k');
        await post(via, body(size), 'bench-token');
      }
      for (let i = 0; i < calls; i++) {
        // A different body each call (as a conversation's requests are): nothing is cached.
        const b = body(size).replace('turn 0', `turn 0 call ${i}`);
        d.push(await post(direct, b, 'k'));
        g.push(await post(via, b, 'bench-token'));
      }
      out[name] = {
        calls,
        direct_ms: { p50: pct(d, 50), p99: pct(d, 99) },
        gateway_ms: { p50: pct(g, 50), p99: pct(g, 99) },
        added_ms: { p50: +(pct(g, 50) - pct(d, 50)).toFixed(3), p99: +(pct(g, 99) - pct(d, 99)).toFixed(3) },
        goal_ok: pct(g, 99) - pct(d, 99) <= 2,
      };
    }
    recording = true;
    // A 500-turn session: each request resends the whole history (to ~200 KB at the end).
    const mem: { turn: number; heap_mb: number; rss_mb: number }[] = [];
    for (let t = 1; t <= 500; t++) {
      await post(via, body(t * 400, t), 'bench-token');
      if (t % 100 === 0) {
        (globalThis as { gc?: () => void }).gc?.();
        const m = process.memoryUsage();
        mem.push({
          turn: t,
          heap_mb: +(m.heapUsed / 2 ** 20).toFixed(1),
          rss_mb: +(m.rss / 2 ** 20).toFixed(1),
        });
      }
    }
    out.session_500 = { memory: mem, gc_exposed: typeof (globalThis as { gc?: unknown }).gc === 'function' };
    out.goal = 'p99 added <= 2 ms per model call (10 KB and 200 KB requests); memory bounded over 500 turns';
  } finally {
    await gw.close();
    standin.close();
    agent.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

if (isMain(import.meta.url)) console.log(JSON.stringify(await benchGateway(), null, 2));
