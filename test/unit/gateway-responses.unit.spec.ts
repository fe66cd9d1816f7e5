import { describe, expect, it } from 'vitest';
import { responses } from '../../electron/runner/gateway/responses';
import type { ModelAnswer } from '../../electron/runner/gateway/types';

const PROMPT = 'Fix the discount calculation.';
const WS = '/runs/r1/workspace';
const HOME = '/runs/r1/home';

/** A request shaped as Codex 0.169.0 sends it (ids, metadata and frame values as it mints them). */
function request(opts: {
  ws?: string;
  home?: string;
  agents?: string;
  thread?: string;
  output?: string;
  turns?: number;
}): Record<string, unknown> {
  const ws = opts.ws ?? WS;
  const home = opts.home ?? HOME;
  const thread = opts.thread ?? '01a23e00-2a49-7362-a7fa-9a919bd0158f';
  const input: unknown[] = [
    {
      type: 'message',
      id: 'msg_a',
      role: 'developer',
      content: [{ type: 'input_text', text: 'You are Codex.' }],
    },
    {
      type: 'message',
      id: `msg_${thread}`,
      role: 'developer',
      content: [{ type: 'input_text', text: `<skills_instructions>\n- r0 = ${home}/.codex/skills/.system` }],
    },
    {
      type: 'message',
      id: 'msg_c',
      role: 'user',
      content: [
        {
          type: 'input_text',
          text: `# AGENTS.md instructions for ${ws}\n\n<INSTRUCTIONS>\n${opts.agents ?? 'Run the tests.'}\n</INSTRUCTIONS>`,
        },
        {
          type: 'input_text',
          text: `<environment_context>\n  <cwd>${ws}</cwd>\n  <current_date>2026-12-03</current_date>\n  <timezone>Etc/UTC</timezone>\n</environment_context>`,
        },
      ],
    },
    { type: 'message', id: 'msg_d', role: 'user', content: [{ type: 'input_text', text: PROMPT }] },
  ];
  for (let t = 0; t < (opts.turns ?? 1); t++) {
    input.push({
      type: 'function_call',
      id: `fc_${thread}_${t}`,
      name: 'exec_command',
      arguments: JSON.stringify({ cmd: 'cat price.js', login: false }),
      call_id: `call_${thread.slice(0, 8)}_${t}`,
    });
    input.push({
      type: 'function_call_output',
      id: `fco_${thread}_${t}`,
      call_id: `call_${thread.slice(0, 8)}_${t}`,
      output: `Chunk ID: ${thread.slice(0, 6)}\nWall time: 0.${t}123 seconds\nProcess exited with code 0\nOriginal token count: 4\nOutput:\n${opts.output ?? 'x = 1'}\n`,
    });
  }
  return {
    model: 'gpt-5.5',
    stream: true,
    input,
    tools: [{ type: 'function', name: 'exec_command', parameters: { type: 'object' } }],
    tool_choice: 'auto',
    parallel_tool_calls: true,
    store: false,
    prompt_cache_key: thread,
    client_metadata: {
      session_id: thread,
      'x-codex-turn-metadata': `{"turn_started_at_unix_ms":${Date.now()}}`,
    },
  };
}

const headers = {
  authorization: 'Bearer tok',
  'user-agent': 'codex_exec/0.169.0 (Debian 12.0.0; x86_64) xterm',
};

