/**
 * What is run-specific in a real agent's run, normalised in one place (gateway/canonical.ts
 * normaliseText) before the digests runs are compared by, and the run diff comparing a real
 * agent's events by those digests (shared/diff/normalise.ts): two runs of one task that did the
 * same thing compare equal; a real difference still shows.
 */
import { describe, expect, it } from 'vitest';
import { answerDigest, normaliseText } from '../../electron/runner/gateway/canonical';
import type { ModelAnswer, NormaliseContext } from '../../electron/runner/gateway/types';
import { diffRunEvents } from '../../shared/diff';
import type { FoldEvent } from '../../shared/state';

const run = (id: string, port: number, token: string): NormaliseContext => ({
  workspace: `/runs/${id}/workspace`,
  home: `/runs/${id}/home`,
  runDir: `/runs/${id}`,
  runId: id,
  token,
  gateway: `http://127.0.0.1:${port}`,
});
const A = run('fix-slugify-claude-code-20261204T060118-ae6db1', 41_234, 'a'.repeat(48));
const B = run('fix-slugify-claude-code-20261204T060140-548f4d', 39_001, 'b'.repeat(48));

/** The same text as each run would see it. */
const seen = (c: NormaliseContext, extra = '') =>
  [
    `Primary working directory: ${c.workspace}`,
    `project key ${c.workspace.replace(/[^A-Za-z0-9]/g, '-')}`,
    `HOME=${c.home} TMPDIR=${c.runDir}/tmp RUN=${c.runId}`,
    `ANTHROPIC_BASE_URL=${c.gateway} PROOFLOOP_HOOK_TOKEN=${c.token}`,
    `session ${c === A ? '0e9ab6c7-e7f6-4dd4-8544-54dad048434d' : 'a0d96e01-c940-407a-8248-6e2cbcf760e3'}`,
    `today ${c === A ? '2026-12-04T06:01:18.737Z' : '2026-12-05 07:02:03'}`,
    `subagent ${c === A ? 'a2d9fa7a30e948492' : 'a5680d1c49983fc7e'}`,
    `{"duration_ms": ${c === A ? 12 : 3456}}`,
    `/tmp/claude-${c === A ? 0 : 1000}/cwd`,
    extra,
  ].join('\n');

describe('normaliseText: the one list of what is run-specific', () => {
  it('two runs that saw the same thing normalise to one text, each item by its placeholder', () => {
    const a = normaliseText(seen(A), A);
    expect(a).toBe(normaliseText(seen(B), B));
    for (const placeholder of [
      'Primary working directory: <workspace>',
      'project key <workspace-key>',
      'HOME=<home> TMPDIR=<run-dir>/tmp RUN=<run>',
      'ANTHROPIC_BASE_URL=<gateway> PROOFLOOP_HOOK_TOKEN=<token>',
      'session <uuid>',
      'today <date>',
      'subagent <agent>',
      '"duration_ms": <ms>',
      '<tmp>/cwd',
    ])
      expect(a).toContain(placeholder);
    // Nothing of either run is left.
    for (const c of [A, B]) for (const v of [c.runId, c.token, c.gateway]) expect(a).not.toContain(v);
  });

  it('what is not run-specific still tells runs apart', () => {
    expect(normaliseText(seen(A, 'test 3 failed'), A)).not.toBe(normaliseText(seen(B, 'test 3 passed'), B));
    // A short run id is not replaced inside other words (it could match by chance).
    expect(normaliseText('a run of abc', { workspace: '/w', home: '/h', runId: 'abc' })).toBe('a run of abc');
  });

  it("an answer's digest covers its text, calls (tool, input) and stop, not its ids or the run's paths", () => {
    const answer = (c: NormaliseContext, id: string, file = 'slug.js'): ModelAnswer => ({
      text: `Reading ${c.workspace}/${file}`,
      calls: [{ id, name: 'Read', input: { file_path: `${c.workspace}/${file}` } }],
      stop: 'tool_use',
      usage: { input_tokens: 10, output_tokens: 5 },
      model: 'm',
    });
    expect(answerDigest(answer(A, 'toolu_1'), A)).toBe(answerDigest(answer(B, 'toolu_99'), B));
    expect(answerDigest(answer(A, 'toolu_1'), A)).not.toBe(answerDigest(answer(B, 'toolu_1', 'test.js'), B));
  });
});

