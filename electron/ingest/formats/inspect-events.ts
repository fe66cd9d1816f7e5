/**
 * One Inspect AI event record to ProofLoop events (the naming table is in inspect.ts): the
 * payload of each is the record as written; a model event's tool calls and a tool event's nested
 * events (older logs) become events of their own, each pointing back by `source.part` and ids.
 */
import { kindPart } from './names';
import type { MappedEvent } from './types';
import { dict } from '../../../shared/dict.js';
import { isObj, nonEmpty as str, type Obj } from '../../../shared/json-read.js';

/** An id as Inspect writes them: a string, or a number (sample ids, epochs). */
export const idStr = (x: unknown): string | null =>
  typeof x === 'string' ? x : typeof x === 'number' && Number.isFinite(x) ? String(x) : null;

/** sample_limit types that are a budget of the run (others stay inspect_sample_limit). */
const BUDGET_TYPES = new Set(['message', 'token', 'turn', 'time', 'working']);

/** The kinds an Inspect event record is named by (see the table above), one per part. */
function eventKind(ev: Obj): string {
  const type = str(ev.event) ?? 'unnamed';
  switch (type) {
    case 'model':
      return 'model_responded';
    case 'approval': {
      const d = str(ev.decision);
      if (d === 'approve' || d === 'modify') return 'action_allowed';
      if (d === 'escalate') return 'action_escalated';
      return 'action_denied';
    }
    case 'sample_limit':
      return BUDGET_TYPES.has(str(ev.type) ?? '') ? 'budget_exhausted' : 'inspect_sample_limit';
    case 'score':
      return 'judge_verdict';
    case 'state':
      return 'state_changed';
    case 'store':
      return 'store_changed';
    case 'error':
      return 'run_failed';
    case 'compaction':
      return 'context_updated';
    default:
      return `inspect_${kindPart(type, 56)}`;
  }
}

function eventIds(ev: Obj): Record<string, string> {
  const ids: Record<string, string> = dict();
  const put = (k: string, v: unknown): void => {
    const s = idStr(v);
    if (s !== null && s !== '') ids[k] = s;
  };
  put('uuid', ev.uuid);
  put('span_id', ev.span_id);
  put('event', ev.event);
  if (ev.event === 'span_begin' || ev.event === 'span_end') {
    put('id', ev.id);
    put('parent_id', ev.parent_id);
  }
  if (ev.event === 'tool') put('call_id', ev.id);
  if (ev.event === 'approval' && isObj(ev.call)) put('call_id', ev.call.id);
  return ids;
}

function toolCalls(ev: Obj): Obj[] {
  const out = isObj(ev.output) ? ev.output : null;
  const choice = out && Array.isArray(out.choices) && isObj(out.choices[0]) ? out.choices[0] : null;
  const msg = choice && isObj(choice.message) ? choice.message : null;
  return msg && Array.isArray(msg.tool_calls) ? msg.tool_calls.filter(isObj) : [];
}

/**
 * One event record to its events: the payload of each is the record as written. A tool event's
 * nested events (older logs) follow its tool_invoked, each as written, walked with a stack (the
 * record's depth is bounded by the caller's check, the walk never recurses).
 */
export function mapEvent(ev: Obj, run: string, where: string): MappedEvent[] {
  const at = str(ev.timestamp) ?? '';
  const ids = eventIds(ev);
  if (ev.event === 'model') {
    const out: MappedEvent[] = [{ kind: 'model_responded', at, payload: ev, run, source: { part: 0, ids } }];
    toolCalls(ev).forEach((tc, i) => {
      const cid = idStr(tc.id);
      out.push({
        kind: 'model_proposed',
        at,
        payload: ev,
        run,
        source: { part: i + 1, ids: cid === null ? ids : { ...ids, call_id: cid } },
      });
    });
    return out;
  }
  if (ev.event === 'tool') {
    const out: MappedEvent[] = [{ kind: 'tool_invoked', at, payload: ev, run, source: { part: 0, ids } }];
    const stack: { list: unknown[]; i: number; path: string }[] = [];
    if (Array.isArray(ev.events)) stack.push({ list: ev.events, i: 0, path: `${where}.events` });
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      if (top.i >= top.list.length) {
        stack.pop();
        continue;
      }
      const i = top.i++;
      const child = top.list[i];
      if (!isObj(child)) continue;
      const cids = { ...eventIds(child), parent: ids.call_id ?? '', path: `${top.path}[${i}]` };
      const kinds = child.event === 'tool' ? ['tool_invoked', 'tool_returned'] : [eventKind(child)];
      for (const kind of kinds)
        out.push({ kind, at: str(child.timestamp) ?? at, payload: child, run, source: { ids: cids } });
      if (child.event === 'tool' && Array.isArray(child.events))
        stack.push({ list: child.events, i: 0, path: `${top.path}[${i}].events` });
    }
    out.push({
      kind: 'tool_returned',
      at: str(ev.completed) ?? at,
      payload: ev,
      run,
      source: { part: 1, ids },
    });
    return out;
  }
  return [{ kind: eventKind(ev), at, payload: ev, run, source: { ids } }];
}
