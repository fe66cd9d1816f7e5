import { canonicalJson } from '../../../shared/protocol';
import { sha256Hex } from '../../crypto';
import type { CanonicalRequest, NormaliseContext } from './types';

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
 * A text with what differs between equal runs replaced: the run's paths (workspace, home, and the
 * workspace as Claude Code's project key), `/tmp/claude-<uid>/`, UUIDs, dates and times, Claude
 * Code's subagent ids and durations. Used on every string of a canonical request and on tool results.
 */
export function normaliseText(s: string, ctx: NormaliseContext): string {
  let t = s;
  if (ctx.workspace) {
    t = t.split(ctx.workspace).join('<workspace>');
    t = t.split(ctx.workspace.replace(/[^A-Za-z0-9]/g, '-')).join('<workspace-key>');
  }
  if (ctx.home) t = t.split(ctx.home).join('<home>');
  t = t.replace(/\/tmp\/claude-\d+\//g, '<tmp>/');
  return t
    .replace(UUID, '<uuid>')
    .replace(DATE, '<date>')
    .replace(AGENT_ID, '<agent>')
    .replace(DURATION, '$1$2<ms>');
}
