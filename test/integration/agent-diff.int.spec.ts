/**
 * The cause of the first divergence between two real agents' runs (electron/runner/agent-diff.ts),
 * over runs written to a real ledger with the events and artifacts a run records: each cause where
 * it arises (decision, environment, model, structure, request at the head or a message, a tool
 * result in a request, agent_version), how the two were set up differently, and none for runs
 * that are not real agents'.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { Ledger } from '../../electron/ledger';
import { storeArtifact } from '../../electron/ledger/artifact-store';
import { diffRunsExplained } from '../../electron/runner/agent-diff';
import { storeParts } from '../../electron/runner/request-parts';
import { freshFolder } from './helpers/tmp';

let ledger: Ledger;
const f = freshFolder();
beforeAll(() => (ledger = Ledger.open(f.dir)));
afterAll(() => {
  ledger?.close();
  f.cleanup();
});

type Item = { kind: string; payload: Record<string, unknown> };
interface Shape {
  version?: string;
  config?: Record<string, string>;
  /** The first request: its system prompt and its messages (a tool result is a user message of tool_result blocks). */
  system?: string;
  messages?: unknown[];
  answer?: string;
  allowed?: boolean;
  result?: string;
  turns?: number;
  agent?: string;
}

let n = 0;
/** A real agent's run as real-run.ts records it (requests stored as parts, canonical digests). */
function agentRun(s: Shape = {}): string {
  const runId = `agent-run-${++n}-aaaaaa`;
  const runDir = path.join(ledger.folder, runId);
  const w = ledger.writer(runId, { create: { source: 'executed' } });
  const config = s.config ?? { '<home>/.claude/settings.json': 'a'.repeat(64) };
  const items: Item[] = [
    {
      kind: 'run_started',
      payload: {
        task_id: 'fix-slugify',
        goal: 'fix it',
        agent: {
          name: s.agent ?? 'claude-code',
          version: s.version ?? '2.1.328',
          model_from: 'sim',
          model: 'm',
        },
        config,
        config_digest: JSON.stringify(config),
        paths: { workspace: `${runDir}/workspace`, home: `${runDir}/home` },
      },
    },
  ];
  const messages = s.messages ?? [{ role: 'user', content: [{ type: 'text', text: 'fix it' }] }];
  for (let t = 0; t < (s.turns ?? 1); t++) {
    const body = { system: [{ type: 'text', text: s.system ?? 'You are Claude Code.' }], messages };
    const req = storeParts(runDir, body);
    // What the dialect's canonical form digests: the head and each message (here: as they are).
    const parts = {
      head: `head:${s.system ?? ''}`,
      messages: messages.map((m) => JSON.stringify(m)),
      all: JSON.stringify(body),
    };
    const p = storeArtifact(runDir, JSON.stringify(parts), { redacted: true });
    items.push(
      {
        kind: 'model_responded',
        payload: {
          lane: 'main',
          index: t,
          content: 'reading',
          request: { digest: req.digest, bytes: 100, canonical: parts.all, parts: p.digest },
          answer: { digest: 'f'.repeat(64), bytes: 10, status: 200, canonical: s.answer ?? 'answer-1' },
        },
      },
      {
        kind: 'model_proposed',
        payload: { call_id: `toolu_${t}`, tool: 'Read', args: { file_path: 'slug.js' } },
      },
      {
        kind: s.allowed === false ? 'action_denied' : 'action_allowed',
        payload: { call_id: `toolu_${t}`, rule: s.allowed === false ? 'paths' : 'paths.read', reason: 'r' },
      },
      {
        kind: 'tool_returned',
        payload: {
          call_id: `toolu_${t}`,
          status: 'ok',
          duration_ms: 1,
          result_digest: s.result ?? 'result-1',
        },
      },
    );
  }
  items.push({ kind: 'run_completed', payload: { outcome: 'passed' } });
  w.appendBatch(items);
  w.close();
  return runId;
}

const diff = async (a: Shape, b: Shape) => (await diffRunsExplained(ledger, agentRun(a), agentRun(b))).cause;

describe('why two real agents’ runs part', () => {
  it('alike: no divergence, no cause', async () => {
    expect(await diff({}, {})).toBeNull();
  });

  it('the policy decided otherwise: decision', async () => {
    expect(await diff({}, { allowed: false })).toMatchObject({
      cause: 'decision',
      reason: 'the policy decided allow (paths.read) → deny (paths)',
    });
  });

  it('a tool result differs: environment', async () => {
    expect(await diff({}, { result: 'result-2' })).toMatchObject({ cause: 'environment' });
  });

  it('the same request answered otherwise: model', async () => {
    expect(await diff({}, { answer: 'answer-2' })).toMatchObject({ cause: 'model' });
  });

  it('a turn more: structure', async () => {
    expect(await diff({}, { turns: 2 })).toMatchObject({ cause: 'structure' });
  });

  it('the system prompt differs: request at the head; with another agent version: agent_version', async () => {
    expect(await diff({}, { system: 'You are Claude Code. Be brief.' })).toMatchObject({
      cause: 'request',
      part: 'head',
    });
    const v = await diff({}, { system: 'You are Claude Code 2.2.', version: '2.2.0' });
    expect(v).toMatchObject({ cause: 'agent_version', reason: 'agent version 2.1.328 → 2.2.0' });
    expect(v?.setup).toContain('agent version 2.1.328 → 2.2.0');
  });

  it('instructions in a message: request at that message, with the configuring file named; a tool result in a message: environment', async () => {
    const md = { '<home>/.claude/settings.json': 'a'.repeat(64), '<workspace>/CLAUDE.md': 'b'.repeat(64) };
    const withMd = [{ role: 'user', content: [{ type: 'text', text: '# CLAUDE.md\nBe brief.\n\nfix it' }] }];
    const c = await diff({}, { messages: withMd, config: md });
    expect(c).toMatchObject({ cause: 'request', part: 'messages[0]' });
    expect(c?.setup).toEqual(['<workspace>/CLAUDE.md added']);
    const result = (text: string) => [
      { role: 'user', content: [{ type: 'text', text: 'fix it' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_0', name: 'Read', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_0', content: text }] },
    ];
    expect(await diff({ messages: result('ok 1') }, { messages: result('not ok 1') })).toMatchObject({
      cause: 'environment',
      part: 'messages[2]',
    });
  });

  it('runs that are not real agents’ (the simulated agent) get no cause', async () => {
    const sim = (variant: string) => {
      const id = `sim-run-${++n}-bbbbbb`;
      const w = ledger.writer(id, { create: { source: 'executed' } });
      w.appendBatch([
        { kind: 'run_started', payload: { task_id: 't', goal: 'g', agent: { name: 'sim', variant } } },
        { kind: 'run_completed', payload: { outcome: variant } },
      ]);
      w.close();
      return id;
    };
    const d = await diffRunsExplained(ledger, sim('careful'), sim('hasty'));
    expect(d.first_divergence).not.toBeNull();
    expect(d.cause).toBeNull();
  });
});
