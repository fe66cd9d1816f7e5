import type { Attrs, OtlpSpan } from './types';
import { inferenceItems, outMessages, type OutMessage } from './inference';
import {
  durationMs,
  first,
  indexed,
  int,
  isError,
  isoOf,
  parsed,
  str,
  toolSpanItems,
  type LogMapper,
  type MappedItem,
  type SpanMapper,
} from './map-util';

/**
 * OpenTelemetry GenAI semantic conventions: invoke_agent / create_agent spans (a run's or a
 * subagent's boundary), inference spans (chat, generate_content, text_completion), execute_tool
 * spans, and gen_ai.evaluation.result events; with the older names too (gen_ai.system,
 * gen_ai.usage.prompt_tokens / completion_tokens, gen_ai.prompt / gen_ai.completion, indexed
 * gen_ai.completion.N.* as OpenLLMetry writes them, gen_ai.content.* and gen_ai.choice span events).
 */

const INFERENCE = new Set(['chat', 'generate_content', 'text_completion', 'completion']);
const AGENT = new Set(['invoke_agent', 'create_agent']);

function operation(s: OtlpSpan): string | undefined {
  const op = str(s.attributes, 'gen_ai.operation.name');
  if (op) return op;
  const word = s.name.split(' ')[0] ?? '';
  if (INFERENCE.has(word) || AGENT.has(word) || word === 'execute_tool') return word;
  // Older instrumentations named the system but not the operation (OpenLLMetry: `openai.chat`).
  if (
    str(s.attributes, 'gen_ai.system') &&
    (s.attributes['gen_ai.usage.prompt_tokens'] !== undefined ||
      s.attributes['gen_ai.usage.input_tokens'] !== undefined ||
      str(s.attributes, 'gen_ai.request.model'))
  ) {
    return 'chat';
  }
  return undefined;
}

/** Output messages: gen_ai.output.messages, gen_ai.completion (JSON), gen_ai.completion.N.*, or gen_ai.choice / gen_ai.content.completion span events. */
function outputOf(s: OtlpSpan): OutMessage[] | null {
  const a = s.attributes;
  const direct = outMessages(a['gen_ai.output.messages'] ?? a['gen_ai.completion']);
  if (direct) return direct;
  const flat = indexed(a, 'gen_ai.completion');
  if (flat.length > 0) {
    return flat.map((m) => ({
      role: typeof m.role === 'string' ? m.role : 'assistant',
      text: typeof m.content === 'string' ? m.content : '',
      toolCalls: indexed(m as Attrs, 'tool_calls').flatMap((t) =>
        typeof t.name === 'string'
          ? [{ id: typeof t.id === 'string' ? t.id : null, name: t.name, args: parsed(t.arguments) }]
          : [],
      ),
      ...(typeof m.finish_reason === 'string' ? { finishReason: m.finish_reason } : {}),
    }));
  }
  const events = s.events.filter((e) => e.name === 'gen_ai.choice' || e.name === 'gen_ai.content.completion');
  if (events.length > 0) {
    const out: OutMessage[] = [];
    for (const e of events) {
      const v =
        e.attributes['gen_ai.completion'] ?? e.attributes['gen_ai.event.content'] ?? e.attributes.message;
      const m = outMessages(typeof v === 'string' && !v.trim().startsWith('[') ? `[${v}]` : v);
      if (m) out.push(...m);
    }
    return out.length > 0 ? out : null;
  }
  return null;
}

function inputOf(s: OtlpSpan): unknown {
  const a = s.attributes;
  const v = a['gen_ai.input.messages'] ?? a['gen_ai.prompt'];
  if (v !== undefined) return parsed(v);
  const flat = indexed(a, 'gen_ai.prompt');
  if (flat.length > 0) return flat;
  const events = s.events.filter((e) =>
    /^gen_ai\.(system|user|assistant|tool)\.message$|^gen_ai\.content\.prompt$/.test(e.name),
  );
  return events.length > 0 ? events.map((e) => ({ event: e.name, ...e.attributes })) : null;
}

