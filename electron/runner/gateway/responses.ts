/**
 * The OpenAI Responses API, as Codex (`@openai/codex` 0.169.0) speaks it: `POST /v1/responses`
 * with `stream: true`, the key in `Authorization: Bearer` (the provider's `env_key`), answered as
 * server-sent events. What was learnt by running the real CLI against a scratch server on 127.0.0.1:
 *
 * The request Codex POSTs (`codex exec`, model provider `wire_api = "responses"`, model `gpt-5.5`):
 *   {model, stream: true, input: [...items], tools: [...], tool_choice: "auto",
 *    parallel_tool_calls: true, reasoning: {summary: "auto"}, store: false,
 *    include: ["reasoning.encrypted_content"], prompt_cache_key: <thread id>,
 *    client_metadata: {x-codex-turn-metadata: <JSON with installation, session, thread, turn ids,
 *    the sandbox, the workspace, a start time>, session_id, turn_id, …}}
 *   headers: user-agent `codex_exec/0.169.0 (…)`, originator `codex_exec`, session-id, thread-id,
 *   x-codex-window-id, x-codex-turn-metadata, x-client-request-id (all per run: not compared).
 * `input` holds the whole conversation every time (nothing is stored server side):
 *   - developer messages: the base instructions, the skills list (paths under CODEX_HOME);
 *   - a user message of context parts: `# AGENTS.md instructions for <cwd>` (the workspace's
 *     AGENTS.md) and `<environment_context>` (cwd, shell, current date, time zone, sandbox roots);
 *   - the prompt (a user message), then the model's items as they were answered (message,
 *     function_call, custom_tool_call, reasoning) and the tools' outputs (function_call_output,
 *     custom_tool_call_output), each with a Codex-made `id` (`msg_`/`fc_`/`fco_`/`ctc_` + UUIDv7).
 * The tools offered for a known model (`gpt-5.5`; an unknown name gets fallback metadata and no
 * apply_patch): `exec_command` {cmd, login, yield_time_ms, workdir, …} (a shell command, run in a
 * PTY session; output `Chunk ID: …\nWall time: … seconds\nProcess exited with code N\nOriginal
 * token count: N\nOutput:\n…`, or `Process running with session ID N` when it outlives
 * `yield_time_ms`), `write_stdin`, `request_user_input`, `apply_patch` (a *custom* freeform tool:
 * the call is a `custom_tool_call` whose `input` is the `*** Begin Patch` text), `view_image`,
 * `get_goal` / `create_goal` / `update_goal` (the successor of `update_plan`, which 0.169 no longer
 * offers). A `shell` function call is refused by 0.169 ("unsupported call: shell").
 *
 * The answer Codex needs (SSE, `event:` + `data:` lines): `response.created`, then per output item
 * `response.output_item.added` and `response.output_item.done` (the done item is what Codex keeps;
 * `response.output_text.delta` streams a message's text), then `response.completed` with `usage`.
 * `response.failed` ends the turn with its error message (`codex exec` exits 1); so does an HTTP
 * error status (500 after retries, with the provider's `request_max_retries`) or a cut stream.
 *
 * Lanes: `side` when the request offers no tools; otherwise by the prompt that started the
 * conversation (lanes.ts): `main` for the run's prompt.
 *
 * Canonical form (what a replay compares), the normalisation:
 *   - `prompt_cache_key` and `client_metadata` dropped (thread, session, turn, installation ids,
 *     start times); every item's `id` dropped (Codex mints them per run);
 *   - `call_id`s → `call_<n>` by first appearance;
 *   - the head is the tools and settings; the messages are the `input` items one for one (so a
 *     replay can name the item that differs: a tool output is an `environment` cause, the
 *     developer instructions, the AGENTS.md / environment message or the prompt a `request` one);
 *   - in texts: the run's workspace and home paths → `<workspace>`, `<home>`; UUIDs → `<uuid>`;
 *     dates and ISO times → `<date>`; `<timezone>…</timezone>` → `<timezone>`; exec_command's
 *     `Chunk ID: …` → `Chunk ID: <id>`, `Wall time: … seconds` → `Wall time: <t>`, and
 *     `session ID N` → `session ID <n>`, and a goal's `threadId`, `createdAt`, `updatedAt` and
 *     `timeUsedSeconds` (per process values and clocks, not the tool's result).
 */
