import type { ArgsOf, MethodName, PushName, PushOf, ResultOf } from '../../shared/api/contract';
import { onRendererSurface } from '../../shared/api/surface';
import type { Result } from '../../shared/result';
import { createClient, type ApiClient } from './client';

/** An error the UI shows: the API's code and message, or `unavailable` for a method not built yet. */
export interface UiError {
  code: string;
  message: string;
}
export type UiResult<T> = { ok: true; value: T } | { ok: false; error: UiError };

let client: ApiClient | null = null;

/** The one client of this window (tests may install their own before the app mounts). */
export function api(): ApiClient {
  client ??= createClient();
  return client;
}

export function setApiClient(c: ApiClient): void {
  client = c;
}

export function call<M extends MethodName>(method: M, args: ArgsOf<M>): Promise<Result<ResultOf<M>>> {
  return api().call(method, args);
}

export function subscribe<P extends PushName>(channel: P, fn: (payload: PushOf<P>) => void): () => void {
  return api().subscribe(channel, fn);
}

export function onConnected(fn: () => void): () => void {
  return api().onConnected(fn);
}

/** Whether the renderer may call the method: it is in the contract and on the renderer's surface. */
export function available(method: string): boolean {
  return onRendererSurface(method);
}

export const unavailable = (method: string): UiError => ({
  code: 'unavailable',
  message: `"${method}" is not available in this version of ProofLoop yet.`,
});

/**
 * Calls a contract method whose handler may not be built into the running server yet: an
 * "unknown method" answer becomes the `unavailable` error the views show as a notice.
 */
export async function callOptional<M extends MethodName>(
  method: M,
  args: ArgsOf<M>,
): Promise<UiResult<ResultOf<M>>> {
  return callLoose<ResultOf<M>>(method, args);
}

/**
 * Calls a method by name that may not be in the contract at all (e.g. an artifact reader).
 * Important: the value is not validated here; views read it defensively.
 */
export async function callLoose<T>(method: string, args: unknown): Promise<UiResult<T>> {
  if (!available(method)) return { ok: false, error: unavailable(method) };
  const r = await api().callRaw(method, args);
  if (!r.ok && /unknown method|handler is not a function/.test(r.error.message))
    return { ok: false, error: unavailable(method) };
  return r as UiResult<T>;
}
