/**
 * The model gateway's cost: `npm run bench -- gateway`. As in a real run, three parties: the agent
 * and the API (bench/gateway-peer.mjs: a client and a stand-in API server on 127.0.0.1 that answers
 * a fixed streamed answer at once, in a process of their own), and ProofLoop (this process): the
 * gateway with the upstream source, and the run's thread recording every exchange as a run does
 * (request redacted, stored as content-addressed parts, its canonical digests, the answer: fsync'd
 * artifacts; model_responded and model_proposed appended to a real ledger, synchronous = FULL).
 * The client sends the same Anthropic Messages request (10 KB, 200 KB; streamed) straight to the
 * stand-in and through the gateway, interleaved, one at a time, back to back; added = gateway −
 * direct, per percentile. Goal: p99 added ≤ 2 ms per call.
 * Rows: the gateway in its own thread (thread.ts, what runs use), and in the run's thread with
 * recording after each answer (`*_in_thread`: how it was before, for comparison).
 * Then a 500-turn conversation (each turn resends the history, to ~200 KB) through the gateway:
 * this process's heap and RSS every 100 turns, all recorded, which must stay bounded.
 */
import { fork, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ledger, type RunWriter } from '../electron/ledger';
import { anthropic } from '../electron/runner/gateway/anthropic';
import type { GatewayHost } from '../electron/runner/gateway/server';
import { startGateway } from '../electron/runner/gateway/thread';
import { canonicalDigests } from '../electron/runner/gateway/canonical';
import { storeParts } from '../electron/runner/request-parts';
import { storeArtifact } from '../electron/ledger/artifact-store';
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

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return +s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!.toFixed(3);
};

/** What a run's host does with an exchange (real-run.ts record, without the policy's bookkeeping). */
function recordingHost(runDir: string, writer: RunWriter, counts: { recorded: number }): GatewayHost {
  return {
    admit: () => null,
    record: (ex) => {
      const redacted = redactCredentials(ex.req.body).value as Record<string, unknown>;
      const request = storeParts(runDir, redacted);
      const c = canonicalDigests(anthropic.canonical(redacted, { workspace: '/w', home: '/h' }));
      const parts = storeArtifact(runDir, JSON.stringify(c), { redacted: true });
      const resp = storeArtifact(runDir, ex.responseBody);
      writer.appendBatch([
        {
          kind: 'model_responded',
          payload: {
            lane: ex.req.parsed.lane,
            index: ex.req.index,
            request: {
              digest: request.digest,
              bytes: ex.req.rawBody.length,
              canonical: c.all,
              parts: parts.digest,
            },
            answer: { digest: resp.digest, bytes: resp.bytes, status: ex.status },
            content: ex.answer.text,
            calls: ex.answer.calls.map((x) => x.id),
            tokens: ex.answer.usage.output_tokens,
          },
        },
        ...ex.answer.calls.map((x) => ({
          kind: 'model_proposed',
          payload: { call_id: x.id, tool: x.name, args: x.input, tokens: 0 },
        })),
      ]);
      counts.recorded += 1;
    },
    noAnswer: (_r, reason) => {
      throw new Error(`no answer: ${reason}`);
    },
    hook: () => Promise.resolve({}),
    badRequest: (_s, m) => {
      throw new Error(m);
    },
    recordingFailed: (_r, e) => {
      throw e;
    },
  };
}

/** A full collection before each memory figure (live memory, not what the collector has yet to free). */
const gc: () => void = (() => {
  const g = (globalThis as { gc?: () => void }).gc;
  if (g) return g;
  v8.setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
})();

type Msg = { t: string; [k: string]: unknown };

/**
 * The floor any Node proxy meets on this machine: request piped to the stand-in and its answer
 * piped back, nothing parsed, nothing recorded, in this thread. What the gateway adds beyond it is
 * the gateway's; what this adds over direct calls is the hop itself (a second server, two more
 * sockets, the scheduler of a 2-core machine).
 */
