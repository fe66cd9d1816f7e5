/**
 * The `upstream` answer source: forwards the agent's request to the real API with the user's key
 * from the host's environment (the dialect names the variables: ANTHROPIC_API_KEY …). The agent
 * never sees the key (it holds the per-run token); the key is read once here, put in one header of
 * the forwarded request, and never stored, logged, recorded or exported. The answer's bytes stream
 * to the agent as they arrive; the gateway records them (redacted) afterwards.
 */
import http from 'node:http';
import https from 'node:https';
import type { AnswerSource, Dialect, SourceAnswer, SourceRequest } from './types';
import { dict } from '../../../shared/dict.js';

/** Agent headers not forwarded: its token, hop-by-hop headers, and encodings the record must not need. */
const DROP = new Set([
  'host',
  'x-api-key',
  'authorization',
  'content-length',
  'connection',
  'accept-encoding',
  'keep-alive',
  'transfer-encoding',
]);

export function upstreamSource(dialect: Dialect, env: NodeJS.ProcessEnv = process.env): AnswerSource {
  const key = dialect.upstream.keyEnv.map((k) => env[k]).find((v) => typeof v === 'string' && v.length > 0);
  const base = new URL(env[dialect.upstream.baseEnv] || dialect.upstream.defaultBase);
  const mod = base.protocol === 'https:' ? https : http;
  const agent = new mod.Agent({ keepAlive: true, maxSockets: 16 });
  return {
    kind: 'upstream',
    answer(req: SourceRequest): Promise<SourceAnswer> {
      if (!key) {
        return Promise.resolve({
          type: 'none',
          reason: `upstream_error: no key in ${dialect.upstream.keyEnv.join(' or ')} of ProofLoop's environment`,
        });
      }
      const headers: Record<string, string> = dict();
      for (const [k, v] of Object.entries(req.headers)) {
        if (!DROP.has(k) && typeof v === 'string') headers[k] = v;
      }
      Object.assign(headers, dialect.upstream.authHeaders(key), {
        'content-length': String(req.rawBody.length),
      });
      const target = new URL(req.path ?? '/', base);
      return new Promise((resolve) => {
        const out = mod.request(target, { method: 'POST', headers, agent }, (res) => {
          const chunks: Buffer[] = [];
          req.start?.(res.statusCode ?? 502, String(res.headers['content-type'] ?? 'application/json'));
          res.on('data', (c: Buffer) => {
            chunks.push(c);
            req.write?.(c);
          });
          res.on('end', () =>
            resolve({
              type: 'raw',
              status: res.statusCode ?? 502,
              contentType: String(res.headers['content-type'] ?? 'application/json'),
              body: Buffer.concat(chunks).toString('utf8'),
              streamed: Boolean(req.write),
            }),
          );
          res.on('error', (e) =>
            resolve({ type: 'none', reason: `upstream_error: the answer broke off: ${e.message}` }),
          );
        });
        out.on('error', (e) => resolve({ type: 'none', reason: `upstream_error: ${e.message}` }));
        out.end(req.rawBody);
      });
    },
  };
}
