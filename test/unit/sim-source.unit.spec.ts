/**
 * The sim answer source answers two alike runs alike, usage included: Claude Code tells the model
 * how much context is left from the usage it was given, so a count that follows the raw bytes
 * (which hold the run's own paths and a subagent's duration) made two alike runs ask differently
 * from the next request on (`--repeat 2` parted at seq 24 under load, cause `model`).
 */
import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { anthropic } from '../../electron/runner/gateway/anthropic';
import { simSource } from '../../electron/runner/gateway/sim-source';
import { claudeCode } from '../../electron/runner/agents/claude-code';
import { loadTask } from '../../electron/runner/catalog';

const task = loadTask(path.join(__dirname, '../../tasks'), 'fix-slugify');

/** The main lane's second request of a run in `workspace`: the prompt, a Task call, its hand-back. */
function request(workspace: string, handBackMs: number) {
  const body = {
    model: 'claude-sonnet-4-5',
    max_tokens: 1000,
    system: [{ type: 'text', text: `You work in ${workspace}.` }],
    // A request with tools is a conversation's (a lane); one without is a side call.
    tools: [{ name: 'Read', description: 'Read a file', input_schema: { type: 'object' } }],
    messages: [
      { role: 'user', content: [{ type: 'text', text: task.task.goal }] },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'toolu_a', name: 'Task', input: { prompt: 'look' } }],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_a',
            content: `slug.js holds it, in ${workspace}.\n<usage>tool_uses: 1\nduration_ms: ${handBackMs}</usage>`,
          },
        ],
      },
    ],
  };
  const rawBody = Buffer.from(JSON.stringify(body));
  return {
    parsed: anthropic.parse(body, {}, task.task.goal),
    body,
    rawBody,
    canonical: anthropic.canonical(body, { workspace, home: path.join(workspace, '..', 'home') }),
    index: 1,
    headers: {},
    path: '/v1/messages',
  };
}

const source = (workspace: string) =>
  simSource({
    variant: 'careful',
    seed: 1,
    taskId: 'fix-slugify',
    goal: task.task.goal,
    judgeCommand: task.task.judge.command,
    hints: task.task.sim ?? null,
    workspace,
    tools: claudeCode.sim,
  });

describe('the sim source', () => {
  it('answers alike runs alike, usage included, though their raw requests differ in length', async () => {
    const a = '/runs/fix-slugify-claude-code-20261204T211705-b2148c/workspace';
    const b = '/a/longer/folder/of/runs/fix-slugify-claude-code-20261204T211718-3a3559/workspace';
    const ra = request(a, 854);
    const rb = request(b, 1012);
    expect(ra.rawBody.length).not.toBe(rb.rawBody.length);
    expect(JSON.stringify(ra.canonical)).toBe(JSON.stringify(rb.canonical));
    const [x, y] = await Promise.all([source(a).answer(ra), source(b).answer(rb)]);
    expect(x.type).toBe('answer');
    if (x.type !== 'answer' || y.type !== 'answer') return;
    expect(x.answer.usage).toEqual(y.answer.usage);
    expect(x.answer.usage.input_tokens).toBeGreaterThan(0);
    // The answer itself names each run's own workspace.
    expect(JSON.stringify(x.answer.calls)).toContain(a);
    expect(JSON.stringify(y.answer.calls)).toContain(b);
  });
});
