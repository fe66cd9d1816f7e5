/**
 * The Anthropic Messages API, as Claude Code speaks it: `POST /v1/messages` (SSE when `stream`),
 * `POST /v1/messages/count_tokens` (answered here with an estimate), the key in `x-api-key` or
 * `Authorization: Bearer` (ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN).
 *
 * Lanes: `side` when the request offers no tools (titles, summaries, quota checks on a small
 * model); `main` when the conversation starts with the run's prompt; else `sub:<sha of the prompt
 * that started the subagent>` (the prompt is in the main lane's recorded Agent call, so it is the
 * same in a replay).
 *
 * Canonical form (what a replay compares), the normalisation:
 *   - `metadata` dropped (device id, session id);
 *   - the system block `x-anthropic-billing-header: …` dropped (cc_version with a per-build
 *     suffix; the agent's version is compared on its own, from the user agent);
 *   - every `cache_control` hint dropped;
 *   - the run's workspace and home paths → `<workspace>`, `<home>`, the workspace as Claude Code's
 *     project key (`/` and `.` as `-`) → `<workspace-key>`; `/tmp/claude-<uid>/` → `<tmp>/`;
 *   - dates `YYYY-MM-DD` (and ISO times) → `<date>`;
 *   - UUIDs → `<uuid>`; tool_use ids / tool_use_id → `call_<n>` by first appearance;
 *   - Claude Code's subagent ids (`a` and 16 hex digits) → `<agent>`;
 *   - durations (`duration_ms: 5432`, `"totalDurationMs":4843`) → `<ms>`.
 */
import { callId, normaliseJson, normaliseText } from './canonical';
import { header } from './server';
import { promptLane } from './lanes';
import type {
  CanonicalRequest,
  Dialect,
  ModelAnswer,
  NormaliseContext,
  ParsedRequest,
  ToolResultIn,
} from './types';
import { isObj, type Obj } from '../../../shared/json-read.js';
import { dict } from '../../../shared/dict.js';

/** Text of a message content (string or blocks), tool results' text included. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((b) => {
      if (!isObj(b)) return '';
      if (typeof b.text === 'string') return b.text;
      if (b.type === 'tool_result') return contentText(b.content);
      return '';
    })
    .join('\n');
}

/** The last text block of the first user message: the prompt the conversation was started with. */
function firstPrompt(messages: unknown[]): string {
  const first = messages.find((m) => isObj(m) && m.role === 'user');
  if (!isObj(first)) return '';
  const c = first.content;
  if (typeof c === 'string') return c;
  if (!Array.isArray(c)) return '';
  const texts = c.filter((b): b is Obj => isObj(b) && b.type === 'text' && typeof b.text === 'string');
  const own = texts.filter((b) => !(b.text as string).startsWith('<system-reminder>'));
  return ((own.at(-1) ?? texts.at(-1))?.text as string | undefined) ?? '';
}

/** Normalises a JSON value: strings through `text`, keys dropped or ids renumbered. */
function normalise(value: unknown, ctx: NormaliseContext, ids: Map<string, string>): unknown {
  const text = (s: string): string => {
    let t = normaliseText(s, ctx);
    for (const [id, n] of ids) t = t.split(id).join(n);
    return t;
  };
  return normaliseJson(value, text, (k, x, v) => {
    if (k === 'cache_control') return 'drop';
    if ((k === 'id' && v.type === 'tool_use') || k === 'tool_use_id')
      return { value: callId(String(x), ids) };
    return 'walk';
  });
}

/** Assigns call ids in order of appearance before any text is normalised, so text mentions match. */
function collectIds(messages: unknown[], ids: Map<string, string>): void {
  for (const m of messages) {
    if (!isObj(m) || !Array.isArray(m.content)) continue;
    for (const b of m.content) {
      if (isObj(b) && b.type === 'tool_use' && typeof b.id === 'string') callId(b.id, ids);
      if (isObj(b) && b.type === 'tool_result' && typeof b.tool_use_id === 'string')
        callId(b.tool_use_id, ids);
    }
  }
}

