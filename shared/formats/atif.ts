/**
 * How a stored part of an ATIF trajectory reads as protocol v1, on read (see
 * electron/ingest/formats/atif.ts for how parts are named). An agent step is stored once per event
 * it makes; `source.part` says which: 0 the message, 1…n its tool calls, then its observation
 * results in order.
 */
import type { FormatView, Interpreted } from './types';
import type { SourceRef } from './source-ref';
import { isObj, str, num, type Obj } from '../json-read.js';

export const EXCERPT_CHARS = 4000;
const clip = (s: string): string => (s.length <= EXCERPT_CHARS ? s : `${s.slice(0, EXCERPT_CHARS)}…`);

/** An ATIF message or observation content: a string, or content parts (text, image) since v1.6. */
export function atifText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter(isObj)
    .map((c) => (c.type === 'text' ? (str(c.text) ?? '') : c.type === 'image' ? '[image]' : ''))
    .join('\n');
}

function call(p: Obj, part: number): Obj | null {
  const calls = Array.isArray(p.tool_calls) ? p.tool_calls : [];
  const c: unknown = calls[part - 1];
  return isObj(c) ? c : null;
}

function result(p: Obj, part: number): Obj | null {
  const calls = p.source === 'agent' && Array.isArray(p.tool_calls) ? p.tool_calls.length : 0;
  const results = isObj(p.observation) && Array.isArray(p.observation.results) ? p.observation.results : [];
  const r: unknown = results[part - 1 - calls];
  return isObj(r) ? r : null;
}

function interpret(kind: string, p: Obj, source: SourceRef | null | undefined): Interpreted {
  const part = source?.part ?? 0;
  switch (kind) {
    case 'run_started': {
      const agent = isObj(p.agent) ? p.agent : {};
      return {
        payload: {
          task_id: str(p.session_id) ?? '',
          goal: '',
          agent: { name: str(agent.name) ?? '', version: str(agent.version), model: str(agent.model_name) },
          schema_version: str(p.schema_version),
        },
        inferred: ['task_id', 'goal'],
      };
    }
    case 'user_prompted':
      return { payload: { content: clip(atifText(p.message)) }, inferred: [] };
    case 'model_responded':
      return {
        payload: {
          content: atifText(p.message),
          reasoning: str(p.reasoning_content),
          model: str(p.model_name),
        },
        inferred: [],
      };
    case 'model_proposed': {
      const c = call(p, part);
      const id = str(c?.tool_call_id) ?? '';
      // A trajectory ProofLoop wrote (atif-out.ts) wraps args that were no object as {input}.
      const x =
        isObj(p.extra) && isObj(p.extra.proofloop) && isObj(p.extra.proofloop.calls)
          ? p.extra.proofloop.calls
          : {};
      const mine = isObj(x[id]) ? x[id] : {};
      const args =
        isObj(c?.arguments) && mine.args === 'wrapped' ? c.arguments.input : (c?.arguments ?? null);
      return {
        payload: { call_id: id, tool: str(c?.function_name) ?? '', args },
        inferred: [],
      };
    }
    case 'tool_returned':
    case 'atif_observation': {
      const r = result(p, part);
      const own = str(r?.source_call_id);
      // The one result of a step of one call, written without its source_call_id (terminus-2).
      const only = own === null && kind === 'tool_returned' ? str(call(p, 1)?.tool_call_id) : null;
      const out: Obj = {
        call_id: own ?? only ?? '',
        status: 'ok',
        duration_ms: 0,
        excerpt: clip(atifText(r?.content)),
      };
      const refs = Array.isArray(r?.subagent_trajectory_ref) ? r.subagent_trajectory_ref.filter(isObj) : [];
      if (refs.length > 0)
        out.subagents = refs.map((x) => ({
          session_id: str(x.session_id),
          trajectory_path: str(x.trajectory_path),
        }));
      return {
        payload: out,
        inferred: only !== null ? ['call_id', 'status', 'duration_ms'] : ['status', 'duration_ms'],
      };
    }
    default:
      return { payload: p, inferred: [] };
  }
}

/** prompt + completion tokens of a step's metrics (ATIF counts cached tokens inside the prompt). */
export function stepTokens(p: Obj): number | null {
  const m = isObj(p.metrics) ? p.metrics : null;
  if (!m) return null;
  return (num(m.prompt_tokens) ?? 0) + (num(m.completion_tokens) ?? 0);
}

export const atifView: FormatView = {
  name: 'atif',
  // A trajectory records each call and its result, not a host's invocation of it (as a session does).
  session: true,
  interpret(kind, payload, ctx) {
    return interpret(kind, payload, ctx.source);
  },
  usage(kind, payload, ctx) {
    if (kind !== 'model_responded') return null;
    const t = stepTokens(payload);
    return t === null ? null : { key: `step:${ctx.source?.ids?.step_id ?? ctx.seq}`, tokens: t };
  },
};
