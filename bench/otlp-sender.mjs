// The OTLP bench's client (bench/otlp.ts), in a process of its own as an instrumented agent is:
// the receiver's process then pays for receiving only, not for the client's sockets and parsing
// (in the receiver's process the client measured ~25 µs of the ~195 µs CPU per span). Reads
// pre-encoded bodies (a file of [u32 length][body]…), posts them with `inFlight` requests in flight
// over keep-alive sockets, and prints {"ms": …} timed from the first post to the last answer.
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';

const [, , port, type, inFlightArg, file] = process.argv;
const inFlight = Number(inFlightArg);
const all = readFileSync(file);
const bodies = [];
for (let at = 0; at < all.length;) {
  const n = all.readUInt32LE(at);
  bodies.push(all.subarray(at + 4, at + 4 + n));
  at += 4 + n;
}

function post(agent, body) {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: Number(port),
        path: '/v1/traces',
        method: 'POST',
        agent,
        headers: { 'content-type': type, 'content-length': body.length },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const agent = new Agent({ keepAlive: true, maxSockets: inFlight });
let next = 0;
const t = performance.now();
await Promise.all(
  Array.from({ length: inFlight }, async () => {
    while (next < bodies.length) {
      const status = await post(agent, bodies[next++]);
      if (status !== 200) throw new Error(`receiver answered ${status}`);
    }
  }),
);
const ms = performance.now() - t;
agent.destroy();
process.stdout.write(JSON.stringify({ ms }) + '\n');