import { callId, normaliseJson } from './canonical';
import { header } from './server';
import { promptLane } from './lanes';
import type {
  CanonicalRequest,
  Dialect,
  ModelAnswer,
  NormaliseContext,
  ParsedRequest,
  ToolCallOut,
  ToolResultIn,
} from './types';
import { isObj, type Obj } from '../../../shared/json-read.js';

/** Items the model produced (one answer may hold several: reasoning, a message, calls). */
const OUTPUT_TYPES: ReadonlySet<string> = new Set([
  'message',
  'function_call',
  'custom_tool_call',
  'reasoning',
  'local_shell_call',
  'web_search_call',
]);
const RESULT_TYPES: ReadonlySet<string> = new Set([
  'function_call_output',
  'custom_tool_call_output',
  'local_shell_call_output',
]);

const isOutput = (i: unknown): boolean =>
  isObj(i) &&
  typeof i.type === 'string' &&
  OUTPUT_TYPES.has(i.type) &&
  (i.type !== 'message' || i.role === 'assistant');

/** A message's text parts (input_text, output_text), or a string content as is. */
function partsOf(m: Obj): string[] {
  if (typeof m.content === 'string') return [m.content];
  if (!Array.isArray(m.content)) return [];
  return m.content
    .filter((c): c is Obj => isObj(c) && typeof c.text === 'string')
    .map((c) => c.text as string);
}

