import type { ArgsOf, MethodName, PushName, PushOf, ResultOf } from '../../shared/api/contract';
import { RENDERER_PUSHES } from '../../shared/api/surface';
import type { Result } from '../../shared/result';
import { earlyAnswers, post, takeEarly, webToken } from './early';
import { createPushGap } from './pushGap';

/** What the renderer knows of the main process: the contract's methods and pushes, nothing else. */
export interface ApiClient {
  readonly transport: 'ipc' | 'http';
  call<M extends MethodName>(method: M, args: ArgsOf<M>): Promise<Result<ResultOf<M>>>;
  subscribe<P extends PushName>(channel: P, fn: (payload: PushOf<P>) => void): () => void;
  /**
   * Called when the push stream (re)connects having maybe missed pushes. Pushes made while it was
   * not connected are lost, so what they would have said must be read again then: without it, a
   * page whose first list was read before an import committed, and whose stream connected after
   * that import's push, showed no runs until the next push (for a folder with nothing new, never).
   * At its first connection, only if a push went out that the page's reads may not have seen
   * (pushGap.ts); at every reconnection.
   */
  onConnected(fn: () => void): () => void;
  /**
   * Untyped call by name, for methods the renderer was built to use before they landed in the
   * contract. Same transport and Result as `call`; prefer `call` for anything in the contract.
   */
  callRaw(method: string, args: unknown): Promise<Result<unknown>>;
}

/** The surface the Electron preload exposes as `window.proofloop`. */
export interface PreloadApi {
  call(method: string, args: unknown): Promise<Result<unknown>>;
  subscribe(channel: string, fn: (payload: unknown) => void): () => void;
}

declare global {
  interface Window {
    proofloop?: PreloadApi;
  }
}

function ipcClient(api: PreloadApi): ApiClient {
  return {
    transport: 'ipc',
    call: (method, args) => api.call(method, args) as Promise<Result<never>>,
    callRaw: (method, args) => api.call(method, args),
    subscribe: (channel, fn) => api.subscribe(channel, fn as (p: unknown) => void),
    // IPC pushes reach a listener from the moment subscribe returns, in order with call replies:
    // there is no stream to connect or to lose.
    onConnected: () => () => undefined,
  };
}

function httpClient(token: string, base = ''): ApiClient {
  const listeners = new Map<string, Set<(p: unknown) => void>>();
  const connected = new Set<() => void>();
  const gap = createPushGap();
  let hellos = 0;
  let source: EventSource | null = null;
  const ensureSource = () => {
    if (source) return;
    source = new EventSource(`${base}/api/events?token=${encodeURIComponent(token)}`);
    // `hello` is the stream's first message, written once the server listens for pushes
    // (transports/http.ts, sse): from then on none is missed. EventSource reconnects by itself, to
    // a server that may have restarted: after the first, every connection reads again.
    source.addEventListener('hello', (ev) => {
      const notify = () => {
        for (const fn of connected) fn();
      };
      if (hellos++ > 0) return notify();
      let count = '';
      try {
        count = String((JSON.parse((ev as MessageEvent<string>).data) as { pushes?: unknown }).pushes ?? '');
      } catch {
        // Unreadable: the count stays unknown, and the page reads again.
      }
      void gap.answered().then(() => {
        if (gap.missed(count)) notify();
      });
    });
    for (const name of RENDERER_PUSHES) {
      source.addEventListener(name, (ev) => {
        const data = JSON.parse((ev as MessageEvent<string>).data) as unknown;
        for (const fn of listeners.get(name) ?? []) fn(data);
      });
    }
  };
  // The first reads were asked before this client existed (early.ts): counted as begun now, before
  // the push stream is opened, so that its hello waits for them.
  for (const a of earlyAnswers()) {
    const answered = gap.began();
    void a.then((x) => answered(x.pushes));
  }
  async function callRaw(method: string, args: unknown): Promise<Result<unknown>> {
    const early = takeEarly(method, args);
    if (early) return (await early).result;
    const answered = gap.began();
    const a = await post(base, token, method, args);
    answered(a.pushes);
    return a.result;
  }
  return {
    transport: 'http',
    call: (method, args) => callRaw(method, args) as Promise<Result<never>>,
    callRaw,
    subscribe(channel, fn) {
      ensureSource();
      const set = listeners.get(channel) ?? new Set();
      set.add(fn as (p: unknown) => void);
      listeners.set(channel, set);
      return () => set.delete(fn as (p: unknown) => void);
    },
    onConnected(fn) {
      ensureSource();
      connected.add(fn);
      return () => connected.delete(fn);
    },
  };
}

/** Picks the transport at start: Electron's preload if present, else HTTP with the URL's token. */
export function createClient(): ApiClient {
  if (window.proofloop) return ipcClient(window.proofloop);
  return httpClient(webToken());
}
