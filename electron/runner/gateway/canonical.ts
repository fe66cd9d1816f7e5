import { canonicalJson } from '../../../shared/protocol';
import { sha256Hex } from '../../crypto';
import { redactCredentials } from '../../../shared/redact';
import type { CanonicalRequest, ModelAnswer, NormaliseContext } from './types';

/** Digests of a canonical request's parts: what a replay compares, part by part. */
export function canonicalDigests(c: CanonicalRequest): { head: string; messages: string[]; all: string } {
  const head = sha256Hex(canonicalJson(c.head) ?? '');
  const messages = c.messages.map((m) => sha256Hex(canonicalJson(m) ?? ''));
  return { head, messages, all: sha256Hex(head + messages.join('')) };
}

const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;
const DATE = /\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b/g;
const AGENT_ID = /\ba[0-9a-f]{16}\b/g;
const DURATION = /\b(duration_?ms|totalDurationMs|duration_api_ms)("?\s*[:=]\s*)\d+/gi;

/**
 * A text with what differs between two runs of one task that did the same thing replaced: the one
 * list of what is run-specific, used for every digest that runs are compared by (a request's
 * canonical form, an answer's, a tool result's), so a replay, `--repeat` and `proofloop diff` part
 * runs only where they really differ. Replaced, in this order:
 * - the run's workspace (`<workspace>`) and that path as Claude Code's project key
 *   (`<workspace-key>`: each character not a letter or digit as `-`), its home (`<home>`), the
 *   run's folder (`<run-dir>`), its id (`<run>`, 6+ characters), its per-run token (`<token>`), the
 *   gateway's URL with its random port (`<gateway>`);
 * - `/tmp/claude-<uid>/` (`<tmp>/`), UUIDs (session and request ids: `<uuid>`), dates and times
 *   (`<date>`), Claude Code's subagent ids (`a` + 16 hex: `<agent>`), and the values of
 *   `duration_ms`, `totalDurationMs`, `duration_api_ms` (`<ms>`).
 * Each dialect's canonical form drops more of a request (ids, cache hints, metadata: listed in
 * anthropic.ts and responses.ts); tested in test/unit/normalise-run.unit.spec.ts.
 */
export function normaliseText(s: string, ctx: NormaliseContext): string {
  let t = s;
  const swap = (what: string | undefined, by: string, min = 1) => {
    if (what && what.length >= min && t.includes(what)) t = t.split(what).join(by);
  };
  swap(ctx.workspace, '<workspace>');
  if (ctx.workspace) swap(ctx.workspace.replace(/[^A-Za-z0-9]/g, '-'), '<workspace-key>');
  swap(ctx.home, '<home>');
  swap(ctx.runDir, '<run-dir>');
  swap(ctx.runId, '<run>', 6);
  swap(ctx.token, '<token>', 8);
  swap(ctx.gateway, '<gateway>');
  t = t.replace(/\/tmp\/claude-\d+\//g, '<tmp>/');
  return t
    .replace(UUID, '<uuid>')
    .replace(DATE, '<date>')
    .replace(AGENT_ID, '<agent>')
    .replace(DURATION, '$1$2<ms>');
}

/**
 * An answer's digest as runs are compared by it: its text, its calls (tool, input; not their ids)
 * and why it stopped, redacted and normalised (normaliseText). Two runs whose model answered the
 * same have equal digests even though each answer names its own run's paths and message ids.
 */
export function answerDigest(a: ModelAnswer, ctx: NormaliseContext): string {
  const shape = {
    text: a.text,
    calls: a.calls.map((c) => ({ tool: c.name, input: c.input, ...(c.kind ? { kind: c.kind } : {}) })),
    stop: a.stop,
  };
  return sha256Hex(normaliseText(canonicalJson(redactCredentials(shape).value) ?? '', ctx));
}
