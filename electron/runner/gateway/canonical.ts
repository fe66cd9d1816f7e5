import { canonicalJson } from '../../../shared/protocol';
import { sha256Hex } from '../../crypto';
import { redactCredentials } from '../../../shared/redact';
import type { CanonicalRequest, ModelAnswer, NormaliseContext } from './types';
import { dict } from '../../../shared/dict.js';
import { isObj, type Obj } from '../../../shared/json-read.js';

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

/**
 * What a normalised object keeps of one key: `walk` normalises its value, `drop` leaves it out,
 * `{ value }` puts that in its place. `item`: the object is an element of an array (an input item,
 * a content part), where a dialect drops ids that name the item rather than what it says.
 */
export type KeyRule = (
  key: string,
  value: unknown,
  owner: Obj,
  item: boolean,
) => 'walk' | 'drop' | { value: unknown };

/**
 * A request's JSON normalised for comparison: every string through `text`, each object's keys as
 * `rule` says. An explicit stack instead of recursion: the request's depth is the agent's to
 * choose. Objects are made without a prototype, so a `__proto__` key stays a key.
 */
export function normaliseJson(value: unknown, text: (s: string) => string, rule: KeyRule): unknown {
  const root: Obj = dict();
  const stack: { parent: Obj | unknown[]; key: string | number; v: unknown; item: boolean }[] = [
    { parent: root, key: 'v', v: value, item: false },
  ];
  while (stack.length) {
    const { parent, key, v, item } = stack.pop()!;
    let out: unknown = v;
    if (typeof v === 'string') out = text(v);
    else if (Array.isArray(v)) {
      const arr: unknown[] = new Array(v.length);
      v.forEach((x, i) => stack.push({ parent: arr, key: i, v: x, item: true }));
      out = arr;
    } else if (isObj(v)) {
      const o: Obj = dict();
      for (const [k, x] of Object.entries(v)) {
        const r = rule(k, x, v, item);
        if (r === 'walk') stack.push({ parent: o, key: k, v: x, item: false });
        else if (r !== 'drop') o[k] = r.value;
      }
      out = o;
    }
    (parent as Record<string | number, unknown>)[key] = out;
  }
  return root.v;
}

/** A call id renumbered in order of first appearance (`call_1`, …): run-specific ids compare equal. */
export function callId(id: string, ids: Map<string, string>): string {
  let n = ids.get(id);
  if (!n) {
    n = `call_${ids.size + 1}`;
    ids.set(id, n);
  }
  return n;
}
