import type { OtlpSpan } from './types';
import { isoOf, parsed, type MappedItem, type RunMapState } from './map-util';

/** An output message of a model call, whichever convention carried it. */
export interface OutMessage {
  role: string;
  text: string;
  toolCalls: { id: string | null; name: string; args: unknown }[];
  finishReason?: string;
}

export interface Inference {
  model?: string;
  provider?: string;
  input: unknown;
  output: OutMessage[] | null;
  usage: { input?: number; output?: number };
  finishReasons?: unknown;
}

const isRec = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const s = (v: unknown): string =>
  typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v);

/** One tool call: GenAI's `{type: 'tool_call', id, name, arguments}` or OpenAI's `{id, function: {name, arguments}}`. */
function toolCall(v: unknown): OutMessage['toolCalls'][number] | null {
  if (!isRec(v)) return null;
  const fn = isRec(v.function) ? v.function : v;
  const name = fn.name;
  if (typeof name !== 'string' || name === '') return null;
  return {
    id: typeof v.id === 'string' && v.id ? v.id : null,
    name,
    args: parsed(s(fn.arguments ?? null) || null),
  };
}

/** Output messages in GenAI's `parts` form (semconv 1.37+) or the chat-completion form before it. */
export function outMessages(v: unknown): OutMessage[] | null {
  const list = parsed(v as string);
  if (!Array.isArray(list)) return null;
  const out: OutMessage[] = [];
  for (const m of list) {
    if (!isRec(m)) continue;
    const msg = isRec(m.message) ? m.message : m; // a gen_ai.choice body nests it
    const texts: string[] = [];
    const calls: OutMessage['toolCalls'] = [];
    if (Array.isArray(msg.parts)) {
      for (const p of msg.parts) {
        if (!isRec(p)) continue;
        if (p.type === 'text' || p.type === 'reasoning') texts.push(s(p.content));
        else if (p.type === 'tool_call') {
          const c = toolCall(p);
          if (c) calls.push(c);
        }
      }
    } else if (msg.content !== undefined && msg.content !== null) texts.push(s(msg.content));
    if (Array.isArray(msg.tool_calls)) {
      for (const t of msg.tool_calls) {
        const c = toolCall(t);
        if (c) calls.push(c);
      }
    }
    const finish = m.finish_reason ?? msg.finish_reason;
    out.push({
      role: typeof msg.role === 'string' ? msg.role : 'assistant',
      text: texts.join(''),
      toolCalls: calls,
      ...(typeof finish === 'string' ? { finishReason: finish } : {}),
    });
  }
  return out;
}

/**
 * A model call's events: a model_proposed per tool call it asked for (call ids as the model gave
 * them, so the execute_tool spans of those calls link to them), else one model_responded with its
 * text. Tokens are counted on the first of them, and not at all when a span inside this one
 * already counted them (a wrapper span repeating its child's usage).
 */
export function inferenceItems(span: OtlpSpan, inf: Inference, st: RunMapState): MappedItem[] {
  const at = isoOf(span.endNs) ?? isoOf(span.startNs);
  const usage = inf.usage;
  const total =
    usage.input !== undefined || usage.output !== undefined
      ? (usage.input ?? 0) + (usage.output ?? 0)
      : undefined;
  const child = st.countedUnder.get(span.spanId);
  const parentCounted = span.parentSpanId !== null && st.counted.has(span.parentSpanId);
  const countHere = total !== undefined && child === undefined && !parentCounted;
  if (countHere) st.noteCounted(span.spanId, span.parentSpanId);
  const common = {
    ...(inf.model ? { model: inf.model } : {}),
    ...(inf.provider ? { provider: inf.provider } : {}),
    ...(usage.input !== undefined || usage.output !== undefined
      ? { usage: { input_tokens: usage.input ?? null, output_tokens: usage.output ?? null } }
      : {}),
    ...(total !== undefined && !countHere
      ? { tokens_counted_by: child ?? span.parentSpanId ?? 'another span' }
      : {}),
    ...(inf.finishReasons !== undefined ? { finish_reasons: inf.finishReasons } : {}),
  };
  const messages = {
    ...(inf.input !== null && inf.input !== undefined ? { input_messages: inf.input } : {}),
    ...(inf.output ? { output_messages: inf.output } : {}),
  };
  const tokens = countHere ? { tokens: total } : {};
  const calls = (inf.output ?? []).flatMap((m) => m.toolCalls);
  if (calls.length > 0) {
    return calls.map((c, i) => ({
      kind: 'model_proposed',
      at,
      payload: {
        call_id: c.id ?? `${span.spanId}#${i}`,
        tool: c.name,
        args: c.args,
        ...(i === 0 ? { ...tokens, ...common, ...messages } : { ...common }),
      },
    }));
  }
  const text = (inf.output ?? []).map((m) => m.text).join('\n');
  return [
    {
      kind: 'model_responded',
      at,
      payload: { content: text, content_captured: inf.output !== null, ...tokens, ...common, ...messages },
    },
  ];
}
