/**
 * How a stored OpenHands event reads as protocol v1, on read (see
 * electron/ingest/formats/openhands.ts for how events are named). V0 pairs an observation with its
 * action by `cause` (the action's id); V1 by `tool_call_id`. A V0 call id is the action's id, so a
 * V0 result's call id is its cause.
 */
import type { FormatView, Interpreted } from './types';
import { isObj, str, type Obj } from '../json-read.js';

const idStr = (x: unknown): string =>
  typeof x === 'number' && Number.isFinite(x) ? String(x) : typeof x === 'string' ? x : '';

export const EXCERPT_CHARS = 4000;
const clip = (s: string): string => (s.length <= EXCERPT_CHARS ? s : `${s.slice(0, EXCERPT_CHARS)}…`);

const isV1 = (p: Obj): boolean => typeof p.kind === 'string';

/** The text of a V1 content list (`[{type: "text", text}]`) or of a string. */
function text(x: unknown): string {
  if (typeof x === 'string') return x;
  if (!Array.isArray(x)) return '';
  return x
    .filter(isObj)
    .map((c) => str(c.text) ?? '')
    .join('\n');
}

function v1(kind: string, p: Obj): Interpreted {
  const callId = str(p.tool_call_id) ?? '';
  const obs = isObj(p.observation) ? p.observation : {};
  switch (kind) {
    case 'model_proposed':
      return {
        payload: {
          call_id: callId,
          tool: str(p.tool_name) ?? '',
          args: p.action ?? null,
          thought: clip(text(p.thought)),
        },
        inferred: [],
      };
    case 'tool_returned': {
      const error = p.kind === 'AgentErrorEvent' || obs.is_error === true;
      const body = p.kind === 'AgentErrorEvent' ? (str(p.error) ?? '') : text(obs.content);
      return {
        payload: { call_id: callId, status: error ? 'error' : 'ok', duration_ms: 0, excerpt: clip(body) },
        inferred: ['duration_ms'],
      };
    }
    case 'action_denied':
      return {
        payload: { call_id: callId, rule: 'user', reason: str(p.rejection_reason) ?? '' },
        inferred: ['rule'],
      };
    case 'run_failed':
      return { payload: { reason: str(p.detail) ?? str(p.code) ?? str(p.value) ?? '' }, inferred: [] };
    case 'run_completed':
      return { payload: { outcome: str(p.value) ?? '' }, inferred: [] };
    case 'user_prompted':
    case 'model_responded': {
      const m = isObj(p.llm_message) ? p.llm_message : {};
      return { payload: { content: clip(text(m.content)) }, inferred: [] };
    }
    case 'context_updated':
      return { payload: { op: 'condensation' }, inferred: ['op'] };
    default:
      return { payload: p, inferred: [] };
  }
}

function v0(kind: string, p: Obj): Interpreted {
  const args = isObj(p.args) ? p.args : {};
  const extras = isObj(p.extras) ? p.extras : {};
  switch (kind) {
    case 'model_proposed':
      return {
        payload: {
          call_id: idStr(p.id),
          tool: str(p.action) ?? '',
          args: p.args ?? null,
          thought: clip(str(args.thought) ?? ''),
        },
        inferred: [],
      };
    case 'tool_returned': {
      const meta = isObj(extras.metadata) ? extras.metadata : {};
      const exit = typeof meta.exit_code === 'number' ? meta.exit_code : null;
      const error = p.observation === 'error' || (exit !== null && exit !== 0);
      return {
        payload: {
          call_id: idStr(p.cause),
          status: error ? 'error' : 'ok',
          duration_ms: 0,
          excerpt: clip(str(p.content) ?? str(p.message) ?? ''),
        },
        inferred: exit === null && p.observation !== 'error' ? ['status', 'duration_ms'] : ['duration_ms'],
      };
    }
    case 'action_denied':
      return {
        payload: { call_id: idStr(p.cause), rule: 'user', reason: str(p.content) ?? str(p.message) ?? '' },
        inferred: ['rule'],
      };
    // base_state.json's execution_status, when the run ended by it (electron/ingest: statusPart).
    case 'run_failed':
      return {
        payload: {
          reason: str(extras.reason) ?? str(p.message) ?? statusOf(p) ?? 'error',
        },
        inferred: [],
      };
    case 'run_completed':
      return {
        payload: { outcome: str(args.final_thought) ?? str(args.outputs) ?? statusOf(p) ?? 'finish' },
        inferred: [],
      };
    case 'user_prompted':
    case 'model_responded':
      return { payload: { content: clip(str(args.content) ?? str(p.message) ?? '') }, inferred: [] };
    case 'model_reasoned':
      return { payload: { content: clip(str(args.thought) ?? '') }, inferred: [] };
    case 'context_updated':
      return { payload: { op: 'condensation' }, inferred: ['op'] };
    default:
      return { payload: p, inferred: [] };
  }
}

/** A status record's `execution_status`, as the run's end says it. */
const statusOf = (p: Record<string, unknown>): string | null => {
  const s = str(p.execution_status);
  return s === null ? null : `execution_status ${s}`;
};

export const openHandsView: FormatView = {
  name: 'openhands',
  // A V0 event stream has no record that starts the run; a V1 folder's base_state.json does.
  session: true,
  interpret(kind, payload) {
    if (kind === 'run_started') {
      const agent = isObj(payload.agent) ? payload.agent : {};
      const llm = isObj(agent.llm) ? agent.llm : {};
      return {
        payload: {
          task_id: str(payload.id) ?? '',
          goal: '',
          agent: { name: 'openhands', model: str(llm.model) },
        },
        inferred: ['task_id', 'goal', 'agent'],
      };
    }
    return isV1(payload) ? v1(kind, payload) : v0(kind, payload);
  },
};
