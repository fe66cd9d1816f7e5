// The run's model gateway in a thread of its own (thread.ts says why and what is guaranteed): it
// answers the agent and posts each exchange, hook call and refusal to the run's thread, which
// records them. No ledger here, no file written.
import { parentPort, workerData } from 'node:worker_threads';
import { Gateway, type GatewayHost } from './server';
import { buildSource, setGatewayUrl } from './source-spec';
import type { FromWorker, ToWorker, WireRequest, WorkerInit } from './thread';
import type { SourceRequest } from './types';

const init = workerData as WorkerInit;
const port = parentPort!;
const post = (m: FromWorker) => port.postMessage(m);

let refusal: string | null = null;
/** Bytes of exchanges posted and not yet recorded by the run's thread. */
let queued = 0;
let waiting: (() => void)[] = [];
const hooks = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
let nextHook = 0;

/** A copy of the body's bytes: the request's buffer may be a slice of a pooled one. */
const wire = (req: SourceRequest): WireRequest => ({
  parsed: req.parsed,
  raw: new Uint8Array(req.rawBody),
  index: req.index,
  headers: req.headers,
  path: req.path,
});

const host: GatewayHost = {
  admit: () => refusal,
  record(ex) {
    const bytes = ex.req.rawBody.length + Buffer.byteLength(ex.responseBody);
    queued += bytes;
    post({
      t: 'record',
      req: wire(ex.req),
      answer: ex.answer,
      responseBody: ex.responseBody,
      status: ex.status,
      source: ex.source,
      bytes,
    });
  },
  noAnswer(req, reason, cause, detail) {
    post({ t: 'noAnswer', req: wire(req), reason, cause, detail });
  },
  hook(body) {
    const id = ++nextHook;
    return new Promise((resolve, reject) => {
      hooks.set(id, { resolve, reject });
      post({ t: 'hook', id, body });
    });
  },
  badRequest(status, message) {
    post({ t: 'bad', status, message });
  },
};

const { dialect, source } = buildSource(init.agent, init.source);
const gateway = new Gateway({
  dialect,
  source,
  token: init.token,
  host,
  prompt: init.prompt,
  workspace: init.workspace,
  home: init.home,
  maxBody: init.maxBody,
  // The bound on what the run's thread has still to record: wait for its acks past it.
  room: () =>
    queued <= init.maxQueuedBytes
      ? undefined
      : new Promise<void>((resolve) => {
          waiting.push(resolve);
        }),
});

port.on('message', (m: ToWorker) => {
  switch (m.t) {
    case 'ack': {
      queued -= m.bytes;
      if (queued <= init.maxQueuedBytes && waiting.length) {
        const w = waiting;
        waiting = [];
        for (const r of w) r();
      }
      break;
    }
    case 'refuse':
      refusal = m.reason;
      break;
    case 'hook_answer':
      hooks.get(m.id)?.resolve(m.out);
      hooks.delete(m.id);
      break;
    case 'hook_error':
      hooks.get(m.id)?.reject(new Error(m.message));
      hooks.delete(m.id);
      break;
    case 'drain':
      // Posted after every exchange answered so far (the run's thread takes them in order).
      void gateway.settle().then(() => post({ t: 'drained', id: m.id }));
      break;
    case 'heap':
      // Live memory when the process exposes the collector (the bench does), else what is allocated.
      (globalThis as { gc?: () => void }).gc?.();
      post({ t: 'heap', id: m.id, used: process.memoryUsage().heapUsed });
      break;
    case 'close':
      for (const h of hooks.values()) h.reject(new Error('the run has ended'));
      hooks.clear();
      void gateway.close().then(() => post({ t: 'closed' }));
      break;
  }
});

gateway.listen().then(
  (url) => {
    setGatewayUrl(init.source, url);
    post({ t: 'listening', url });
  },
  (e: unknown) => post({ t: 'listen_failed', message: (e as Error).message }),
);