async function bareProxy(upstream: string): Promise<{ url: string; close: () => Promise<void> }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const server = http.createServer((req, res) => {
    const up = http.request(
      upstream + (req.url ?? '/'),
      { method: req.method, headers: req.headers, agent },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

class Peer {
  private waiting: { resolve: (m: Msg) => void; reject: (e: Error) => void } | null = null;
  private readonly queue: Msg[] = [];
  private gone: Error | null = null;
  constructor(readonly child: ChildProcess) {
    child.on('message', (m: Msg) => {
      const w = this.waiting;
      this.waiting = null;
      if (!w) this.queue.push(m);
      else if (m.t === 'error') w.reject(new Error(String(m.message)));
      else w.resolve(m);
    });
    child.on('exit', (code) => {
      this.gone = new Error(`the bench's peer exited (${code})`);
      this.waiting?.reject(this.gone);
    });
  }
  next(): Promise<Msg> {
    const m = this.queue.shift();
    if (m) return m.t === 'error' ? Promise.reject(new Error(String(m.message))) : Promise.resolve(m);
    if (this.gone) return Promise.reject(this.gone);
    return new Promise((resolve, reject) => (this.waiting = { resolve, reject }));
  }
  send(m: Msg): void {
    this.child.send(m);
  }
}

export async function benchGateway(
  calls = Number(process.env.PL_BENCH_GATEWAY_CALLS ?? 300),
): Promise<Record<string, unknown>> {
  // PL_BENCH_GATEWAY_ROWS=10KB,200KB: only those rows (and no session unless named).
  const only = process.env.PL_BENCH_GATEWAY_ROWS?.split(',') ?? null;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pl-bench-gw-'));
  // bench/gateway-peer.mjs, from the sources (tsx) or from dist/bench.js (scripts/bench.mjs).
  const here = path.dirname(fileURLToPath(import.meta.url));
  const peerFile = path.join(
    path.basename(here) === 'dist' ? path.join(here, '..', 'bench') : here,
    'gateway-peer.mjs',
  );
  const peer = new Peer(
    fork(peerFile, [], { env: { ...process.env, PL_BENCH_ANSWER: ANSWER }, stdio: 'inherit' }),
  );
  const ledger = Ledger.open(dir);
  const out: Record<string, unknown> = dict();
  try {
    const standin = String((await peer.next()).url);
    const gateway = async (name: string, inThread: boolean, recording = true) => {
      const runDir = path.join(dir, name);
      const writer = ledger.writer(name, { create: { source: 'executed' } });
      const counts = { recorded: 0 };
      const gw = startGateway({
        agent: 'claude-code',
        source: {
          kind: 'upstream',
          env: { ANTHROPIC_API_KEY: 'bench-key', PROOFLOOP_ANTHROPIC_UPSTREAM: standin },
        },
        token: 'bench-token',
        host: recording
          ? recordingHost(runDir, writer, counts)
          : { ...recordingHost(runDir, writer, counts), record: () => void (counts.recorded += 1) },
        prompt: 'turn 0',
        workspace: '/w',
        home: '/h',
        inThread,
      });
      const url = await gw.listen();
      return { gw, url, writer, counts };
    };
    /** What a row measures: the gateway in its own thread or the run's, or a bare Node proxy. */
    type Via = 'own' | 'run' | 'bare';
    const through = async (name: string, via: Via, recording: boolean) => {
      if (via !== 'bare') {
        const g = await gateway(name, via === 'run', recording);
        const thread = g.gw.threaded ? 'own' : "the run's";
        const close = async () => {
          await g.gw.close();
          g.writer.close();
        };
        return { url: g.url, counts: g.counts, thread, settle: () => g.gw.settle(), close };
      }
      const p = await bareProxy(standin);
      return {
        url: p.url,
        counts: { recorded: 0 },
        thread: 'a bare Node proxy',
        settle: async () => {},
        close: p.close,
      };
    };
    const rows: [name: string, bytes: number, via: Via, recording: boolean][] = [
      ['10KB', 10_000, 'own', true],
      ['200KB', 200_000, 'own', true],
      ['10KB_in_thread', 10_000, 'run', true],
      ['200KB_in_thread', 200_000, 'run', true],
      // The gateway with nothing recorded, in its own thread and in this one.
      ['10KB_proxy_only', 10_000, 'own', false],
      ['200KB_proxy_only', 200_000, 'own', false],
      ['10KB_proxy_only_in_thread', 10_000, 'run', false],
      ['200KB_proxy_only_in_thread', 200_000, 'run', false],
      // A bare Node proxy (bareProxy): the floor of any proxy here, not ProofLoop's code.
      ['10KB_bare_proxy', 10_000, 'bare', false],
      ['200KB_bare_proxy', 200_000, 'bare', false],
    ];
    for (const [name, bytes, via, recording] of rows) {
      if (only && !only.includes(name)) continue;
      const g = await through(name, via, recording);
      try {
        peer.send({
          t: 'calls',
          name,
          via: g.url,
          token: 'bench-token',
          bytes,
          calls,
          warmup: 20,
          gap_ms: 0,
        });
        const r = await peer.next();
        const t0 = performance.now();
        await g.settle();
        const lag = performance.now() - t0;
        const d = r.direct as number[];
        const v = r.via as number[];
        out[name] = {
          calls,
          gateway_thread: g.thread,
          direct_ms: { p50: pct(d, 50), p99: pct(d, 99) },
          gateway_ms: { p50: pct(v, 50), p99: pct(v, 99) },
          added_ms: {
            p50: +(pct(v, 50) - pct(d, 50)).toFixed(3),
            p99: +(pct(v, 99) - pct(d, 99)).toFixed(3),
          },
          goal_ok: pct(v, 99) - pct(d, 99) <= 2,
          // Every exchange recorded once settle() returns: how long recording trailed the last answer.
          recorded: g.counts.recorded,
          recording_trailed_ms: +lag.toFixed(1),
        };
      } finally {
        await g.close();
      }
    }
    out.goal = 'p99 added <= 2 ms per model call (10 KB and 200 KB requests); memory bounded over 500 turns';
    if (only && !only.includes('session')) return out;
    // A 500-turn session: each request resends the whole history (to ~200 KB at the end).
    const g = await gateway('session', false);
    const mem: {
      turn: number;
      heap_mb: number;
      gateway_heap_mb: number | null;
      rss_mb: number;
      recorded: number;
    }[] = [];
    try {
      peer.send({
        t: 'session',
        via: g.url,
        token: 'bench-token',
        turns: 500,
        bytes_per_turn: 400,
        pause_every: 100,
      });
      for (;;) {
        const m = await peer.next();
        if (m.t === 'session') {
          const times = m.times as number[];
          out.session_500 = {
            memory: mem,
            turn_ms: { p50: pct(times, 50), p99: pct(times, 99) },
          };
          break;
        }
        await g.gw.settle();
        gc();
        const u = process.memoryUsage();
        const gwHeap = await g.gw.heapUsed();
        mem.push({
          turn: Number(m.turn),
          heap_mb: +(u.heapUsed / 2 ** 20).toFixed(1),
          gateway_heap_mb: gwHeap === null ? null : +(gwHeap / 2 ** 20).toFixed(1),
          rss_mb: +(u.rss / 2 ** 20).toFixed(1),
          recorded: g.counts.recorded,
        });
        peer.send({ t: 'go_on' });
      }
    } finally {
      await g.gw.close();
      g.writer.close();
    }
  } finally {
    peer.send({ t: 'stop' });
    ledger.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

if (isMain('gateway')) console.log(JSON.stringify(await benchGateway(), null, 2));