const sse = (type: string, data: unknown): string => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;

/** Reads the events of an SSE body (complete, as recorded). */
function* sseEvents(body: string): Generator<{ event: string; data: string }> {
  for (const block of body.split(/\r?\n\r?\n/)) {
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (data.length) yield { event, data: data.join('\n') };
  }
}

export const anthropic: Dialect = {
  name: 'anthropic',

  route(method, pathname) {
    if (method !== 'POST') return null;
    if (pathname === '/v1/messages') return 'model';
    if (pathname === '/v1/messages/count_tokens') return 'count';
    return null;
  },

  token(h) {
    const key = header(h, 'x-api-key');
    if (key) return key;
    const auth = header(h, 'authorization');
    return auth?.startsWith('Bearer ') ? auth.slice(7) : null;
  },

  parse(body, h, runPrompt): ParsedRequest {
    if (!isObj(body)) throw new Error('request body: not a JSON object');
    const messages = Array.isArray(body.messages) ? body.messages : [];
    const tools = Array.isArray(body.tools) ? body.tools : [];
    const prompt = firstPrompt(messages);
    const last = messages.at(-1);
    const ua = header(h, 'user-agent') ?? '';
    return {
      lane: tools.length === 0 ? 'side' : promptLane(prompt, runPrompt),
      model: typeof body.model === 'string' ? body.model : '',
      stream: body.stream === true,
      turn: messages.filter((m) => isObj(m) && m.role === 'assistant').length,
      results: isObj(last) && last.role === 'user' ? anthropic.toolResultOf(last) : [],
      prompt,
      agentVersion: /claude-cli\/([^\s]+)/.exec(ua)?.[1] ?? null,
    };
  },

  canonical(body, ctx): CanonicalRequest {
    if (!isObj(body)) throw new Error('request body: not a JSON object');
    const ids = new Map<string, string>();
    const messages = Array.isArray(body.messages) ? body.messages : [];
    collectIds(messages, ids);
    const { metadata: _m, messages: _msgs, system, ...rest } = body;
    const sys = Array.isArray(system)
      ? system.filter(
          (b) => !(isObj(b) && typeof b.text === 'string' && b.text.startsWith('x-anthropic-billing-header')),
        )
      : system;
    return {
      head: normalise({ ...rest, system: sys }, ctx, ids),
      messages: normalise(messages, ctx, ids) as unknown[],
    };
  },

  toolResultOf(message): ToolResultIn[] {
    if (!isObj(message) || !Array.isArray(message.content)) return [];
    return message.content
      .filter((b): b is Obj => isObj(b) && b.type === 'tool_result')
      .map((b) => ({
        call_id: String(b.tool_use_id),
        output: contentText(b.content),
        is_error: b.is_error === true,
      }));
  },

  render(a: ModelAnswer, messageId: string, stream: boolean) {
    const blocks: Obj[] = [];
    if (a.text) blocks.push({ type: 'text', text: a.text });
    for (const c of a.calls) blocks.push({ type: 'tool_use', id: c.id, name: c.name, input: c.input });
    if (!stream) {
      return {
        contentType: 'application/json',
        body: JSON.stringify({
          id: messageId,
          type: 'message',
          role: 'assistant',
          model: a.model,
          content: blocks,
          stop_reason: a.stop,
          stop_sequence: null,
          usage: a.usage,
        }),
      };
    }
    let out = sse('message_start', {
      type: 'message_start',
      message: {
        id: messageId,
        type: 'message',
        role: 'assistant',
        model: a.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: a.usage.input_tokens, output_tokens: 1 },
      },
    });
    blocks.forEach((b, index) => {
      if (b.type === 'text') {
        out += sse('content_block_start', {
          type: 'content_block_start',
          index,
          content_block: { type: 'text', text: '' },
        });
        out += sse('content_block_delta', {
          type: 'content_block_delta',
          index,
          delta: { type: 'text_delta', text: b.text },
        });
      } else {
        out += sse('content_block_start', {
          type: 'content_block_start',
          index,
          content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} },
        });
        out += sse('content_block_delta', {
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) },
        });
      }
      out += sse('content_block_stop', { type: 'content_block_stop', index });
    });
    out += sse('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: a.stop, stop_sequence: null },
      usage: { output_tokens: a.usage.output_tokens },
    });
    out += sse('message_stop', { type: 'message_stop' });
    return { contentType: 'text/event-stream', body: out };
  },

  parseAnswer(body): ModelAnswer {
    const a: ModelAnswer = {
      text: '',
      calls: [],
      stop: 'end_turn',
      usage: { input_tokens: 0, output_tokens: 0 },
      model: '',
    };
    const trimmed = body.trimStart();
    if (trimmed.startsWith('{')) {
      const m = JSON.parse(trimmed) as Obj;
      for (const b of Array.isArray(m.content) ? m.content : []) {
        if (!isObj(b)) continue;
        if (b.type === 'text') a.text += String(b.text ?? '');
        if (b.type === 'tool_use')
          a.calls.push({ id: String(b.id), name: String(b.name), input: (b.input as Obj) ?? {} });
      }
      a.stop = (m.stop_reason as ModelAnswer['stop']) ?? 'end_turn';
      a.model = String(m.model ?? '');
      return a;
    }
    const blocks = new Map<number, { type: string; id?: string; name?: string; text: string }>();
    for (const { data } of sseEvents(body)) {
      let d: Obj;
      try {
        d = JSON.parse(data) as Obj;
      } catch {
        continue;
      }
      if (d.type === 'message_start' && isObj(d.message)) {
        a.model = String(d.message.model ?? '');
        const u = d.message.usage as Obj | undefined;
        a.usage.input_tokens = Number(u?.input_tokens ?? 0);
      } else if (d.type === 'content_block_start' && isObj(d.content_block)) {
        const cb = d.content_block;
        blocks.set(Number(d.index), {
          type: String(cb.type),
          id: cb.id as string | undefined,
          name: cb.name as string | undefined,
          text: typeof cb.text === 'string' ? cb.text : '',
        });
      } else if (d.type === 'content_block_delta' && isObj(d.delta)) {
        const b = blocks.get(Number(d.index));
        if (!b) continue;
        if (typeof d.delta.text === 'string') b.text += d.delta.text;
        if (typeof d.delta.partial_json === 'string') b.text += d.delta.partial_json;
      } else if (d.type === 'message_delta') {
        const delta = d.delta as Obj | undefined;
        if (delta?.stop_reason) a.stop = delta.stop_reason as ModelAnswer['stop'];
        const u = d.usage as Obj | undefined;
        if (u?.output_tokens !== undefined) a.usage.output_tokens = Number(u.output_tokens);
      }
    }
    for (const [, b] of [...blocks].sort((x, y) => x[0] - y[0])) {
      if (b.type === 'text') a.text += b.text;
      else if (b.type === 'tool_use') {
        let input: Obj = dict();
        try {
          input = b.text ? (JSON.parse(b.text) as Obj) : {};
        } catch {
          input = { _unparsed: b.text };
        }
        a.calls.push({ id: b.id ?? '', name: b.name ?? '', input });
      }
    }
    return a;
  },

  error(type, message) {
    return JSON.stringify({ type: 'error', error: { type, message } });
  },

  count(body) {
    // An estimate at ~4 characters a token: the CLI uses it for context bookkeeping only.
    return { input_tokens: Math.ceil(JSON.stringify(body ?? '').length / 4) };
  },

  upstream: {
    baseEnv: 'PROOFLOOP_ANTHROPIC_UPSTREAM',
    defaultBase: 'https://api.anthropic.com',
    keyEnv: ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN'],
    authHeaders: (key) => ({ 'x-api-key': key }),
  },
};
