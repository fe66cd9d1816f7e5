/**
 * Test tooling for scripts/agent-fixtures/make.mjs: a scripted model endpoint (Anthropic Messages and
 * OpenAI Responses, both as SSE) and an OTLP/HTTP capture server, on 127.0.0.1. It answers each
 * request from a script, never from a model, so the fixtures it helps make are the same every time
 * but for the CLIs' own ids and times.
 *
 * Important: this is fixture tooling only. The runner's model gateway (electron/runner/gateway/)
 * speaks the same two APIs for real runs; once it can take a scripted source, this endpoint can
 * move onto it and be deleted.
 */
import { createServer } from 'node:http';

/** The text of a message's content (a string or blocks). */
function textOf(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((c) => (typeof c?.text === 'string' ? c.text : typeof c?.content === 'string' ? c.content : ''))
    .join('\n');
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function listen(server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
}

// ---------------------------------------------------------------- Anthropic Messages

/**
 * A scripted turn: `{ thinking?, text?, tools?: [{ id, name, input }] }`. The turn a request is at
 * is the number of assistant messages it carries; the script is picked by the first user message
 * (a marker in the prompt), so a subagent's requests follow the subagent's script.
 */
function anthropicEvents(turn, model, n) {
  const id = `msg_fixture_${String(n).padStart(3, '0')}`;
  const ev = [];
  const push = (type, data) => ev.push(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  push('message_start', {
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: 120 + n,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        output_tokens: 1,
      },
    },
  });
  let index = 0;
  if (turn.thinking) {
    push('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
    push('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: turn.thinking } });
    push('content_block_delta', {
      index,
      delta: { type: 'signature_delta', signature: 'fixture-signature' },
    });
    push('content_block_stop', { index });
    index++;
  }
  if (turn.text) {
    push('content_block_start', { index, content_block: { type: 'text', text: '' } });
    push('content_block_delta', { index, delta: { type: 'text_delta', text: turn.text } });
    push('content_block_stop', { index });
    index++;
  }
  for (const t of turn.tools ?? []) {
    push('content_block_start', {
      index,
      content_block: { type: 'tool_use', id: t.id, name: t.name, input: {} },
    });
    push('content_block_delta', {
      index,
      delta: { type: 'input_json_delta', partial_json: JSON.stringify(t.input) },
    });
    push('content_block_stop', { index });
    index++;
  }
  push('message_delta', {
    delta: { stop_reason: turn.tools?.length ? 'tool_use' : 'end_turn', stop_sequence: null },
    usage: { output_tokens: 20 + index },
  });
  push('message_stop', {});
  return ev;
}

// ---------------------------------------------------------------- OpenAI Responses

function responsesEvents(turn, model, n) {
  const id = `resp_fixture_${String(n).padStart(3, '0')}`;
  const ev = [];
  let seq = 0;
  const push = (type, data) =>
    ev.push(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`);
  const response = {
    id,
    object: 'response',
    created_at: 1764806400,
    model,
    status: 'in_progress',
    output: [],
  };
  push('response.created', { response });
  const items = [];
  if (turn.thinking)
    items.push({
      type: 'reasoning',
      id: `rs_fixture_${n}`,
      summary: [{ type: 'summary_text', text: turn.thinking }],
      content: null,
      encrypted_content: null,
    });
  if (turn.text)
    items.push({
      type: 'message',
      id: `msg_fixture_${n}`,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: turn.text, annotations: [] }],
    });
  for (const t of turn.tools ?? [])
    items.push({
      type: 'function_call',
      id: `fc_fixture_${t.call_id}`,
      call_id: t.call_id,
      name: t.name,
      arguments: JSON.stringify(t.args),
      status: 'completed',
    });
  items.forEach((item, output_index) => {
    push('response.output_item.added', { output_index, item });
    if (item.type === 'message')
      push('response.output_text.delta', {
        output_index,
        item_id: item.id,
        content_index: 0,
        delta: turn.text,
      });
    push('response.output_item.done', { output_index, item });
  });
  push('response.completed', {
    response: {
      ...response,
      status: 'completed',
      output: items,
      usage: {
        input_tokens: 300 + n,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 30 + items.length,
        output_tokens_details: { reasoning_tokens: turn.thinking ? 12 : 0 },
        total_tokens: 330 + n + items.length,
      },
    },
  });
  return ev;
}

/**
 * The model endpoint. `scripts`: `{ anthropic: [{ marker, turns }], responses: [{ marker, turns }] }`.
 * A request whose first user text has no script's marker (a title or a summary Claude Code asks
 * for on the side) gets a one-line answer. `log` gets one line per request.
 */
export async function startModel(scripts, log = () => {}) {
  let n = 0;
  const seen = [];
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    let json = {};
    try {
      json = JSON.parse(body.toString('utf8') || '{}');
    } catch {
      /* not JSON: answered below as an unknown path */
    }
    const path = (req.url ?? '').split('?')[0];
    n++;
    if (path.endsWith('/messages/count_tokens')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ input_tokens: 100 }));
      return;
    }
    if (path.endsWith('/v1/messages')) {
      const msgs = json.messages ?? [];
      const firstUser = textOf(msgs.find((m) => m.role === 'user')?.content);
      const script = scripts.anthropic.find((s) => firstUser.includes(s.marker));
      const at = msgs.filter((m) => m.role === 'assistant').length;
      const turn = script?.turns[at] ?? { text: 'Done.' };
      seen.push({ api: 'anthropic', marker: script?.marker ?? null, at, n });
      log(`anthropic ${script?.marker ?? '(side)'} turn ${at} stream=${json.stream === true}`);
      const events = anthropicEvents(turn, json.model ?? 'claude-fixture', n);
      if (json.stream === true) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        for (const e of events) res.write(e);
        res.end();
      } else {
        const content = [];
        if (turn.text) content.push({ type: 'text', text: turn.text });
        for (const t of turn.tools ?? [])
          content.push({ type: 'tool_use', id: t.id, name: t.name, input: t.input });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: `msg_fixture_${n}`,
            type: 'message',
            role: 'assistant',
            model: json.model ?? 'claude-fixture',
            content,
            stop_reason: turn.tools?.length ? 'tool_use' : 'end_turn',
            stop_sequence: null,
            usage: { input_tokens: 100, output_tokens: 10 },
          }),
        );
      }
      return;
    }
    if (path.endsWith('/responses')) {
      const input = Array.isArray(json.input) ? json.input : [];
      const userTexts = input
        .filter((i) => i.type === 'message' && i.role === 'user')
        .map((i) => textOf(i.content));
      const script = scripts.responses.find((s) => userTexts.some((t) => t.includes(s.marker)));
      const at = input.filter(
        (i) => i.type === 'function_call' || (i.type === 'message' && i.role === 'assistant'),
      ).length;
      const turn = typeof script?.turns === 'function' ? script.turns(at, json) : script?.turns[at];
      seen.push({ api: 'responses', marker: script?.marker ?? null, at, n });
      log(
        `responses ${script?.marker ?? '(side)'} turn ${at} tools=${(json.tools ?? []).map((t) => t.name ?? t.type).join(',')}`,
      );
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      for (const e of responsesEvents(turn ?? { text: 'Done.' }, json.model ?? 'gpt-fixture', n))
        res.write(e);
      res.end();
      return;
    }
    if (path.endsWith('/models')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [], models: [] }));
      return;
    }
    log(`unknown ${req.method} ${req.url}`);
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { type: 'not_found', message: `no ${path} here` } }));
  });
  const port = await listen(server);
  return { port, url: `http://127.0.0.1:${port}`, seen, close: () => new Promise((r) => server.close(r)) };
}

// ---------------------------------------------------------------- OTLP capture

/** Takes every OTLP/HTTP POST and keeps its body as it came, with its path and content type. */
export async function startOtlpCapture(log = () => {}) {
  const bodies = [];
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    const type = String(req.headers['content-type'] ?? '');
    bodies.push({
      path: (req.url ?? '').split('?')[0],
      type,
      encoding: req.headers['content-encoding'] ?? null,
      body,
    });
    log(`otlp ${req.url} ${type} ${body.length} B`);
    if (type.includes('json')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    } else {
      res.writeHead(200, { 'content-type': 'application/x-protobuf' });
      res.end();
    }
  });
  const port = await listen(server);
  return { port, url: `http://127.0.0.1:${port}`, bodies, close: () => new Promise((r) => server.close(r)) };
}
