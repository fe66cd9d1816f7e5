/**
 * What the OTLP receiver stores for a fixed input, as one SHA-256 over every column of every event
 * row (run id, seq, kind, v, at, payload, hash, digest): run from two trees (`npx tsx
 * bench/otlp-ledger-hash.ts` in each) to check that a change to the receiver's code path stores the
 * very same events. The input: the bench's requests in protobuf and JSON, some carrying
 * credentials (the count of placeholders and of leaked secrets is printed too), and the
 * opentelemetry-proto examples (test/fixtures/otlp) as JSON and protobuf.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Ledger } from '../electron/ledger';
import { startOtlpReceiver } from '../electron/otlp';
import { requestTypes } from '../electron/otlp/decode';
import { requestJson } from './otlp';

type Json = Record<string, unknown>;
interface KeyValue {
  key: string;
  value: { stringValue: string };
}

const IDS = new Set(['traceId', 'spanId', 'parentSpanId']);
function toProtobuf(signal: 'traces' | 'logs', req: Json): Buffer {
  const T = requestTypes[signal];
  const text = JSON.stringify(req, (k, v: unknown) =>
    IDS.has(k) && typeof v === 'string' ? Buffer.from(v, 'hex').toString('base64') : v,
  );
  return Buffer.from(T.encode(T.fromObject(JSON.parse(text) as Json)).finish());
}

function post(port: number, where: string, type: string, body: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: where,
        method: 'POST',
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

/** A bench request whose first spans carry credentials in an attribute, a tool result and a prompt. */
function withSecrets(r: number): Json {
  const req = requestJson(r, 'secrets', 1 << 28) as {
    resourceSpans: { scopeSpans: { spans: { attributes: KeyValue[] }[] }[] }[];
  };
  const spans = req.resourceSpans[0]!.scopeSpans[0]!.spans;
  const add = (i: number, key: string, stringValue: string) =>
    spans[i]!.attributes.push({ key, value: { stringValue } });
  add(0, 'authorization', 'Bearer abcdefghijklmnopqrstuvwxyz0123456789');
  add(1, 'gen_ai.tool.call.result', `key=sk-ant-api03-${'x'.repeat(40)} and AKIAIOSFODNN7EXAMPLE`);
  add(2, 'gen_ai.input.messages', JSON.stringify([{ role: 'user', content: `use ghp_${'a'.repeat(36)}` }]));
  return req;
}

const root = mkdtempSync(path.join(tmpdir(), 'pl-otlp-hash-'));
try {
  const ledger = Ledger.open(path.join(root, 'rx'));
  const rx = await startOtlpReceiver({ ledger: () => ledger, port: 0 });
  const PB = 'application/x-protobuf';
  const JSON_TYPE = 'application/json';
  const asJson = (req: unknown) => Buffer.from(JSON.stringify(req));
  const fixture = (f: string) => JSON.parse(readFileSync(path.join('test/fixtures/otlp', f), 'utf8')) as Json;
  for (let r = 0; r < 20; r++) {
    await post(
      rx.port,
      '/v1/traces',
      PB,
      toProtobuf('traces', requestJson(r, `c${r % 3}`, r % 2 ? 0 : 1 << 24)),
    );
    await post(rx.port, '/v1/traces', JSON_TYPE, asJson(requestJson(r, `j${r % 3}`, 1 << 26)));
  }
  for (let r = 0; r < 3; r++) {
    await post(rx.port, '/v1/traces', JSON_TYPE, asJson(withSecrets(r)));
    await post(rx.port, '/v1/traces', PB, toProtobuf('traces', withSecrets(r + 10)));
  }
  await post(rx.port, '/v1/traces', JSON_TYPE, asJson(fixture('proto-examples-trace.json')));
  await post(rx.port, '/v1/logs', JSON_TYPE, asJson(fixture('proto-examples-logs.json')));
  await post(rx.port, '/v1/logs', PB, toProtobuf('logs', fixture('proto-examples-events.json')));
  await rx.close();
  ledger.close();

  const db = new Database(path.join(root, 'rx', '.proofloop', 'ledger.db'), { readonly: true });
  const h = createHash('sha256');
  let n = 0;
  const rows = db.prepare(
    'SELECT r.run_id, e.seq, e.kind, e.v, e.at, e.payload, hex(e.hash) AS hash, hex(e.digest) AS digest ' +
      'FROM events e JOIN runs r USING (run_no) ORDER BY r.run_id, e.seq',
  );
  for (const row of rows.iterate()) {
    h.update(JSON.stringify(row));
    n++;
  }
  const count = (where: string) =>
    (db.prepare(`SELECT count(*) AS c FROM events WHERE ${where}`).get() as { c: number }).c;
  const redacted = count("payload LIKE '%[REDACTED:%'");
  const leaked = count(
    "payload LIKE '%sk-ant-api03%' OR payload LIKE '%AKIAIOSFODNN7%' OR payload LIKE '%ghp_aaaa%'",
  );
  db.close();
  console.log(`${n} events, sha256 ${h.digest('hex')}; ${redacted} with placeholders, ${leaked} leaked`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
