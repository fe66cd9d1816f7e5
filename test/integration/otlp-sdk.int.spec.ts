import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ledger, verifyEvents, type StoredEvent } from '../../electron/ledger';
import { serve, type Served } from '../e2e/helpers/server';
import { freshFolder } from './helpers/tmp';
import { sender } from './helpers/otel-sender';

// The real OpenTelemetry JS SDK (tracer and logger providers, OTLP proto and JSON exporters) sends
// to a running `proofloop serve` child process: GenAI agent, inference and tool spans, and
// Claude-Code-style tool_decision / tool_result log records.

const toolCall = (id: string, name: string, args: unknown) =>
  JSON.stringify([
    {
      role: 'assistant',
      parts: [{ type: 'tool_call', id, name, arguments: args }],
      finish_reason: 'tool_call',
    },
  ]);

function readRun(folder: string, runId: string): { events: StoredEvent[]; run: ReturnType<Ledger['run']> } {
  const l = Ledger.open(folder, { appendHelper: false });
  try {
    return { events: l.read(runId), run: l.run(runId) };
  } finally {
    l.close();
  }
}

for (const protocol of ['proto', 'json'] as const) {
  describe(`OTLP from the OpenTelemetry JS SDK (${protocol} exporters) into proofloop serve`, () => {
    const f = freshFolder();
    let s: Served;
    const conv = `conv-${protocol}`;

    beforeAll(async () => {
      s = await serve(f.dir);
      expect(s.otlp).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const snd = sender(s.otlp!, protocol);
      const c = { 'gen_ai.conversation.id': conv };
      const agent = snd.span('invoke_agent fixer', {
        ...c,
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': 'fixer',
      });
      const chat = snd.span(
        'chat gpt-test',
        {
          ...c,
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'openai',
          'gen_ai.request.model': 'gpt-test',
          'gen_ai.usage.input_tokens': 120,
          'gen_ai.usage.output_tokens': 30,
          'gen_ai.output.messages': toolCall('call_read', 'read_file', { path: 'src/a.py' }),
        },
        agent,
      );
      await snd.end(chat);
      await snd.log('claude_code.tool_decision', {
        'session.id': conv,
        tool_name: 'read_file',
        decision: 'accept',
        source: 'config',
        tool_use_id: 'call_read',
      });
      const tool = snd.span(
        'execute_tool read_file',
        {
          ...c,
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': 'read_file',
          'gen_ai.tool.call.id': 'call_read',
          'gen_ai.tool.call.arguments': '{"path":"src/a.py"}',
          'gen_ai.tool.call.result': 'def f():\n    return 1\n',
        },
        agent,
      );
      await snd.end(tool);
      // A refused call: the harness says no (the user rejected it); no tool runs.
      await snd.log('claude_code.tool_decision', {
        'session.id': conv,
        tool_name: 'Bash',
        decision: 'reject',
        source: 'user_reject',
      });
      await snd.log('claude_code.tool_result', {
        'session.id': conv,
        tool_name: 'Bash',
        success: false,
        duration_ms: 3,
        error: 'rejected by user',
      });
      // A tool that failed: the span's error status.
      const bad = snd.span(
        'execute_tool run_tests',
        {
          ...c,
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': 'run_tests',
          'gen_ai.tool.call.id': 'call_t',
        },
        agent,
      );
      await snd.end(bad, { error: 'exit 1' });
      // A child span that names no conversation, ending after its trace named one: it joins that run.
      const late = snd.span('step', { note: 'no conversation id here' }, agent);
      await snd.end(late);
      await snd.end(agent);
      await snd.shutdown();
    });
    afterAll(async () => {
      await s?.stop();
      f.cleanup();
    });

    it('lands in one run per conversation, an imported OTLP run, chained like ProofLoop’s own', () => {
      const { events, run } = readRun(f.dir, `otlp-${conv}`);
      expect(run).toMatchObject({ source: 'imported', format: 'otlp', chained: true, status: 'running' });
      // In the order they arrived; spans and logs travel in separate requests of separate exporters.
      const bySignal = (sig: string) =>
        events.filter((e) => (e.payload.otel as { signal?: string }).signal === sig).map((e) => e.kind);
      expect(bySignal('span')).toEqual([
        'model_proposed',
        'tool_invoked',
        'tool_returned',
        'tool_invoked',
        'tool_returned',
        'otel_span',
        'agent_invoked',
      ]);
      expect(bySignal('log')).toEqual(['action_allowed', 'action_denied', 'tool_returned']);
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
      expect(verifyEvents(`otlp-${conv}`, events).ok).toBe(true);
    });

    it('maps calls, results and decisions with the right links', () => {
      const { events } = readRun(f.dir, `otlp-${conv}`);
      const spans = events.filter((e) => (e.payload.otel as { signal?: string }).signal === 'span');
      const logs = events.filter((e) => (e.payload.otel as { signal?: string }).signal === 'log');
      const [proposed, invoked, returned, badInvoked, badReturned, step, agent] = spans;
      const [allowed, denied, deniedResult] = logs;
      expect(proposed!.payload).toMatchObject({
        call_id: 'call_read',
        tool: 'read_file',
        args: { path: 'src/a.py' },
        tokens: 150,
        model: 'gpt-test',
      });
      expect(allowed!.payload).toMatchObject({
        call_id: 'call_read',
        rule: 'claude_code.config',
        decided_by: 'config',
        tool: 'read_file',
      });
      expect(invoked!.payload).toMatchObject({
        call_id: 'call_read',
        tool: 'read_file',
        args: { path: 'src/a.py' },
      });
      expect(returned!.payload).toMatchObject({
        call_id: 'call_read',
        status: 'ok',
        excerpt: 'def f():\n    return 1\n',
        bytes: 22,
      });
      expect(denied!.payload).toMatchObject({
        tool: 'Bash',
        decided_by: 'user',
        rule: 'claude_code.user_reject',
      });
      expect(deniedResult!.payload).toMatchObject({ call_id: denied!.payload.call_id, status: 'error' });
      expect(badInvoked!.payload.call_id).toBe('call_t');
      expect(badReturned!.payload).toMatchObject({ call_id: 'call_t', status: 'error', error: 'exit 1' });
      expect(step!.payload).toMatchObject({ name: 'step' });
      expect(agent!.payload).toMatchObject({ agent: 'fixer', subagent: false });
      // Each record keeps its raw form beside what it maps to.
      const otel = proposed!.payload.otel as {
        trace_id: string;
        attributes: Record<string, unknown>;
        resource?: Record<string, unknown>;
      };
      expect(otel.trace_id).toMatch(/^[0-9a-f]{32}$/);
      expect(otel.attributes['gen_ai.usage.input_tokens']).toBe(120);
      expect(otel.resource?.['service.name']).toBe('otel-sdk-test');
      expect((allowed!.payload.otel as { body: unknown }).body).toBe('claude_code.tool_decision');
      // Each event has its own time, the span's or the log record's.
      expect(new Date(invoked!.at).getTime()).toBeLessThanOrEqual(new Date(returned!.at).getTime());
    });

    it('shows the run in the inspector’s API like any other', async () => {
      const runs = await s.call<{ run_id: string; source: string; format: string }[]>('runs.list');
      expect(runs.find((r) => r.run_id === `otlp-${conv}`)).toMatchObject({
        source: 'imported',
        format: 'otlp',
      });
    });
  });
}
