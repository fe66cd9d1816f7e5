import type { Result } from '../../shared/result';

/**
 * Web mode's first reads, asked as soon as the page's HTML is parsed (a module of its own, before
 * the main script): the folder, its runs and its findings. The main script (~440 KB) is fetched,
 * compiled and run meanwhile, and its store takes these answers instead of asking then: on a small
 * folder the runs are there for the app's first render, which draws the list at once instead of an
 * empty page and then the list. Not in Electron: its preload answers over IPC, with no network.
 */

/** A call's answer over HTTP, with the server's push count when it began (pushGap.ts). */
export interface Answer {
  pushes: string | null;
  result: Result<unknown>;
}

/** Calls every page makes at start with no arguments (runsSlice: loadFolder, loadRuns). */
const FIRST_READS = ['folder.current', 'runs.list', 'folder.findings'] as const;

export async function post(base: string, token: string, method: string, args: unknown): Promise<Answer> {
  try {
    const res = await fetch(`${base}/api/${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-proofloop-token': token },
      body: JSON.stringify(args ?? {}),
    });
    return { pushes: res.headers.get('x-proofloop-pushes'), result: (await res.json()) as Result<unknown> };
  } catch (e) {
    return {
      pushes: null,
      result: {
        ok: false,
        error: { code: 'io', message: `cannot reach ProofLoop: ${(e as Error).message}` },
      },
    };
  }
}

/**
 * The web-mode token from the page's first URL: in the fragment, alone (`#token=…`) or after a
 * route (`#/run/x&token=…`), or `?token=…` from older launchers. Kept for this tab in
 * sessionStorage and taken out of the address bar and history at once, so it is neither shown,
 * bookmarked nor sent on; the route stays. Only the push stream carries it in a URL (EventSource
 * sets no headers); calls send it in `x-proofloop-token`.
 */
function takeToken(): string {
  const url = new URL(window.location.href);
  const inHash = /(?:^#|&)token=([^&]*)/.exec(url.hash);
  const fromQuery = url.searchParams.get('token');
  const given = inHash ? decodeURIComponent(inHash[1]!) : fromQuery;
  if (given !== null) {
    url.searchParams.delete('token');
    const rest = inHash ? url.hash.replace(inHash[0], inHash[0].startsWith('#') ? '#' : '') : url.hash;
    window.history.replaceState(
      window.history.state,
      '',
      url.pathname + url.search + (rest === '#' ? '' : rest),
    );
  }
  const token = given ?? sessionStorage.getItem('proofloop.token') ?? '';
  if (token) sessionStorage.setItem('proofloop.token', token);
  return token;
}

let token: string | null = null;
/** This tab's web-mode token, taken from the URL once. */
export function webToken(): string {
  token ??= takeToken();
  return token;
}

const early = new Map<string, Promise<Answer>>();
if (!window.proofloop && window.location.protocol.startsWith('http'))
  for (const m of FIRST_READS) early.set(m, post('', webToken(), m, {}));

/** The early answers not taken yet: the client counts them as calls begun (pushGap). */
export function earlyAnswers(): Promise<Answer>[] {
  return [...early.values()];
}

/** The early answer to a call of `method` with no arguments, once; undefined when there is none. */
export function takeEarly(method: string, args: unknown): Promise<Answer> | undefined {
  if (args !== undefined && (typeof args !== 'object' || args === null || Object.keys(args).length > 0))
    return undefined;
  const a = early.get(method);
  early.delete(method);
  return a;
}
