/**
 * OpenHands event streams, both generations:
 * - V0 (openhands/events): a JSON array of events, as the app's trajectory download and
 *   `tests/runtime/trajs/*.json` hold them, or a session's `events/<n>.json` files. An event is an
 *   action (`action`: run, edit, message, finish, …) or an observation (`observation`: run, edit,
 *   user_rejected, agent_state_changed, …) whose `cause` is the id of the action it answers.
 * - V1 (the agent SDK): a conversation folder `<id>/base_state.json` + `events/event-<n>-<id>.json`,
 *   one event per file, each `{kind: "ActionEvent" | "ObservationEvent" | …, id, timestamp, source}`
 *   paired by `tool_call_id`.
 *
 * Naming (each event's payload is the event as written):
 *   V1 base_state.json                      → run_started
 *   V1 ActionEvent, V0 agent actions        → model_proposed (V0 think → model_reasoned)
 *   V1 ObservationEvent, V0 observations with a cause → tool_returned
 *   V1 AgentErrorEvent (a tool call the agent could not make) → tool_returned, its status error
 *   V1 UserRejectObservation, V0 user_rejected → action_denied
 *   V1 ConversationErrorEvent, V0 agent_state_changed to "error" → run_failed
 *   V1 execution_status "finished", V0 finish action → run_completed
 *   V1 base_state.json's execution_status when a folder is read: "finished" → run_completed, "error"
 *     or "stuck" → run_failed, after the events read then; any other, after an end, → run_resumed
 *     (statusPart: OpenHands rewrites base_state.json as a conversation goes on, and writes no
 *     event when it finishes)
 *   messages: from the user → user_prompted, from the agent → model_responded
 *   V1 CondensationEvent, V0 condensation action → context_updated
 *   anything else → openhands_<kind> (V1) or openhands_action_<type> / openhands_observation_<type> (V0)
 * How the events read as v1 is shared/formats/openhands.ts.
 */
import { kindPart } from './names';
import type { DocPart, DocumentAdapter, MappedEvent } from './types';
import { dict } from '../../../shared/dict.js';
import { isObj, nonEmpty as str, type Obj } from '../../../shared/json-read.js';

const idStr = (x: unknown): string | null =>
  typeof x === 'number' && Number.isFinite(x) ? String(x) : str(x);

const isV0Event = (e: unknown): boolean =>
  isObj(e) && ('action' in e || 'observation' in e) && 'source' in e && 'id' in e;
const isV1Event = (e: unknown): boolean =>
  isObj(e) && typeof e.kind === 'string' && /Event$|Observation$/.test(e.kind) && 'id' in e;

/** V0 actions that are not a proposal of a tool call. */
const V0_ACTIONS: Record<string, string> = {
  think: 'model_reasoned',
  finish: 'run_completed',
  condensation: 'context_updated',
};
/** V0 observations that answer no tool call even when they carry a cause. */
const V0_NOT_RESULTS = new Set(['null', 'agent_state_changed', 'recall', 'user_rejected']);

function v0Kind(e: Obj): string {
  const source = str(e.source);
  if (typeof e.action === 'string') {
    const a = e.action;
    if (a === 'message')
      return source === 'user'
        ? 'user_prompted'
        : source === 'agent'
          ? 'model_responded'
          : 'openhands_action_message';
    if (Object.prototype.hasOwnProperty.call(V0_ACTIONS, a)) return V0_ACTIONS[a]!;
    if (source === 'agent') return 'model_proposed';
    return `openhands_action_${kindPart(a, 40)}`;
  }
  const o = str(e.observation) ?? 'unnamed';
  if (o === 'user_rejected') return 'action_denied';
  if (o === 'agent_state_changed' && isObj(e.extras) && e.extras.agent_state === 'error') return 'run_failed';
  if (idStr(e.cause) !== null && !V0_NOT_RESULTS.has(o)) return 'tool_returned';
  return `openhands_observation_${kindPart(o, 37)}`;
}

