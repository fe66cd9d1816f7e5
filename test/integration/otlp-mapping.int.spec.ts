import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProofloopService } from '../../electron/service/service';
import { startOtlpReceiver, type OtlpReceiver } from '../../electron/otlp';
import { freshFolder } from './helpers/tmp';

// Mapping families over a real socket, in OTLP JSON: OpenInference's flattened attributes, older
// GenAI names, tokens a wrapper span repeats, evaluations, redaction, and idle runs.

type Attr = string | number | boolean;
const kv = (a: Record<string, Attr>) =>
  Object.entries(a).map(([key, v]) => ({
    key,
    value:
      typeof v === 'string'
        ? { stringValue: v }
        : typeof v === 'boolean'
          ? { boolValue: v }
          : { intValue: String(v) },
  }));
let n = 0;
const span = (
  trace: string,
  name: string,
  attrs: Record<string, Attr>,
  over: Record<string, unknown> = {},
) => ({
  traceId: trace.padStart(32, '0'),
  spanId: (++n).toString(16).padStart(16, '0'),
  name,
  startTimeUnixNano: String(1_700_000_000_000_000_000n + BigInt(n) * 1_000_000n),
  endTimeUnixNano: String(1_700_000_000_000_000_000n + BigInt(n) * 1_000_000n + 500_000n),
  attributes: kv(attrs),
  ...over,
});

