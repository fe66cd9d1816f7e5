/**
 * The prompt of a run received over OpenTelemetry, for its title in the runs list: what a person
 * asked, wherever the sender put it. Pure (no Node, no DOM): the service reads a few events and
 * asks this module.
 *
 * Where it is (in the order asked):
 * - Claude Code's and Codex's `user_prompt` log events (`claude_code_user_prompt`,
 *   `codex_user_prompt` in the ledger), attribute `prompt`; Claude Code's `claude_code.interaction`
 *   span, attribute `user_prompt`. Claude Code sends `<REDACTED>` unless OTEL_LOG_USER_PROMPTS=1:
 *   then only the prompt's length is known, and the title says so.
 * - GenAI semantic conventions: `gen_ai.input.messages` (1.37+, `[{role, parts: [{type: 'text',
 *   content}]}]`), `gen_ai.prompt` (older; JSON of chat messages, or plain text), indexed
 *   `gen_ai.prompt.N.role` / `.content` (OpenLLMetry); OpenInference `llm.input_messages.N.message.*`
 *   and `input.value`. The first user message's text is the prompt.
 */

import { dict } from '../dict';
import { isObj, type Obj } from '../json-read.js';

/** What is known of the prompt: its text, or that it was withheld (and how long it was). */
export type OtlpPrompt = { text: string } | { withheld: true; length: number | null };

// Claude Code writes `<REDACTED>`, Codex `[REDACTED]`.
const REDACTED = /^(<REDACTED>|\[REDACTED\])$/i;
const MAX_SCAN = 64;

function parsedJson(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  const t = v.trim();
  if (!(t.startsWith('[') || t.startsWith('{'))) return v;
  try {
    return JSON.parse(t) as unknown;
  } catch {
    return v;
  }
}

/** The text of one message: a string content, `parts` of text, or content blocks of text. */
function textOf(m: Obj): string | null {
  const c = m.content ?? m['message.content'];
  if (typeof c === 'string' && c.trim() !== '') return c;
  const parts = Array.isArray(m.parts) ? m.parts : Array.isArray(c) ? c : null;
  if (!parts) return null;
  const texts: string[] = [];
  for (const p of parts.slice(0, MAX_SCAN)) {
    if (typeof p === 'string') texts.push(p);
    else if (isObj(p) && (p.type === 'text' || p.type === undefined)) {
      const t = p.content ?? p.text;
      if (typeof t === 'string') texts.push(t);
    }
  }
  const joined = texts.join('\n');
  return joined.trim() !== '' ? joined : null;
}

/**
 * The first user message's text in a list of messages as any of the conventions writes it, or a
 * plain string (a prompt given as text). Null when there is none.
 */
export function firstUserText(v: unknown): string | null {
  const list = parsedJson(v);
  if (typeof list === 'string') return list.trim() !== '' ? list : null;
  if (isObj(list)) {
    // `{messages: [...]}` (a request body), or one message.
    if (Array.isArray(list.messages)) return firstUserText(list.messages);
    return textOf(list);
  }
  if (!Array.isArray(list)) return null;
  for (const m of list.slice(0, MAX_SCAN)) {
    if (!isObj(m)) continue;
    const role = m.role ?? m['message.role'];
    if (role === 'user' || role === 'human') {
      const t = textOf(m);
      if (t) return t;
    }
  }
  return null;
}

/** Indexed attributes (`prefix.N.rest`) as a list of `{rest: value}`, N < 64. */
function indexed(attrs: Obj, prefix: string): Obj[] {
  const out: Obj[] = [];
  const p = `${prefix}.`;
  for (const k of Object.keys(attrs)) {
    if (!k.startsWith(p)) continue;
    const rest = k.slice(p.length);
    const dot = rest.indexOf('.');
    const i = Number(dot < 0 ? rest : rest.slice(0, dot));
    if (!Number.isInteger(i) || i < 0 || i >= MAX_SCAN) continue;
    (out[i] ??= dict<unknown>())[dot < 0 ? '' : rest.slice(dot + 1)] = attrs[k];
  }
  return out.filter(Boolean);
}

/** The prompt in one record's attributes (a span's or a log's), or null. */
export function promptOfAttributes(attrs: Obj): OtlpPrompt | null {
  for (const key of ['prompt', 'user_prompt']) {
    const v = attrs[key];
    if (typeof v !== 'string' || v === '') continue;
    if (REDACTED.test(v.trim())) {
      const len = attrs[`${key}_length`] ?? attrs.prompt_length;
      const n = typeof len === 'number' ? len : typeof len === 'string' ? Number(len) : NaN;
      return { withheld: true, length: Number.isFinite(n) ? n : null };
    }
    return { text: v };
  }
  for (const key of ['gen_ai.input.messages', 'gen_ai.prompt']) {
    const t = attrs[key] !== undefined ? firstUserText(attrs[key]) : null;
    if (t) return { text: t };
  }
  for (const prefix of ['gen_ai.prompt', 'llm.input_messages']) {
    const t = firstUserText(indexed(attrs, prefix));
    if (t) return { text: t };
  }
  const input = attrs['input.value'];
  if (input !== undefined) {
    const t = firstUserText(input);
    if (t) return { text: t };
  }
  return null;
}

/** The prompt an event of an `otlp` run carries: its mapped messages, else its record's attributes. */
export function promptOfEvent(kind: string, payload: Obj): OtlpPrompt | null {
  if (kind.endsWith('_user_prompt')) {
    const p = promptOfAttributes(payload);
    if (p) return p;
  }
  if (payload.input_messages !== undefined) {
    const t = firstUserText(payload.input_messages);
    if (t) return { text: t };
  }
  const otel = isObj(payload.otel) ? payload.otel : null;
  const attrs = otel && isObj(otel.attributes) ? otel.attributes : null;
  return attrs ? promptOfAttributes(attrs) : null;
}

/** The runs list's title of an OTLP run: its service and its prompt, either when the other is missing. */
export function otlpTitle(service: string | null, prompt: OtlpPrompt | null): string | null {
  const p =
    prompt === null
      ? null
      : 'text' in prompt
        ? prompt.text.replace(/\s+/g, ' ').trim()
        : `prompt not exported${prompt.length !== null ? ` (${prompt.length} chars)` : ''}`;
  if (service && p) return `${service} · ${p}`;
  return service ?? p;
}