function evaluation(a: Attrs, at: string | undefined): MappedItem {
  const label = str(a, 'gen_ai.evaluation.score.label');
  const score = a['gen_ai.evaluation.score.value'];
  const base = {
    name: str(a, 'gen_ai.evaluation.name') ?? null,
    ...(label !== undefined ? { label } : {}),
    ...(score !== undefined ? { score } : {}),
    ...(str(a, 'gen_ai.evaluation.explanation')
      ? { explanation: str(a, 'gen_ai.evaluation.explanation') }
      : {}),
    ...(str(a, 'gen_ai.response.id') ? { response_id: str(a, 'gen_ai.response.id') } : {}),
  };
  // judge_verdict wants a verdict: only a label that says pass or fail gives one (a bare score does not).
  const passed =
    label && /^(pass|passed|true|yes|correct|ok|success|relevant)$/i.test(label)
      ? true
      : label && /^(fail|failed|false|no|incorrect|error|irrelevant)$/i.test(label)
        ? false
        : null;
  if (passed === null) return { kind: 'gen_ai_evaluation_result', at, payload: base };
  return { kind: 'judge_verdict', at, payload: { passed, ...base } };
}

function toolItems(s: OtlpSpan): MappedItem[] {
  const a = s.attributes;
  const tool = str(a, 'gen_ai.tool.name') ?? (s.name.replace(/^execute_tool\s*/, '') || 'tool');
  const callId = str(a, 'gen_ai.tool.call.id') ?? `span:${s.spanId}`;
  const result = a['gen_ai.tool.call.result'];
  const error = isError(s) ? (s.status.message ?? str(a, 'error.type') ?? 'error') : undefined;
  const toolType = str(a, 'gen_ai.tool.type');
  return toolSpanItems(
    s,
    {
      callId,
      tool,
      args: parsed(a['gen_ai.tool.call.arguments']),
      result: result === undefined ? undefined : parsed(result),
      error,
    },
    toolType ? { tool_type: toolType } : {},
  );
}

export const genaiSpans: SpanMapper = {
  family: 'genai',
  span(s, st) {
    const op = operation(s);
    if (!op) return null;
    const a = s.attributes;
    const evals = s.events
      .filter((e) => e.name === 'gen_ai.evaluation.result')
      .map((e) => evaluation(e.attributes, isoOf(e.timeNs)));
    if (op === 'execute_tool') return [...toolItems(s), ...evals];
    if (AGENT.has(op)) {
      const agent =
        str(a, 'gen_ai.agent.name') ?? (s.name.replace(/^(invoke|create)_agent\s*/, '') || 'agent');
      return [
        {
          kind: 'agent_invoked',
          at: isoOf(s.endNs) ?? isoOf(s.startNs),
          payload: {
            agent,
            operation: op,
            ...(str(a, 'gen_ai.agent.id') ? { agent_id: str(a, 'gen_ai.agent.id') } : {}),
            subagent: s.parentSpanId !== null,
            status: isError(s) ? 'error' : 'ok',
            ...(isError(s) && s.status.message ? { error: s.status.message } : {}),
            duration_ms: durationMs(s.startNs, s.endNs),
            started_at: isoOf(s.startNs) ?? null,
          },
        },
        ...evals,
      ];
    }
    if (INFERENCE.has(op)) {
      return [
        ...inferenceItems(
          s,
          {
            model: first(a, ['gen_ai.response.model', 'gen_ai.request.model']),
            provider: first(a, ['gen_ai.provider.name', 'gen_ai.system']),
            input: inputOf(s),
            output: outputOf(s),
            usage: {
              input: int(a, 'gen_ai.usage.input_tokens') ?? int(a, 'gen_ai.usage.prompt_tokens'),
              output: int(a, 'gen_ai.usage.output_tokens') ?? int(a, 'gen_ai.usage.completion_tokens'),
            },
            finishReasons: a['gen_ai.response.finish_reasons'],
          },
          st,
        ),
        ...evals,
      ];
    }
    return [
      {
        kind: 'gen_ai_operation',
        at: isoOf(s.endNs),
        payload: { operation: op, duration_ms: durationMs(s.startNs, s.endNs) },
      },
      ...evals,
    ];
  },
};

export const genaiLogs: LogMapper = {
  family: 'genai',
  log(l) {
    if (l.eventName !== 'gen_ai.evaluation.result') return null;
    return [evaluation(l.attributes, isoOf(l.timeNs) ?? isoOf(l.observedNs))];
  },
};