/** Text Codex writes as the user about the environment, not the user's own words. */
const CONTEXT_PREFIX = /^(# AGENTS\.md instructions|<environment_context>|<user_instructions>|<[a-z_]+>)/;

/** Developer/system messages and the AGENTS.md + environment message: the request's instructions. */
function isInstructions(i: unknown): boolean {
  if (!isObj(i) || i.type !== 'message') return false;
  if (i.role === 'developer' || i.role === 'system') return true;
  if (i.role !== 'user') return false;
  const parts = partsOf(i);
  return parts.length > 0 && parts.every((t) => CONTEXT_PREFIX.test(t.trimStart()));
}

/** The first user message of the user's own words: the prompt the conversation started with. */
function firstPrompt(input: unknown[]): string {
  for (const i of input) {
    if (!isObj(i) || i.type !== 'message' || i.role !== 'user' || isInstructions(i)) continue;
    return partsOf(i).join('\n');
  }
  return '';
}

/** Answers of the model so far: a run of consecutive output items is one answer. */
function turnsOf(input: unknown[]): number {
  let turns = 0;
  let prev = false;
  for (const i of input) {
    const out = isOutput(i);
    if (out && !prev) turns += 1;
    prev = out;
  }
  return turns;
}

/** The text of a tool output: a string, or content parts. */
function outputText(o: unknown): string {
  if (typeof o === 'string') return o;
  if (Array.isArray(o))
    return o
      .map((c) => (isObj(c) && typeof c.text === 'string' ? c.text : ''))
      .filter(Boolean)
      .join('\n');
  if (isObj(o) && typeof o.content === 'string') return o.content;
  return JSON.stringify(o ?? null);
}

/** Values a process sets in Codex's tool output frame (not the tool's result). */
export function frameless(s: string): string {
  return s
    .replace(/^Chunk ID: [0-9a-zA-Z]+$/gm, 'Chunk ID: <id>')
    .replace(/^Wall time: [0-9.]+ seconds$/gm, 'Wall time: <t>')
    .replace(/session ID \d+/g, 'session ID <n>')
    .replace(/"(createdAt|updatedAt|timeUsedSeconds)":\d+/g, '"$1":0')
    .replace(/"threadId":"[^"]*"/g, '"threadId":"<thread>"');
}

/** Whether Codex reports the call as failed: blocked by a hook, a non-zero exit, a patch error. */
export function failedOutput(text: string): boolean {
  if (/^(Command|Tool call) blocked by PreToolUse hook/.test(text)) return true;
  const exit = /^(?:Process exited with code|Exit code:) (-?\d+)$/m.exec(text);
  if (exit) return exit[1] !== '0';
  return /^(apply_patch verification failed|Failed to apply patch|unsupported call)/m.test(text);
}

const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;
const DATE = /\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b/g;
const TIMEZONE = /<timezone>[^<]*<\/timezone>/g;

/** Normalises a JSON value: strings through `text`, item ids dropped, call ids renumbered. */
function normalise(value: unknown, ctx: NormaliseContext, ids: Map<string, string>): unknown {
  const text = (s: string): string => {
    let t = s;
    if (ctx.workspace) t = t.split(ctx.workspace).join('<workspace>');
    if (ctx.home) t = t.split(ctx.home).join('<home>');
    return frameless(t).replace(UUID, '<uuid>').replace(DATE, '<date>').replace(TIMEZONE, '<timezone>');
  };
  return normaliseJson(value, text, (k, x, _v, item) => {
    // An array's elements at an item's level are items (input, content parts): their ids go.
    if (k === 'id' && item && typeof x === 'string') return 'drop';
    if (k === 'call_id' && typeof x === 'string') return { value: callId(x, ids) };
    return 'walk';
  });
}

const sse = (data: Obj): string => `event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`;

/** Reads the events of an SSE body (complete, as recorded). */
function* sseEvents(body: string): Generator<string> {
  for (const block of body.split(/\r?\n\r?\n/)) {
    const data: string[] = [];
    for (const line of block.split(/\r?\n/))
      if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
    if (data.length) yield data.join('\n');
  }
}

/** The output items of an answer, with ids made from the answer's id (deterministic for the sim). */
function itemsOf(a: ModelAnswer, messageId: string): Obj[] {
  const items: Obj[] = [];
  if (a.text) {
    items.push({
      type: 'message',
      id: messageId,
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: a.text, annotations: [] }],
    });
  }
  a.calls.forEach((c, n) => {
    const suffix = `${messageId.replace(/^msg_/, '')}_${n}`;
    if (c.kind === 'custom') {
      items.push({
        type: 'custom_tool_call',
        id: `ctc_${suffix}`,
        status: 'completed',
        call_id: c.id,
        name: c.name,
        input: typeof c.input.input === 'string' ? c.input.input : JSON.stringify(c.input),
      });
    } else {
      items.push({
        type: 'function_call',
        id: `fc_${suffix}`,
        status: 'completed',
        call_id: c.id,
        name: c.name,
        arguments: JSON.stringify(c.input),
      });
    }
  });
  return items;
}

/** A model's call item as a ToolCallOut (custom tools keep their freeform text in `input.input`). */
function callOf(item: Obj): ToolCallOut | null {
  const id = String(item.call_id ?? item.id ?? '');
  if (item.type === 'custom_tool_call')
    return { id, name: String(item.name ?? ''), kind: 'custom', input: { input: String(item.input ?? '') } };
  if (item.type !== 'function_call') return null;
  let input: Obj;
  try {
    const a: unknown = JSON.parse(typeof item.arguments === 'string' ? item.arguments : '{}');
    input = isObj(a) ? a : { _unparsed: item.arguments };
  } catch {
    input = { _unparsed: item.arguments };
  }
  return { id, name: String(item.name ?? ''), input };
}

