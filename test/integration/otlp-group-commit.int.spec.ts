import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Ledger, verifyEvents } from '../../electron/ledger';
import { startOtlpReceiver, type OtlpReceiver } from '../../electron/otlp';
import { decodeRequest } from '../../electron/otlp/decode';
import { LiveRuns } from '../../electron/otlp/runs';
import { freshFolder } from './helpers/tmp';

/**
 * Requests posted at once by another process, each on its own connection, while this thread (the
 * receiver's) is blocked: they are all waiting when it wakes, as requests are that arrive during a
 * commit. Posting them from this thread could not do that: each would be sent, and answered,
 * between two turns of its event loop.
 */
async function postTogether(port: number, bodies: string[]): Promise<{ status: number; body: string }[]> {
  const file = path.join(f.dir, `bodies-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(bodies));
  // Raw HTTP over sockets connected first: 'ready' is printed once every connection is up, and
  // the requests are written right after it, while this thread is blocked.
  const script = `
    const net = require('node:net');
    const bodies = JSON.parse(require('node:fs').readFileSync(${JSON.stringify(file)}, 'utf8'));
    const sockets = bodies.map(() => net.connect(${port}, '127.0.0.1'));
    let up = 0;
    const answers = [];
    let done = 0;
    sockets.forEach((s, i) => {
      let text = '';
      s.on('data', (d) => (text += d));
      s.on('end', () => {
        const [head, body] = text.split('\\r\\n\\r\\n');
        answers[i] = { head, body };
        if (++done === bodies.length) process.stdout.write(JSON.stringify(answers) + '\\n');
      });
      s.on('connect', () => {
        if (++up < bodies.length) return;
        process.stdout.write('ready\\n');
        sockets.forEach((t, j) => t.write(
          'POST /v1/traces HTTP/1.1\\r\\nHost: 127.0.0.1:${port}\\r\\nContent-Type: application/json\\r\\n' +
          'Connection: close\\r\\nContent-Length: ' + Buffer.byteLength(bodies[j]) + '\\r\\n\\r\\n' + bodies[j]));
      });
    });`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  let blocked = false;
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    if (!blocked && out.startsWith('ready\n')) {
      blocked = true;
      // The child writes now; this thread wakes in 300 ms, with every request waiting.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
    }
  });
  await new Promise((resolve) => child.on('exit', resolve));
  const raw = JSON.parse(out.split('\n')[1]!) as { head: string; body: string }[];
  return raw.map(({ head, body }) => ({
    status: Number(head.split(' ')[1]),
    body: /transfer-encoding: chunked/i.test(head) ? dechunk(body) : body,
  }));
}

/** An HTTP/1.1 chunked body's content. */
function dechunk(text: string): string {
  let out = '';
  for (let at = 0; ;) {
    const eol = text.indexOf('\r\n', at);
    const n = parseInt(text.slice(at, eol), 16);
    if (!n) return out;
    out += text.slice(eol + 2, eol + 2 + n);
    at = eol + 2 + n + 2;
  }
}

const kv = (key: string, v: string) => ({ key, value: { stringValue: v } });

/** One request of `n` execute_tool spans of conversation `conv`; `huge` makes each span's payload over 1 MiB. */
function requestOf(r: number, n: number, conv: string, huge = false): string {
  const spans = Array.from({ length: n }, (_, i) => ({
    traceId: (r + 1).toString(16).padStart(32, '0'),
    spanId: (r * 100 + i + 1).toString(16).padStart(16, '0'),
    name: 'execute_tool grep',
    startTimeUnixNano: String(1_700_000_000_000_000_000n + BigInt(r * 100 + i) * 1_000_000n),
    endTimeUnixNano: String(1_700_000_000_000_000_000n + BigInt(r * 100 + i) * 1_000_000n + 500n),
    attributes: [
      kv('gen_ai.operation.name', 'execute_tool'),
      kv('gen_ai.tool.name', 'grep'),
      kv('gen_ai.tool.call.id', `call-${r}-${i}`),
      kv('gen_ai.conversation.id', conv),
      kv('request', String(r)),
      // 140 attributes of 8 KiB (the receiver's bound on one value): 1.15 MB, over an event's 1 MiB.
      ...(huge ? Array.from({ length: 140 }, (_, k) => kv(`big.${k}`, 'x'.repeat(8192))) : []),
    ],
  }));
  return JSON.stringify({ resourceSpans: [{ scopeSpans: [{ scope: { name: 't' }, spans }] }] });
}

const f = freshFolder();

describe('group commit: requests that arrive together share one commit', () => {
  let ledger: Ledger;
  let rx: OtlpReceiver;
  beforeAll(async () => {
    ledger = Ledger.open(f.dir);
    rx = await startOtlpReceiver({ ledger: () => ledger, port: 0 });
  });
  afterAll(async () => {
    await rx?.close();
    ledger?.close();
    f.cleanup();
  });

  it('answers each after the commit, keeps each request contiguous and the chain whole', async () => {
    await postTogether(rx.port, [requestOf(99, 1, 'grouped')]); // the run and its writer exist
    // The decode thread starts with the first body (decode-thread.ts): a burst of another run's
    // first, so that the measured eight meet a thread that has decoded before, as a receiver in use has.
    await postTogether(
      rx.port,
      Array.from({ length: 8 }, (_, r) => requestOf(100 + r, 20, 'warm-up')),
    );
    const before = { ...rx.stats };
    const answers = await postTogether(
      rx.port,
      Array.from({ length: 8 }, (_, r) => requestOf(r, 20, 'grouped')),
    );
    for (const a of answers) expect(a).toEqual({ status: 200, body: '{}' });
    // Fewer commits than requests: at least two of the eight were appended together.
    expect(rx.stats.requests - before.requests).toBe(8);
    expect(rx.stats.groups - before.groups).toBeLessThan(8);
    const events = ledger.read('otlp-grouped');
    // A span without a result: tool_invoked and tool_returned, 2 events a span.
    expect(events.length).toBe(2 + 8 * 20 * 2);
    const order = events
      .slice(2)
      .map((e) => (e.payload.otel as { attributes?: { request?: string } }).attributes?.request);
    const runs = order.filter((r, i) => r !== undefined && r !== order[i - 2]);
    // Each request's 40 events are one stretch: its request number changes 8 times in all.
    expect(new Set(runs).size).toBe(8);
    expect(runs.length).toBe(8);
    const run = ledger.run('otlp-grouped')!;
    const report = verifyEvents(run.run_id, events, {
      expectedHead: { seq: run.head_seq, hash: run.head_hash },
    });
    expect(report.findings).toEqual([]);
    expect(report.ok).toBe(true);
  });

  it('refuses only the request that cannot be appended when it shares a group with others', () => {
    // LiveRuns.ingestMany itself, with the three requests as one group (which requests arrive
    // together over sockets is up to the scheduler): the group's one append fails on the middle
    // request's payload, and each request's share is appended again alone.
    const runs = new LiveRuns(() => ledger, 60_000);
    const decoded = [requestOf(0, 5, 'mixed'), requestOf(1, 2, 'mixed', true), requestOf(2, 5, 'mixed')].map(
      (body) => {
        const d = decodeRequest('traces', Buffer.from(body), 'json');
        if (d.signal !== 'traces') throw new Error('not traces');
        return d.records.map((r) => ({ kind: 'span' as const, r }));
      },
    );
    const results = runs.ingestRecords(decoded);
    runs.close();
    expect(results[0]).toEqual({ accepted: 5, rejected: 0, errors: [], runs: ['otlp-mixed'] });
    expect(results[2]).toEqual({ accepted: 5, rejected: 0, errors: [], runs: ['otlp-mixed'] });
    expect(results[1]!.accepted).toBe(0);
    expect(results[1]!.rejected).toBe(2);
    expect(results[1]!.errors[0]).toMatch(/over the 1048576-byte limit of one event/);
    const events = ledger.read('otlp-mixed');
    expect(events.length).toBe(2 * 5 * 2);
    const requestOfEvent = (e: (typeof events)[number]) =>
      (e.payload.otel as { attributes?: { request?: string } }).attributes?.request;
    expect(events.filter((e) => requestOfEvent(e) !== undefined).map(requestOfEvent)).toEqual([
      ...Array<string>(5).fill('0'),
      ...Array<string>(5).fill('2'),
    ]);
  });
});