describe('the run diff compares real agents by their normalised digests', () => {
  const ev = (runId: string, seq: number, kind: string, payload: Record<string, unknown>): FoldEvent => ({
    seq,
    run_id: runId,
    kind,
    v: 1,
    at: `2026-12-04T06:0${seq}:00.000Z`,
    payload,
  });
  /** A real agent's run: its raw content addresses differ from any other run's, its normalised digests not. */
  const agentRun = (
    runId: string,
    o: { canonical?: string; result?: string; sub?: string; flushes?: number } = {},
  ) => {
    const raw = (what: string) => `${what}-${runId}`.padEnd(64, '0').slice(0, 64);
    return [
      ev(runId, 1, 'run_started', {
        task_id: 't',
        goal: 'g',
        agent: { name: 'claude-code', model_from: 'sim', version: '2.1.328' },
        paths: { workspace: `/elsewhere/${runId.slice(-3)}/workspace` },
      }),
      ev(runId, 2, 'model_responded', {
        lane: 'main',
        index: 0,
        content: `Reading /elsewhere/${runId.slice(-3)}/workspace/slug.js`,
        calls: [`toolu_${runId}`],
        request: {
          digest: raw('req'),
          bytes: 1000 + runId.length,
          canonical: o.canonical ?? 'c1',
          parts: 'p1',
        },
        answer: { digest: raw('ans'), bytes: 300, status: 200, canonical: 'a1' },
        // Counted over the raw bytes, which hold the run's own paths and a subagent's duration_ms.
        usage: { input_tokens: Math.ceil((1000 + runId.length) / 4), output_tokens: 20 + runId.length },
        tokens: 20 + runId.length,
      }),
      ev(runId, 3, 'action_allowed', {
        call_id: `toolu_${runId}`,
        rule: 'paths.read',
        agent_id: o.sub ?? runId,
      }),
      ev(runId, 4, 'tool_returned', {
        call_id: `toolu_${runId}`,
        status: 'ok',
        duration_ms: 3,
        digest: raw('out'),
        bytes: 40,
        excerpt: `took ${runId.length} ms`,
        artifact: { digest: raw('out'), redacted: false },
        result_digest: o.result ?? 'r1',
      }),
      ev(runId, 5, 'agent_exited', { code: 0, signal: null, stdout: { digest: raw('stdout'), bytes: 9 } }),
      ev(runId, 6, 'files_redacted', {
        home: {
          kept: [`home/.claude/projects/-elsewhere-${runId}-workspace/${runId}.jsonl`],
          removed: runId.length,
        },
        workspace: [{ path: '.env', credentials: 2 }],
      }),
      ev(runId, 7, 'transcript_linked', {
        run_id: `${runId}-session`,
        file: `home/${runId}.jsonl`,
        subagent: null,
        // Claude Code's transcript holds more lines when it flushes its metadata more often.
        events: 5 + (o.flushes ?? 0),
      }),
    ];
  };
  const diff = (a: FoldEvent[], b: FoldEvent[]) =>
    diffRunEvents({ run_id: a[0]!.run_id, events: a }, { run_id: b[0]!.run_id, events: b });

  it('two runs that did the same thing are alike event by event', () => {
    const d = diff(agentRun('run-one-aaaaaa'), agentRun('run-two-bbbbbbbbb', { flushes: 2 }));
    expect(d.first_divergence).toBeNull();
    expect(d.counts).toMatchObject({ changed: 0, only_left: 0, only_right: 0 });
  });

  it('a request that differs in its canonical form, or a tool result in its normalised digest, is the first divergence', () => {
    const req = diff(agentRun('run-one-aaaaaa'), agentRun('run-two-bbbbbb', { canonical: 'c2' }));
    expect(req.first_divergence).toMatchObject({
      type: 'changed',
      left_seq: 2,
      left_kind: 'model_responded',
    });
    const res = diff(agentRun('run-one-aaaaaa'), agentRun('run-two-bbbbbb', { result: 'r2' }));
    expect(res.first_divergence).toMatchObject({ type: 'changed', left_seq: 4, left_kind: 'tool_returned' });
  });

  it('a simulated run (no canonical digests) is compared as before: its raw digests count', () => {
    const sim = (runId: string, digest: string) => [
      ev(runId, 1, 'tool_returned', { call_id: 'c', status: 'ok', duration_ms: 1, digest, bytes: 4 }),
    ];
    const d = diff(sim('sim-aaaaaa', 'd'.repeat(64)), sim('sim-bbbbbb', 'e'.repeat(64)));
    expect(d.first_divergence).toMatchObject({ type: 'changed', left_seq: 1 });
  });
});
