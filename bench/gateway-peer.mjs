// The agent and the API of bench/gateway.ts, in a process of their own (as a real agent and the
// real API are): a stand-in API server on 127.0.0.1 that answers a fixed streamed answer at once,
// and a client that times Anthropic Messages requests straight to it and through the gateway.
// Driven over the IPC channel: {standin} once started, then one {rows} per `calls` message and
// one {session} per `session` message (pausing at each `pause_every` turns until told to go on).
import http from 'node:http';

const ANSWER = process.env.PL_BENCH_ANSWER ?? '';
const standin = http.createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(ANSWER);
  });
});
await new Promise((r) => standin.listen(0, '127.0.0.1', () => r()));

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
function post(url, data, key) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request(
      url + '/v1/messages',
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'x-api-key': key,
          'content-length': Buffer.byteLength(data),
        },
      },
      (res) => {
        res.on('data', () => {});
        res.on('end', () =>
          res.statusCode === 200
            ? resolve(performance.now() - t0)
            : reject(new Error(`status ${res.statusCode}`)),
        );
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

function body(bytes, turns = 1, tag = '') {
  const messages = [];
  const per = Math.max(1, Math.floor(bytes / (turns * 2)));
  for (let i = 0; i < turns; i++) {
    messages.push({
      role: 'user',
      content: [{ type: 'text', text: `turn ${i} ${i === 0 ? tag : ''}`.padEnd(per, 'x') }],
    });
    if (i < turns - 1)
      messages.push({
        role: 'assistant',
        content: [{ type: 'text', text: `answer ${i} `.padEnd(per, 'y') }],
      });
  }
  return JSON.stringify({
    model: 'bench',
    max_tokens: 1000,
    stream: true,
    system: [{ type: 'text', text: 'You are a bench.' }],
    tools: [{ name: 'Read', input_schema: { type: 'object' } }],
    messages,
  });
}

let resume = null;
process.on('message', async (m) => {
  try {
    if (m.t === 'go_on') {
      resume?.();
      return;
    }
    if (m.t === 'calls') {
      const direct = [];
      const via = [];
      for (let i = 0; i < m.warmup; i++) {
        await post(standinUrl, body(m.bytes, 1, `warm ${i}`), 'k');
        await post(m.via, body(m.bytes, 1, `warm ${i}`), m.token);
      }
      for (let i = 0; i < m.calls; i++) {
        // A different body each call (as a conversation's requests are): nothing is cached.
        const b = body(m.bytes, 1, `call ${m.name} ${i}`);
        direct.push(await post(standinUrl, b, 'k'));
        via.push(await post(m.via, b, m.token));
        // A real agent thinks between calls; `gap_ms` 0 sends the next at once.
        if (m.gap_ms) await new Promise((r) => setTimeout(r, m.gap_ms));
      }
      process.send({ t: 'rows', direct, via });
    } else if (m.t === 'session') {
      const times = [];
      for (let t = 1; t <= m.turns; t++) {
        times.push(await post(m.via, body(t * m.bytes_per_turn, t), m.token));
        if (t % m.pause_every === 0) {
          await new Promise((r) => {
            resume = r;
            process.send({ t: 'pause', turn: t });
          });
        }
      }
      process.send({ t: 'session', times });
    } else if (m.t === 'stop') {
      standin.close();
      agent.destroy();
      process.disconnect();
    }
  } catch (e) {
    process.send({ t: 'error', message: String(e?.stack ?? e) });
  }
});
const standinUrl = `http://127.0.0.1:${standin.address().port}`;
process.send({ t: 'standin', url: standinUrl });
