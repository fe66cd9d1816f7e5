/**
 * Redaction throughput: `npx tsx bench/redact.ts`. Generates 100,000 realistic event envelopes
 * (tool outputs, patches, model text, ~2% with a planted fake secret) and redacts each with the
 * `credentials` and `share` profiles. Goal: ≥ 50,000 events/s with `share`.
 */
import { createHash } from 'node:crypto';
import { createRedactor, type RedactProfile } from '../shared/redact';
import { mulberry32 as prng } from '../shared/prng';
import { isMain } from './is-main';

export interface BenchFigure {
  profile: RedactProfile;
  events: number;
  bytes: number;
  ms: number;
  events_per_s: number;
  hits: number;
}

const WORDS = (
  'the function returns value when input is empty so we check length before calling parse and then ' +
  'update the cache test passes fails expected received line column module import export const let ' +
  'token tokens budget step retry timeout error warning file path src lib index util config user ' +
  'request response status ok done version 1.2.3 build run node npm vitest assert equal deep'
).split(' ');

/** Fake secrets, assembled at run time so no scanner mistakes this file for a leak. */
const FAKE_SECRETS = [
  'ghp_' + 'Bench0Fake1'.repeat(4).slice(0, 36),
  'AKIA' + 'BENCHFAKE0000000',
  'sk-proj-' + 'benchFake_'.repeat(4),
  'xoxb-' + '123456789012-bench-fake',
  'npm_' + 'benchfake0'.repeat(4).slice(0, 36),
  'eyJhbGciOiJIUzI1NiJ9.' + 'eyJzdWIiOiJiZW5jaCJ9.' + 'c2lnbmF0dXJlLWZha2U',
  'password=' + 'bench-fake-pw',
  'postgres://app:' + 'benchfakepw' + '@db.internal:5432/app',
];

export function generateEvents(n: number, seed = 42): unknown[] {
  const rnd = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const text = (words: number): string => {
    const out: string[] = [];
    for (let i = 0; i < words; i++) out.push(pick(WORDS));
    if (rnd() < 0.02) out.splice(Math.floor(rnd() * out.length), 0, pick(FAKE_SECRETS));
    if (rnd() < 0.05) out.push('/home/dev/work/src/index.ts');
    if (rnd() < 0.03) out.push('contact dev@example.org at 10.0.3.17');
    return out.join(' ');
  };
  const hex = (len: number): string => {
    let s = '';
    while (s.length < len)
      s += Math.floor(rnd() * 0xffffffff)
        .toString(16)
        .padStart(8, '0');
    return s.slice(0, len);
  };
  const patch = (lines: number): string => {
    const out = ['--- a/src/parse.ts', '+++ b/src/parse.ts', '@@ -10,7 +10,7 @@'];
    for (let i = 0; i < lines; i++) out.push((rnd() < 0.3 ? '+' : rnd() < 0.5 ? '-' : ' ') + '  ' + text(6));
    return out.join('\n');
  };
  const events: unknown[] = [];
  let prev = '0'.repeat(64);
  for (let seq = 1; seq <= n; seq++) {
    const call = `call-${seq >> 2}`;
    let kind: string;
    let payload: Record<string, unknown>;
    switch (seq % 6) {
      case 0:
        kind = 'model_proposed';
        payload = {
          call_id: call,
          tool: 'bash',
          args: { cmd: `npm test -- ${text(8)}`, cwd: 'workspace' },
          tokens: 120,
        };
        break;
      case 1:
        kind = 'tool_invoked';
        payload = {
          call_id: call,
          tool: 'read_file',
          args: { path: `src/${pick(WORDS)}.ts`, note: text(20) },
        };
        break;
      case 2:
        kind = 'tool_returned';
        payload = {
          call_id: call,
          status: 'ok',
          duration_ms: Math.floor(rnd() * 900),
          excerpt: text(10 + Math.floor(rnd() * 200)),
          result_digest: hex(64),
          bytes: 4096,
          summary: text(30),
        };
        break;
      case 3:
        kind = 'model_responded';
        payload = {
          content: text(10 + Math.floor(rnd() * 150)),
          tokens: Math.floor(rnd() * 4000),
          reasoning: text(40),
        };
        break;
      case 4:
        kind = 'file_changed';
        payload = {
          path: 'src/parse.ts',
          before: hex(64),
          after: hex(64),
          patch: patch(3 + Math.floor(rnd() * 15)),
        };
        break;
      default:
        kind = 'context_updated';
        payload = { op: 'append', tokens_before: 1000, tokens_after: 1200, digest: hex(64), note: text(25) };
    }
    const hash = hex(64);
    events.push({
      seq,
      run_id: 'run-7f3a',
      kind,
      v: 1,
      at: new Date(Date.UTC(2026, 10, 29, 8, 0, 0, seq)).toISOString(),
      payload,
      prev,
      hash,
    });
    prev = hash;
  }
  return events;
}

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

export function benchRedact(n = 100_000): BenchFigure[] {
  const events = generateEvents(n);
  const bytes = events.reduce<number>((acc, e) => acc + JSON.stringify(e).length, 0);
  const figures: BenchFigure[] = [];
  for (const profile of ['credentials', 'share'] as const) {
    // Warm up the regexes (JIT) on a slice, with a throwaway redactor.
    const warm = createRedactor(profile, { sha256 });
    for (let i = 0; i < Math.min(5000, n); i++) warm.redactValue(events[i]);
    const r = createRedactor(profile, { sha256 });
    let hits = 0;
    const t0 = performance.now();
    for (const e of events) hits += r.redactValue(e).hits;
    const ms = performance.now() - t0;
    figures.push({
      profile,
      events: n,
      bytes,
      ms: Math.round(ms),
      events_per_s: Math.round((n / ms) * 1000),
      hits,
    });
  }
  return figures;
}

if (isMain('redact')) {
  for (const f of benchRedact()) {
    console.log(
      `${f.profile.padEnd(11)} ${f.events} events (${(f.bytes / f.events).toFixed(0)} B avg) in ${f.ms} ms: ` +
        `${f.events_per_s} events/s, ${f.hits} hits`,
    );
  }
}
