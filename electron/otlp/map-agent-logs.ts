import { rejectionOf } from '../../shared/formats/codex';
import { harnessDecision } from '../../shared/formats/decision';
import type { OtlpLog } from './types';
import {
  first,
  isoOf,
  kindName,
  parsed,
  resultFields,
  str,
  type LogMapper,
  type MappedItem,
  type RunMapState,
} from './map-util';

/**
 * The log events Claude Code (`claude_code.*`) and Codex (`codex.*`) export: the only place the
 * harness says what it allowed or refused. `tool_decision` becomes action_allowed / action_denied
 * naming who decided (config, user, hook), read by the same function as a transcript's decision
 * (shared/formats/decision.ts), `tool_result` becomes tool_returned; the others
 * (user_prompt, api_request, api_error, sse_event, conversation_starts, …) are events of their own
 * kind, `claude_code_api_request` and so on, with their attributes.
 *
 * Codex sends no tool_decision for a call its exec policy refuses (`prefix_rule(…, forbidden)`) nor,
 * in every version, for one the user refused: its tool_result's output is the refusal, worded as
 * in the rollout. That result is read by the rollout's own rule (shared/formats/codex.ts,
 * rejectionOf) as an action_denied (source Config, or User for "rejected by user") before its
 * tool_returned, unless a tool_decision already named the call: so the transcript and the
 * telemetry of one session name the refusal alike.
 *
 * Neither harness puts a call id on every version's events: when one is missing, a decision gets
 * `<tool>#<n>` and the next tool_result of that tool takes the oldest such id, so the decision and
 * its result still link.
 */

const FAMILY = /^(claude_code|codex)\.([a-z0-9_.]+)$/;

/**
 * The event a record is. Its own name first; then its `event.name` attribute, which is where
 * Codex 0.169 says it (the record's name is its call site, `event otel/src/events/
 * session_telemetry.rs:1225`) and where Claude Code puts the bare name (`tool_decision`, its
 * scope saying whose it is); then its body.
 */
function eventOf(l: OtlpLog): { family: string; op: string } | null {
  const attr = l.attributes['event.name'];
  const named = typeof attr === 'string' ? attr : '';
  const names = [l.eventName, named, typeof l.body === 'string' ? l.body : ''];
  for (const n of names) {
    const m = FAMILY.exec(n);
    if (m) return { family: m[1]!, op: m[2]! };
  }
  const bare = FAMILY.test(l.eventName) || /\s|\//.test(l.eventName) || !l.eventName ? named : l.eventName;
  if (/claude_code/.test(l.scope.name) && bare) return { family: 'claude_code', op: bare };
  return null;
}

/** The record's time; Codex writes timeUnixNano 0 and only the observed time. */
const timeOf = (l: OtlpLog): string | undefined => isoOf(l.timeNs) ?? isoOf(l.observedNs);

function callIdOf(l: OtlpLog): string | undefined {
  return first(l.attributes, ['tool_use_id', 'call_id', 'tool_call_id', 'gen_ai.tool.call.id']);
}

function decision(l: OtlpLog, family: string, st: RunMapState): MappedItem {
  const a = l.attributes;
  const tool = str(a, 'tool_name') ?? str(a, 'tool') ?? 'tool';
  let callId = callIdOf(l);
  if (!callId) {
    callId = `${tool}#${++st.decisions}`;
    const q = st.pending.get(tool) ?? [];
    q.push(callId);
    st.pending.set(tool, q.slice(-1000));
  }
  const d = harnessDecision({
    harness: family,
    call_id: callId,
    decision: str(a, 'decision')?.toLowerCase() ?? null,
    source: str(a, 'source') ?? str(a, 'decision_source') ?? null,
    tool,
  });
  st.decided.set(callId, true);
  return { kind: d.kind, at: timeOf(l), payload: d.payload };
}

/** A Codex result whose output is its exec policy's (or its user's) refusal: that decision. */
function refusal(l: OtlpLog, family: string, callId: string, tool: string, st: RunMapState): MappedItem[] {
  if (family !== 'codex' || st.decided.has(callId)) return [];
  const why = rejectionOf(l.attributes.output);
  if (why === null) return [];
  st.decided.set(callId, true);
  const d = harnessDecision({
    harness: family,
    call_id: callId,
    decision: 'denied',
    source: /by user/i.test(why) ? 'User' : 'Config',
    reason: why,
    tool,
  });
  return [{ kind: d.kind, at: timeOf(l), payload: d.payload }];
}

function result(l: OtlpLog, family: string, st: RunMapState): MappedItem[] {
  const a = l.attributes;
  const tool = str(a, 'tool_name') ?? str(a, 'tool') ?? 'tool';
  const callId = callIdOf(l) ?? st.pending.get(tool)?.shift() ?? `${tool}#result-${++st.decisions}`;
  return [...refusal(l, family, callId, tool, st), returned(l, family, callId, tool)];
}

function returned(l: OtlpLog, family: string, callId: string, tool: string): MappedItem {
  const a = l.attributes;
  const success = a.success;
  const ok = success === true || success === 'true';
  const output = a.output ?? a.tool_output ?? a.error;
  const ms = Number(a.duration_ms);
  return {
    kind: 'tool_returned',
    at: timeOf(l),
    payload: {
      call_id: callId,
      tool,
      status: ok ? 'ok' : 'error',
      duration_ms: Number.isFinite(ms) && ms >= 0 ? ms : 0,
      ...resultFields(output === undefined ? undefined : output),
      ...(a.tool_parameters !== undefined || a.arguments !== undefined
        ? { args: parsed(a.tool_parameters ?? a.arguments) }
        : {}),
      ...(str(a, 'decision') ? { decision: str(a, 'decision') } : {}),
      ...(a.error !== undefined ? { error: a.error } : {}),
      harness: family,
    },
  };
}

export const agentLogs: LogMapper = {
  family: 'claude-code/codex',
  log(l, st) {
    const e = eventOf(l);
    if (!e) return null;
    if (e.op === 'tool_decision') return [decision(l, e.family, st)];
    if (e.op === 'tool_result') return result(l, e.family, st);
    return [
      {
        kind: kindName(`${e.family}_${e.op}`, 'agent_log_event'),
        at: timeOf(l),
        payload: { event: `${e.family}.${e.op}`, ...l.attributes },
      },
    ];
  },
};
