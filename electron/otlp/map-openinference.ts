import type { AttrValue, Attrs } from './types';
import { inferenceItems, type OutMessage } from './inference';
import {
  durationMs,
  first,
  indexed,
  int,
  isError,
  isoOf,
  kindName,
  parsed,
  str,
  toolSpanItems,
  type SpanMapper,
} from './map-util';

/**
 * OpenInference spans (`openinference.span.kind`), as Arize's instrumentations for LangChain,
 * LlamaIndex, the OpenAI Agents SDK and others write them: LLM spans with flattened
 * `llm.input_messages.N.message.*` / `llm.output_messages.N.message.*` attributes and
 * `llm.token_count.*`, TOOL spans with `tool.name`, `input.value` and `output.value`, AGENT spans.
 * The other kinds (CHAIN, RETRIEVER, EMBEDDING, RERANKER, GUARDRAIL, EVALUATOR, PROMPT) are events
 * of their own kind (`chain_span`, …), with their input and output.
 */

function messages(a: Attrs, prefix: string): Record<string, AttrValue>[] {
  return indexed(a, prefix);
}

function outputOf(a: Attrs): OutMessage[] | null {
  const list = messages(a, 'llm.output_messages');
  if (list.length === 0) return null;
  return list.map((m) => ({
    role: typeof m['message.role'] === 'string' ? m['message.role'] : 'assistant',
    text: typeof m['message.content'] === 'string' ? m['message.content'] : '',
    toolCalls: indexed(m as Attrs, 'message.tool_calls').flatMap((t) => {
      const name = t['tool_call.function.name'];
      if (typeof name !== 'string') return [];
      const id = t['tool_call.id'];
      return [
        { id: typeof id === 'string' ? id : null, name, args: parsed(t['tool_call.function.arguments']) },
      ];
    }),
  }));
}

export const openinferenceSpans: SpanMapper = {
  family: 'openinference',
  span(s, st) {
    const a = s.attributes;
    const kind = str(a, 'openinference.span.kind');
    if (!kind) return null;
    const k = kind.toUpperCase();
    if (k === 'LLM') {
      const input = messages(a, 'llm.input_messages');
      return inferenceItems(
        s,
        {
          model: str(a, 'llm.model_name'),
          provider: first(a, ['llm.provider', 'llm.system']),
          input: input.length > 0 ? input : a['input.value'] !== undefined ? parsed(a['input.value']) : null,
          output: outputOf(a),
          usage: { input: int(a, 'llm.token_count.prompt'), output: int(a, 'llm.token_count.completion') },
        },
        st,
      );
    }
    if (k === 'TOOL') {
      const tool = str(a, 'tool.name') ?? s.name;
      const callId = first(a, ['tool_call.id', 'tool.id']) ?? `span:${s.spanId}`;
      const error = isError(s) ? (s.status.message ?? 'error') : undefined;
      return toolSpanItems(s, {
        callId,
        tool,
        args: parsed(a['tool.parameters'] ?? a['input.value']),
        result: a['output.value'] === undefined ? undefined : parsed(a['output.value']),
        error,
      });
    }
    const io = {
      ...(a['input.value'] !== undefined ? { input: parsed(a['input.value']) } : {}),
      ...(a['output.value'] !== undefined ? { output: parsed(a['output.value']) } : {}),
      status: isError(s) ? 'error' : 'ok',
      duration_ms: durationMs(s.startNs, s.endNs),
    };
    if (k === 'AGENT') {
      return [
        {
          kind: 'agent_invoked',
          at: isoOf(s.endNs) ?? isoOf(s.startNs),
          payload: { agent: str(a, 'agent.name') ?? s.name, subagent: s.parentSpanId !== null, ...io },
        },
      ];
    }
    return [
      {
        kind: kindName(`${k}_span`, 'openinference_span'),
        at: isoOf(s.endNs),
        payload: { name: s.name, ...io },
      },
    ];
  },
};