export const responses: Dialect = {
  name: 'responses',

  route(method, pathname) {
    if (method !== 'POST') return null;
    if (pathname === '/v1/responses') return 'model';
    if (pathname === '/v1/responses/input_tokens') return 'count';
    return null;
  },

  token(h) {
    const auth = header(h, 'authorization');
    return auth?.startsWith('Bearer ') ? auth.slice(7) : null;
  },

  parse(body, h, runPrompt): ParsedRequest {
    if (!isObj(body)) throw new Error('request body: not a JSON object');
    const input = Array.isArray(body.input) ? body.input : [];
    const tools = Array.isArray(body.tools) ? body.tools : [];
    const prompt = firstPrompt(input);
    let tail = input.length;
    while (tail > 0 && isObj(input[tail - 1]) && RESULT_TYPES.has(String((input[tail - 1] as Obj).type)))
      tail -= 1;
    const ua = header(h, 'user-agent') ?? '';
    return {
      lane: tools.length === 0 ? 'side' : promptLane(prompt, runPrompt),
      model: typeof body.model === 'string' ? body.model : '',
      stream: body.stream === true,
      turn: turnsOf(input),
      results: input.slice(tail).flatMap((i) => responses.toolResultOf(i)),
      prompt,
      agentVersion: /codex_[a-z_]+\/(\d[^\s]*)/.exec(ua)?.[1] ?? null,
    };
  },

  canonical(body, ctx): CanonicalRequest {
    if (!isObj(body)) throw new Error('request body: not a JSON object');
    const ids = new Map<string, string>();
    const { prompt_cache_key: _k, client_metadata: _m, input, ...rest } = body;
    const items = Array.isArray(input) ? input : [];
    // Call ids numbered in conversation order, before any text is normalised.
    for (const i of items) if (isObj(i) && typeof i.call_id === 'string') callId(i.call_id, ids);
    // One message per input item, in order: a replay names the item that differs (a tool output is
    // an environment cause; instructions, AGENTS.md or the prompt a request cause).
    return { head: normalise(rest, ctx, ids), messages: normalise(items, ctx, ids) as unknown[] };
  },

  toolResultOf(item): ToolResultIn[] {
    if (!isObj(item) || !RESULT_TYPES.has(String(item.type))) return [];
    const output = frameless(outputText(item.output));
    const running = /^Process running with session ID/m.test(output);
    return [
      {
        call_id: String(item.call_id ?? ''),
        output,
        is_error: failedOutput(output),
        ...(running ? { running } : {}),
      },
    ];
  },

  render(a: ModelAnswer, messageId: string, stream: boolean) {
    const items = itemsOf(a, messageId);
    const usage = {
      input_tokens: a.usage.input_tokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: a.usage.output_tokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: a.usage.input_tokens + a.usage.output_tokens,
    };
    const id = `resp_${messageId.replace(/^msg_/, '')}`;
    const response = (status: string, output: Obj[], u: unknown) => ({
      id,
      object: 'response',
      created_at: 0,
      status,
      model: a.model,
      output,
      usage: u,
      ...(a.stop === 'max_tokens' && status !== 'in_progress'
        ? { incomplete_details: { reason: 'max_output_tokens' } }
        : {}),
    });
    const finalStatus = a.stop === 'max_tokens' ? 'incomplete' : 'completed';
    if (!stream) {
      return { contentType: 'application/json', body: JSON.stringify(response(finalStatus, items, usage)) };
    }
    let seq = 0;
    const ev = (data: Obj): string => sse({ ...data, sequence_number: seq++ });
    let out = ev({ type: 'response.created', response: response('in_progress', [], null) });
    out += ev({ type: 'response.in_progress', response: response('in_progress', [], null) });
    items.forEach((item, output_index) => {
      if (item.type === 'message') {
        const text = a.text;
        out += ev({
          type: 'response.output_item.added',
          output_index,
          item: { ...item, status: 'in_progress', content: [] },
        });
        const part = { type: 'output_text', text: '', annotations: [] };
        out += ev({
          type: 'response.content_part.added',
          item_id: item.id,
          output_index,
          content_index: 0,
          part,
        });
        out += ev({
          type: 'response.output_text.delta',
          item_id: item.id,
          output_index,
          content_index: 0,
          delta: text,
        });
        out += ev({
          type: 'response.output_text.done',
          item_id: item.id,
          output_index,
          content_index: 0,
          text,
        });
        out += ev({
          type: 'response.content_part.done',
          item_id: item.id,
          output_index,
          content_index: 0,
          part: { ...part, text },
        });
      } else if (item.type === 'function_call') {
        out += ev({
          type: 'response.output_item.added',
          output_index,
          item: { ...item, status: 'in_progress', arguments: '' },
        });
        out += ev({
          type: 'response.function_call_arguments.delta',
          item_id: item.id,
          output_index,
          delta: item.arguments,
        });
        out += ev({
          type: 'response.function_call_arguments.done',
          item_id: item.id,
          output_index,
          arguments: item.arguments,
        });
      } else {
        out += ev({
          type: 'response.output_item.added',
          output_index,
          item: { ...item, status: 'in_progress', input: '' },
        });
        out += ev({
          type: 'response.custom_tool_call_input.delta',
          item_id: item.id,
          output_index,
          delta: item.input,
        });
        out += ev({
          type: 'response.custom_tool_call_input.done',
          item_id: item.id,
          output_index,
          input: item.input,
        });
      }
      out += ev({ type: 'response.output_item.done', output_index, item });
    });
    out += ev({
      type: finalStatus === 'completed' ? 'response.completed' : 'response.incomplete',
      response: response(finalStatus, items, usage),
    });
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
    const done: Obj[] = [];
    let final: Obj | null = null;
    const trimmed = body.trimStart();
    if (trimmed.startsWith('{')) {
      final = JSON.parse(trimmed) as Obj;
    } else {
      for (const data of sseEvents(body)) {
        let d: unknown;
        try {
          d = JSON.parse(data);
        } catch {
          continue;
        }
        if (!isObj(d)) continue;
        if (d.type === 'response.output_item.done' && isObj(d.item)) done.push(d.item);
        else if (
          (d.type === 'response.completed' ||
            d.type === 'response.incomplete' ||
            d.type === 'response.failed') &&
          isObj(d.response)
        )
          final = d.response;
        else if (d.type === 'response.created' && isObj(d.response)) a.model = String(d.response.model ?? '');
      }
    }
    const items = done.length ? done : final && Array.isArray(final.output) ? final.output : [];
    for (const item of items) {
      if (!isObj(item)) continue;
      if (item.type === 'message' && item.role === 'assistant') a.text += partsOf(item).join('');
      const c = callOf(item);
      if (c) a.calls.push(c);
    }
    if (final) {
      a.model = String(final.model ?? a.model);
      const u = isObj(final.usage) ? final.usage : {};
      a.usage = { input_tokens: Number(u.input_tokens ?? 0), output_tokens: Number(u.output_tokens ?? 0) };
      if (final.status === 'incomplete') a.stop = 'max_tokens';
    }
    if (a.stop !== 'max_tokens' && a.calls.length) a.stop = 'tool_use';
    return a;
  },

  error(type, message) {
    return JSON.stringify({ error: { message, type, param: null, code: type } });
  },

  count(body) {
    // OpenAI's input-token count route; an estimate at ~4 characters a token.
    return {
      object: 'response.input_tokens',
      input_tokens: Math.ceil(JSON.stringify(body ?? '').length / 4),
    };
  },

  upstream: {
    baseEnv: 'PROOFLOOP_OPENAI_UPSTREAM',
    defaultBase: 'https://api.openai.com',
    keyEnv: ['OPENAI_API_KEY', 'CODEX_API_KEY'],
    authHeaders: (key) => ({ authorization: `Bearer ${key}` }),
  },
};