function v1Kind(e: Obj): string {
  const k = e.kind as string;
  switch (k) {
    case 'ActionEvent':
      return 'model_proposed';
    case 'ObservationEvent':
    case 'AgentErrorEvent':
      return 'tool_returned';
    case 'UserRejectObservation':
      return 'action_denied';
    case 'ConversationErrorEvent':
      return 'run_failed';
    case 'CondensationEvent':
      return 'context_updated';
    case 'MessageEvent':
      return e.source === 'user'
        ? 'user_prompted'
        : e.source === 'agent'
          ? 'model_responded'
          : 'openhands_message_event';
    case 'ConversationStateUpdateEvent':
      if (e.key === 'execution_status' && e.value === 'finished') return 'run_completed';
      if (e.key === 'execution_status' && e.value === 'error') return 'run_failed';
      return 'openhands_state_update';
    default:
      return `openhands_${kindPart(k, 50)}`;
  }
}

function ids(e: Obj): Record<string, string> {
  const out: Record<string, string> = dict();
  const put = (k: string, v: unknown): void => {
    const s = idStr(v);
    if (s !== null) out[k] = s;
  };
  put('id', e.id);
  put('cause', e.cause);
  put('tool_call_id', e.tool_call_id);
  put('action_id', e.action_id);
  put('llm_response_id', e.llm_response_id);
  const meta = e.tool_call_metadata;
  if (isObj(meta)) put('tool_call_id', meta.tool_call_id);
  return out;
}

/** What base_state.json's `execution_status` ends a run with, when it does. */
const ENDS: Record<string, 'run_completed' | 'run_failed'> = {
  finished: 'run_completed',
  error: 'run_failed',
  stuck: 'run_failed',
};

/** Whether an `execution_status` is an end of the conversation (finished, error, stuck). */
export const endsRun = (status: string | null): boolean =>
  status !== null && Object.prototype.hasOwnProperty.call(ENDS, status);

/**
 * A part that says what base_state.json's `execution_status` was when its folder was read: the
 * run's end (finished, error, stuck), or (`resumedFrom`: the run's head then) that the
 * conversation went on after an end this ledger holds; run_resumed names the seq it goes on from,
 * which the importer knows and the file does not. Without a time: the file holds none for it, and
 * its modification time is a copy's as often as OpenHands' (a copied folder's run would have
 * lasted until the copy).
 */
export function statusPart(status: string, resumedFrom?: number): DocPart {
  return resumedFrom === undefined
    ? { record: { execution_status: status }, type: 'base_status', pointer: STATUS_POINTER }
    : {
        record: { execution_status: status, from_seq: resumedFrom },
        type: 'base_resumed',
        pointer: STATUS_POINTER,
      };
}
const STATUS_POINTER = 'base_state.json#/execution_status';

export const openHands: DocumentAdapter = {
  name: 'openhands',
  label: 'OpenHands event stream',
  sniff: (head) =>
    /^\s*\[/.test(head) && /"(action|observation)"\s*:/.test(head)
      ? true
      : /"kind"\s*:\s*"[A-Za-z]+(Event|Observation)"/.test(head),
  claims: (doc) =>
    (Array.isArray(doc) && doc.length > 0 && (isV0Event(doc[0]) || isV1Event(doc[0]))) || isV1Event(doc),
  runId: (doc) => (isObj(doc) && !isV1Event(doc) ? str(doc.id) : null),
  parts(doc) {
    if (Array.isArray(doc))
      return doc.map((e, i) => ({
        record: isObj(e) ? e : { value: e ?? null },
        type: 'event',
        pointer: `/${i}`,
      }));
    if (isV1Event(doc)) return [{ record: doc as Obj, type: 'event', pointer: '' }];
    return [{ record: isObj(doc) ? doc : { value: doc ?? null }, type: 'base_state', pointer: '' }];
  },
  mapPart(part: DocPart) {
    const e = part.record;
    if (part.type === 'base_status' || part.type === 'base_resumed') {
      const status = str(e.execution_status) ?? '';
      const kind = part.type === 'base_resumed' || !endsRun(status) ? 'run_resumed' : ENDS[status]!;
      return [{ kind, at: '', payload: e, source: { ids: {} } }];
    }
    if (part.type === 'base_state')
      return [
        { kind: 'run_started', at: '', payload: e, source: { ids: str(e.id) ? { id: e.id as string } : {} } },
      ];
    const at = str(e.timestamp) ?? '';
    let kind: string;
    if (isV1Event(e)) kind = v1Kind(e);
    else if ('action' in e || 'observation' in e) kind = v0Kind(e);
    else return { error: 'an OpenHands event has neither kind (V1) nor action / observation (V0)' };
    const ev: MappedEvent = { kind, at, payload: e, source: { ids: ids(e) } };
    return [ev];
  },
};