describe('OTLP mapping families', () => {
  const f = freshFolder();
  let svc: ProofloopService;
  let rx: OtlpReceiver;
  const send = async (signal: 'traces' | 'logs', records: unknown[]) => {
    const body =
      signal === 'traces'
        ? { resourceSpans: [{ scopeSpans: [{ spans: records }] }] }
        : { resourceLogs: [{ scopeLogs: [{ logRecords: records }] }] };
    const res = await fetch(`${rx.endpoint}/v1/${signal}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
  };
  const events = (run: string) => svc.ctx.ledger().read(run);

  beforeAll(async () => {
    svc = new ProofloopService();
    await svc.openFolder(f.dir);
    rx = await startOtlpReceiver({ ledger: () => svc.ctx.ledger(), port: 0, idleMs: 300 });
  });
  afterAll(async () => {
    await rx?.close();
    svc?.closeFolder();
    f.cleanup();
  });

  it('OpenInference LLM and TOOL spans, with flattened messages and tool calls', async () => {
    await send('traces', [
      span('a1', 'ChatOpenAI', {
        'openinference.span.kind': 'LLM',
        'session.id': 'oi-session',
        'llm.model_name': 'gpt-4o',
        'llm.input_messages.0.message.role': 'user',
        'llm.input_messages.0.message.content': 'weather in Paris?',
        'llm.output_messages.0.message.role': 'assistant',
        'llm.output_messages.0.message.tool_calls.0.tool_call.id': 'call_w',
        'llm.output_messages.0.message.tool_calls.0.tool_call.function.name': 'get_weather',
        'llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments': '{"city":"Paris"}',
        'llm.token_count.prompt': 20,
        'llm.token_count.completion': 9,
      }),
      span('a1', 'get_weather', {
        'openinference.span.kind': 'TOOL',
        'tool.name': 'get_weather',
        'tool_call.id': 'call_w',
        'input.value': '{"city":"Paris"}',
        'output.value': 'sunny',
      }),
      span('a1', 'RunnableSequence', {
        'openinference.span.kind': 'CHAIN',
        'input.value': 'q',
        'output.value': 'a',
      }),
    ]);
    const e = events('otlp-oi-session');
    expect(e.map((x) => x.kind)).toEqual(['model_proposed', 'tool_invoked', 'tool_returned', 'chain_span']);
    expect(e[0]!.payload).toMatchObject({
      call_id: 'call_w',
      tool: 'get_weather',
      args: { city: 'Paris' },
      tokens: 29,
      model: 'gpt-4o',
    });
    expect(e[0]!.payload.input_messages).toEqual([
      { 'message.role': 'user', 'message.content': 'weather in Paris?' },
    ]);
    expect(e[2]!.payload).toMatchObject({ call_id: 'call_w', excerpt: 'sunny', status: 'ok' });
    expect(e[3]!.payload).toMatchObject({ input: 'q', output: 'a' });
  });

  it('older GenAI names (gen_ai.system, prompt/completion tokens, indexed completions), tokens counted once under a wrapper', async () => {
    const inner = span('b1', 'openai.chat', {
      'gen_ai.system': 'openai',
      'gen_ai.request.model': 'gpt-3.5',
      'gen_ai.usage.prompt_tokens': 100,
      'gen_ai.usage.completion_tokens': 20,
      'gen_ai.completion.0.role': 'assistant',
      'gen_ai.completion.0.content': 'Hello there',
      'gen_ai.conversation.id': 'old-names',
    });
    // The wrapper ends after its child and repeats the child's usage.
    const wrapper = span('b1', 'chat gpt-3.5', {
      'gen_ai.operation.name': 'chat',
      'gen_ai.usage.input_tokens': 100,
      'gen_ai.usage.output_tokens': 20,
    });
    Object.assign(inner, { parentSpanId: wrapper.spanId });
    await send('traces', [inner]);
    await send('traces', [wrapper]);
    const e = events('otlp-old-names');
    expect(e.map((x) => x.kind)).toEqual(['model_responded', 'model_responded']);
    expect(e[0]!.payload).toMatchObject({
      content: 'Hello there',
      tokens: 120,
      provider: 'openai',
      model: 'gpt-3.5',
    });
    expect(e[1]!.payload.tokens).toBeUndefined();
    expect(e[1]!.payload.tokens_counted_by).toBe(inner.spanId);
    // The run's state counts them once.
    const r = (await svc.call('state.at', { run_id: 'otlp-old-names', seq: 2 })) as {
      ok: boolean;
      value: { state: { budget: { used: { tokens: number } } } };
    };
    expect(r.ok).toBe(true);
    expect(r.value.state.budget.used.tokens).toBe(120);
  });

  it('gen_ai.evaluation.result becomes a judge verdict when its label says pass or fail, else an event of its own kind', async () => {
    const rec = (label: string) => ({
      timeUnixNano: '1700000000000000000',
      eventName: 'gen_ai.evaluation.result',
      attributes: kv({
        'gen_ai.evaluation.name': 'relevance',
        'gen_ai.evaluation.score.label': label,
        'gen_ai.evaluation.score.value': 1,
        'session.id': 'evals',
      }),
    });
    await send('logs', [rec('pass'), rec('fail'), rec('somewhat')]);
    const e = events('otlp-evals');
    expect(e.map((x) => [x.kind, x.payload.passed])).toEqual([
      ['judge_verdict', true],
      ['judge_verdict', false],
      ['gen_ai_evaluation_result', undefined],
    ]);
  });

  it('a Codex decision and result link through call_id; secrets are redacted before they reach the ledger', async () => {
    const at = '1700000000000000000';
    await send('logs', [
      {
        timeUnixNano: at,
        eventName: 'codex.tool_decision',
        attributes: kv({
          'conversation.id': 'codex-1',
          tool_name: 'shell',
          call_id: 'c9',
          decision: 'approved',
          source: 'user',
        }),
      },
      {
        timeUnixNano: at,
        eventName: 'codex.tool_result',
        attributes: kv({
          'conversation.id': 'codex-1',
          tool_name: 'shell',
          call_id: 'c9',
          success: 'true',
          duration_ms: 12,
          output: 'AWS key AKIAIOSFODNN7EXAMPLE found',
        }),
      },
      {
        timeUnixNano: at,
        eventName: 'codex.api_request',
        attributes: kv({ 'conversation.id': 'codex-1', model: 'gpt-5', duration_ms: 900 }),
      },
    ]);
    const e = events('otlp-codex-1');
    expect(e.map((x) => x.kind)).toEqual(['action_allowed', 'tool_returned', 'codex_api_request']);
    expect(e[0]!.payload).toMatchObject({ call_id: 'c9', decided_by: 'user', rule: 'codex.user' });
    expect(e[1]!.payload).toMatchObject({ call_id: 'c9', status: 'ok', duration_ms: 12 });
    expect(JSON.stringify(e[1]!.payload)).not.toContain('AKIAIOSFODNN7EXAMPLE');
  });

  it('Codex: a refusal its tool_result reports is a decision (config or user) unless a tool_decision named the call', async () => {
    const at = '1700000000000000000';
    const rec = (event: string, a: Record<string, unknown>) => ({
      timeUnixNano: at,
      attributes: kv({ 'event.name': event, 'conversation.id': 'codex-2', tool_name: 'exec_command', ...a }),
    });
    await send('logs', [
      // The exec policy's refusal, as Codex 0.169 sends it: no tool_decision, the output says why.
      rec('codex.tool_result', {
        call_id: 'r1',
        success: 'false',
        output:
          'exec_command failed: CreateProcess { message: "Rejected(\\"`rm -rf build` rejected: policy forbids commands starting with `rm -rf`\\")" }',
      }),
      // The user's answers: a tool_decision each (its words as Codex has them), then the result.
      rec('codex.tool_decision', { call_id: 'u1', decision: 'denied', source: 'User' }),
      rec('codex.tool_result', { call_id: 'u1', success: 'false', output: 'exec command rejected by user' }),
      rec('codex.tool_decision', { call_id: 'u2', decision: 'abort', source: 'User' }),
      rec('codex.tool_decision', { call_id: 'u3', decision: 'approved_for_session', source: 'User' }),
      rec('codex.tool_result', { call_id: 'u3', success: 'true', output: 'ok' }),
      // A user refusal of a version that sends no tool_decision: read from the output.
      rec('codex.tool_result', { call_id: 'u4', success: 'false', output: 'exec command rejected by user' }),
      // An output that merely mentions a rejection is no refusal.
      rec('codex.tool_result', { call_id: 'o1', success: 'true', output: 'grep: rejected: 3 matches' }),
    ]);
    const e = events('otlp-codex-2').map((x) => [
      x.kind,
      x.payload.call_id,
      x.payload.decided_by ?? x.payload.status,
      x.payload.rule ?? null,
    ]);
    expect(e).toEqual([
      ['action_denied', 'r1', 'config', 'codex.config'],
      ['tool_returned', 'r1', 'error', null],
      ['action_denied', 'u1', 'user', 'codex.user'],
      ['tool_returned', 'u1', 'error', null],
      ['action_denied', 'u2', 'user', 'codex.user'],
      ['action_allowed', 'u3', 'user', 'codex.user'],
      ['tool_returned', 'u3', 'ok', null],
      ['action_denied', 'u4', 'user', 'codex.user'],
      ['tool_returned', 'u4', 'error', null],
      ['tool_returned', 'o1', 'ok', null],
    ]);
    const denied = events('otlp-codex-2').find((x) => x.payload.call_id === 'r1')!;
    expect(denied.payload.reason).toBe('policy forbids commands starting with `rm -rf`');
  });

  it('a run with nothing new for a while is idle, not failed, and running again when a record comes', async () => {
    await send('traces', [span('c1', 'step', { 'gen_ai.conversation.id': 'quiet' })]);
    const ledger = svc.ctx.ledger();
    expect(ledger.run('otlp-quiet')).toMatchObject({ status: 'running' });
    expect(ledger.run('otlp-quiet')?.writer?.label).toBe('otlp receiver');
    await expect.poll(() => ledger.run('otlp-quiet')?.status, { timeout: 5000 }).toBe('idle');
    expect(ledger.run('otlp-quiet')?.writer).toBeNull();
    await send('traces', [span('c1', 'step', { 'gen_ai.conversation.id': 'quiet' })]);
    expect(ledger.run('otlp-quiet')).toMatchObject({ status: 'running', event_count: 2 });
  });
});
