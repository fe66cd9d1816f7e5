/**
 * Codex rollouts: `~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`, one line
 * `{timestamp, type, payload}` each; and the older layout (before ~0.3x) whose first line is the
 * session header `{id, timestamp, instructions…}` and whose other lines are bare response items or
 * `{record_type: "state"}`.
 *
 * Naming (each event's payload is the whole line as written):
 *   session_meta (or the old header)              → run_started
 *   turn_context                                  → codex_turn_context
 *   compacted                                     → context_updated
 *   response_item message: assistant → model_responded, user → user_prompted,
 *                          other roles → codex_<role>_message (developer, system)
 *   response_item reasoning                       → model_reasoned
 *   response_item function_call, custom_tool_call, local_shell_call, tool_search_call
 *                                                 → model_proposed; an apply_patch call is also one
 *                                                   file_changed per file it names (source.part i)
 *   response_item *_output                        → tool_returned (one that its exec policy rejected:
 *                                                   action_denied first); an output with no call_id
 *                                                   (0.169's goal_objective) → codex_item_<type>
 *   response_item of another type                 → codex_item_<type> (web_search_call, ghost_snapshot…)
 *   event_msg context_compacted                   → context_updated
 *   event_msg of another type                     → codex_event_<type> (token_count,
 *                                                   exec_approval_request, turn_aborted, error,
 *                                                   and the user_message / agent_message echoes
 *                                                   of response items, which views show once)
 *   any other line type                           → codex_<type>; a line without one → codex_record
 * Pairing a result with its call (call_id) and a line with its turn (turn_id) is done on read.
 */
import { rejectionOf } from '../../../shared/formats/codex';
import { patchFiles, patchOf } from '../../../shared/formats/codex-patch';
import { kindPart } from './names';
import type { FormatAdapter, Json, MappedEvent } from './types';
import { dict } from '../../../shared/dict.js';
import { isObj, nonEmpty as str, type Obj } from '../../../shared/json-read.js';

const LINE_TYPES = new Set(['session_meta', 'response_item', 'event_msg', 'turn_context', 'compacted']);
const CALLS = new Set(['function_call', 'custom_tool_call', 'local_shell_call', 'tool_search_call']);
const OUTPUTS = new Set([
  'function_call_output',
  'custom_tool_call_output',
  'local_shell_call_output',
  'tool_search_output',
]);

function ids(line: Obj, p: Obj | null): Record<string, string> {
  const out: Record<string, string> = dict();
  if (p === null) return out;
  const put = (k: string, v: unknown): void => {
    const s = str(v);
    if (s !== null) out[k] = s;
  };
  put('call_id', p.call_id);
  put('id', p.id);
  put('turn_id', p.turn_id);
  const meta = p.metadata;
  if (isObj(meta) && out.turn_id === undefined) put('turn_id', meta.turn_id);
  const pass = p.internal_chat_message_metadata_passthrough;
  if (isObj(pass) && out.turn_id === undefined) put('turn_id', pass.turn_id);
  if (line.type === 'session_meta') put('session_id', p.session_id ?? p.id);
  return out;
}

function itemKinds(item: Obj): string[] {
  const type = str(item.type);
  if (type === 'message') {
    const role = str(item.role);
    if (role === 'assistant') return ['model_responded'];
    if (role === 'user') return ['user_prompted'];
    return [`codex_${kindPart(role ?? 'unnamed', 50)}_message`];
  }
  if (type === 'reasoning') return ['model_reasoned'];
  if (type !== null && CALLS.has(type)) return ['model_proposed'];
  if (type !== null && OUTPUTS.has(type)) {
    // An output of no call (0.169's `goal_objective` after create_goal) is no call's result.
    if (str(item.call_id) === null) return [`codex_item_${kindPart(type, 53)}`];
    // A call Codex's exec policy refused: its output is the refusal, the decision comes first.
    return rejectionOf(item.output) !== null ? ['action_denied', 'tool_returned'] : ['tool_returned'];
  }
  return [`codex_item_${kindPart(type ?? 'unnamed', 53)}`];
}

function mapItem(line: Obj, item: Obj, time: string): MappedEvent[] {
  const id = ids(line, item);
  const out: MappedEvent[] = itemKinds(item).map((kind) => ({
    kind,
    at: time,
    payload: line,
    source: { ids: id },
  }));
  const patch = patchOf(item);
  if (patch !== null) {
    const files = patchFiles(patch);
    for (let part = 0; part < files.length; part++)
      out.push({ kind: 'file_changed', at: time, payload: line, source: { part, ids: id } });
  }
  return out;
}

function mapLine(r: Obj): MappedEvent[] {
  const time = str(r.timestamp) ?? '';
  const type = str(r.type);
  const p = isObj(r.payload) ? r.payload : null;
  const whole = (kind: string): MappedEvent[] => [{ kind, at: time, payload: r, source: { ids: ids(r, p) } }];
  switch (type) {
    case 'session_meta':
      return whole('run_started');
    case 'turn_context':
      return whole('codex_turn_context');
    case 'compacted':
      return whole('context_updated');
    case 'response_item':
      return p === null ? whole('codex_item_unnamed') : mapItem(r, p, time);
    case 'event_msg': {
      const t = p === null ? null : str(p.type);
      return whole(
        t === 'context_compacted' ? 'context_updated' : `codex_event_${kindPart(t ?? 'unnamed', 52)}`,
      );
    }
    default:
      break;
  }
  // The older layout: the header, `{record_type}` lines and bare response items.
  if (type === null) {
    if (isLegacyHeader(r))
      return [{ kind: 'run_started', at: time, payload: r, source: { ids: legacyIds(r) } }];
    const rt = str(r.record_type);
    return [
      { kind: rt === null ? 'codex_record' : `codex_${kindPart(rt, 58)}`, at: time, payload: r, source: {} },
    ];
  }
  if (!LINE_TYPES.has(type) && ('call_id' in r || 'role' in r || 'summary' in r || 'output' in r))
    return mapItem(r, r, time);
  return [{ kind: `codex_${kindPart(type, 58)}`, at: time, payload: r, source: { ids: ids(r, r) } }];
}

function isLegacyHeader(r: Obj): boolean {
  return str(r.id) !== null && str(r.timestamp) !== null && ('instructions' in r || 'cli_version' in r);
}

function legacyIds(r: Obj): Record<string, string> {
  const id = str(r.id);
  return id === null ? {} : { session_id: id };
}

export const codex: FormatAdapter = {
  name: 'codex',
  label: 'Codex rollout',
  detect(first: Json): boolean {
    if ('seq' in first || 'event_type' in first || 'kind' in first) return false;
    const type = str(first.type);
    if (type !== null) return LINE_TYPES.has(type) && isObj(first.payload) && 'timestamp' in first;
    return isLegacyHeader(first) && !('sessionId' in first);
  },
  map(record: Json): MappedEvent[] {
    return mapLine(record);
  },
  runId(first: Json): string | null {
    if (first.type === 'session_meta' && isObj(first.payload))
      return str(first.payload.session_id) ?? str(first.payload.id);
    return isLegacyHeader(first) ? str(first.id) : null;
  },
};