describe('the Responses dialect (Codex)', () => {
  it('routes POST /v1/responses and reads the token from Authorization: Bearer', () => {
    expect(responses.route('POST', '/v1/responses')).toBe('model');
    expect(responses.route('GET', '/v1/responses')).toBeNull();
    expect(responses.route('POST', '/v1/messages')).toBeNull();
    expect(responses.token({ authorization: 'Bearer abc' })).toBe('abc');
    expect(responses.token({ 'x-api-key': 'abc' })).toBeNull();
  });

  it('parses the lane from the prompt (not the AGENTS.md / environment message), the turn and the trailing results', () => {
    const p = responses.parse(request({ turns: 2 }), headers, PROMPT);
    expect(p.lane).toBe('main');
    expect(p.prompt).toBe(PROMPT);
    expect(p.turn).toBe(2);
    expect(p.agentVersion).toBe('0.169.0');
    expect(p.results).toHaveLength(1);
    expect(p.results[0]!.call_id).toMatch(/_1$/);
    // The frame's per-process values are not part of the result.
    expect(p.results[0]!.output).toContain('Chunk ID: <id>\nWall time: <t>\n');
    expect(p.results[0]!.is_error).toBe(false);
    const other = responses.parse(request({}), headers, 'another prompt');
    expect(other.lane).toMatch(/^sub:[0-9a-f]{12}$/);
    const side = responses.parse({ ...request({}), tools: [] }, headers, PROMPT);
    expect(side.lane).toBe('side');
  });

  it('reads a blocked call and a non-zero exit as errors', () => {
    const blocked = responses.toolResultOf({
      type: 'function_call_output',
      call_id: 'c',
      output: 'Command blocked by PreToolUse hook: ProofLoop policy (commands): no. Command: curl x',
    });
    expect(blocked[0]!.is_error).toBe(true);
    const exit1 = responses.toolResultOf({
      type: 'function_call_output',
      call_id: 'c',
      output: 'Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 1\nOutput:\nnot ok\n',
    });
    expect(exit1[0]!.is_error).toBe(true);
    const patch = responses.toolResultOf({
      type: 'custom_tool_call_output',
      call_id: 'p',
      output:
        'Exit code: 0\nWall time: 0.2 seconds\nOutput:\nSuccess. Updated the following files:\nM a.js\n',
    });
    expect(patch[0]!.is_error).toBe(false);
    expect(patch[0]!.running).toBeUndefined();
    const running = responses.toolResultOf({
      type: 'function_call_output',
      call_id: 's',
      output:
        'Chunk ID: 9\nWall time: 2.0 seconds\nProcess running with session ID 41\nOutput:\nwarming up\n',
    });
    expect(running[0]).toMatchObject({ running: true, is_error: false });
    expect(running[0]!.output).toContain('session ID <n>');
  });

  it('gives two runs of the same conversation the same canonical form, and names what changed', () => {
    const a = responses.canonical(request({ turns: 2 }), { workspace: WS, home: HOME });
    const b = responses.canonical(
      request({
        turns: 2,
        ws: '/runs/r2/workspace',
        home: '/runs/r2/home',
        thread: '01a23eff-0000-7000-8000-000000000001',
      }),
      { workspace: '/runs/r2/workspace', home: '/runs/r2/home' },
    );
    expect(JSON.stringify(b)).toBe(JSON.stringify(a));
    const text = JSON.stringify(a);
    expect(text).not.toContain('/runs/r1');
    expect(text).not.toContain('prompt_cache_key');
    expect(text).not.toContain('fc_');
    expect(text).toContain('"call_id":"call_1"');
    // One message per input item: AGENTS.md changes the context message (no tool result in it),
    // a tool's output changes its function_call_output (a tool result): request vs environment.
    const firstDiff = (x: { messages: unknown[] }) =>
      x.messages.findIndex((m, k) => JSON.stringify(m) !== JSON.stringify(a.messages[k]));
    const agentsBody = request({ turns: 2, agents: 'Never run the tests.' });
    const agents = responses.canonical(agentsBody, { workspace: WS, home: HOME });
    expect(JSON.stringify(agents.head)).toBe(JSON.stringify(a.head));
    const k = firstDiff(agents);
    expect(k).toBe(2);
    expect(responses.toolResultOf((agentsBody.input as unknown[])[k])).toEqual([]);
    const envBody = request({ turns: 2, output: 'x = 2' });
    const env = responses.canonical(envBody, { workspace: WS, home: HOME });
    const j = firstDiff(env);
    expect(j).toBe(5);
    expect(responses.toolResultOf((envBody.input as unknown[])[j])[0]!.output).toContain('x = 2');
  });

  it('renders an answer as the SSE Codex reads, and reads it back (function and freeform calls)', () => {
    const answer: ModelAnswer = {
      text: 'Patching it.',
      calls: [
        { id: 'call_1', name: 'exec_command', input: { cmd: 'node test.js', login: false } },
        {
          id: 'call_2',
          name: 'apply_patch',
          kind: 'custom',
          input: { input: '*** Begin Patch\n*** End Patch\n' },
        },
      ],
      stop: 'tool_use',
      usage: { input_tokens: 100, output_tokens: 7 },
      model: 'gpt-5.5',
    };
    const r = responses.render(answer, 'msg_pl000001', true);
    expect(r.contentType).toBe('text/event-stream');
    const types = [...r.body.matchAll(/^event: (\S+)$/gm)].map((m) => m[1]);
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    expect(types.filter((t) => t === 'response.output_item.done')).toHaveLength(3);
    expect(r.body).toContain('"type":"custom_tool_call"');
    expect(responses.parseAnswer(r.body)).toEqual(answer);
    const json = responses.render(answer, 'msg_pl000002', false);
    expect(responses.parseAnswer(json.body)).toEqual(answer);
  });
});
