// Kept apart from main.ts so it loads without Electron: integration tests call it directly.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { confine } from '../fs/confine';
import { CSP } from '../transports/csp';
import { STATIC_TYPES } from '../transports/static-types';

export const APP_SCHEME = 'app';
/** The one origin of the UI: `app://proofloop`. */
export const APP_ORIGIN = `${APP_SCHEME}://proofloop`;

const TYPES = STATIC_TYPES;

const answer = (status: number, text: string) =>
  new Response(text, { status, headers: { 'content-type': 'text/plain; charset=utf-8' } });

/**
 * The `app://proofloop/<path>` handler: files of the built renderer only, confined to its folder
 * (no `..`, no link), with the CSP. Anything else (another host, a malformed escape, a missing
 * file) is a plain error answer, never a file from elsewhere.
 */
export function serveAppRequest(rendererDir: string, url: string): Response {
  let rel: string;
  try {
    const u = new URL(url);
    if (`${u.protocol}//${u.host}` !== APP_ORIGIN) return answer(404, 'not found');
    rel = decodeURIComponent(u.pathname).replace(/^\/+/, '') || 'index.html';
  } catch {
    return answer(400, 'malformed URL');
  }
  let body: Buffer;
  try {
    body = readFileSync(confine(rendererDir, rel, 'renderer file'));
  } catch {
    return answer(404, 'not found');
  }
  return new Response(body, {
    status: 200,
    headers: {
      'content-type': TYPES[path.extname(rel)] ?? 'application/octet-stream',
      'content-security-policy': CSP,
      'x-content-type-options': 'nosniff',
    },
  });
}
