/**
 * A run of any format as an ATIF trajectory (Harbor's Agent Trajectory Interchange Format,
 * ATIF-v1.6, the newest version Harbor's published models validate; see
 * test/fixtures/atif-schema/). Pure: the caller reads the events and redacts the result.
 *
 * Each event is read as protocol v1 through its format's view (interpret), so a Claude Code
 * session, a SWE-agent trajectory and a ProofLoop run map the same way:
 *   user_prompted                   → a user step
 *   model_responded, model_reasoned → an agent step (message, reasoning_content)
 *   model_proposed                  → a tool call of the current agent step (a new one when the
 *                                     current step already has results): ATIF's arguments are an
 *                                     object, so other args are written as `{input: args}` and the
 *                                     step's extra says so (`proofloop.calls[id].args: "wrapped"`)
 *   tool_returned, tool_timed_out   → an observation result of the step holding the call
 *   tool_invoked                    → the seqs of the step holding the call
 *   action_allowed / action_denied  → the step's extra (`proofloop.calls[id].decision`); a denial
 *                                     is also a result of the call, since no tool ran
 *   any other event (run_completed, judge_verdict, file_changed, a kind of the source's own)
 *                                   → a system step naming its kind, the v1 payload in extra
 * Every step's extra names the seqs it came from (`proofloop.seqs`), so nothing is dropped.
 */
import { interpret } from './index';
import type { SourceRef } from './source-ref';
import { dict } from '../dict.js';
import { isObj, str, num, type Obj } from '../json-read.js';

export const ATIF_VERSION = 'ATIF-v1.6';

export interface AtifInputEvent {
  seq: number;
  kind: string;
  at: string;
  payload: Obj;
  source?: SourceRef | null;
}

export interface AtifRunInfo {
  run_id: string;
  format: string;
}

interface Step {
  step_id: number;
  timestamp?: string;
  source: 'user' | 'agent' | 'system';
  message: string;
  reasoning_content?: string;
  tool_calls?: Obj[];
  observation?: { results: Obj[] };
  metrics?: Obj;
  extra: { proofloop: StepExtra };
}

/** What ATIF has no field for, kept in the step's extra (v1.6 tool calls and results have none). */
interface StepExtra {
  seqs: number[];
  kind?: string;
  payload?: Obj;
  /** Per tool call id: the seq, whether its args were wrapped, the host's decision. */
  calls?: Record<string, Obj>;
  /** Per observation result, in order: its seq, status, duration, and the call id when unknown. */
  results?: Obj[];
}

/** Harbor checks timestamps with datetime.fromisoformat: an `at` that is not ISO 8601 is left out. */
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;

function text(x: unknown): string {
  if (typeof x === 'string') return x;
  if (x === null || x === undefined) return '';
  return JSON.stringify(x);
}

/** One event's summary line for a system step. */
function summary(kind: string, p: Obj): string {
  const parts: string[] = [];
  for (const k of ['outcome', 'reason', 'passed', 'path', 'budget', 'limit', 'used', 'op', 'note']) {
    const v = p[k];
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')
      parts.push(`${k}=${String(v)}`);
  }
  return parts.length > 0 ? `${kind}: ${parts.join(' ')}` : kind;
}

export function toAtif(run: AtifRunInfo, events: Iterable<AtifInputEvent>): Obj {
  const steps: Step[] = [];
  const agent: Obj = { name: run.format, version: 'unknown' };
  let agentStep: Step | null = null;
  const stepOfCall = new Map<string, { step: Step; call: Obj }>();
  let completionTokens = 0;
  let counted = false;

  const newStep = (source: Step['source'], e: AtifInputEvent, message = ''): Step => {
    const s: Step = { step_id: steps.length + 1, source, message, extra: { proofloop: { seqs: [e.seq] } } };
    if (ISO.test(e.at)) s.timestamp = e.at;
    steps.push(s);
    return s;
  };
  const agentFor = (e: AtifInputEvent, fresh: boolean): Step => {
    if (agentStep && !fresh && agentStep.observation === undefined) {
      agentStep.extra.proofloop.seqs.push(e.seq);
      return agentStep;
    }
    agentStep = newStep('agent', e);
    return agentStep;
  };
  const result = (callId: string, content: string, extra: Obj, e: AtifInputEvent): void => {
    const owner = stepOfCall.get(callId);
    const step = owner?.step ?? agentFor(e, true);
    if (owner) step.extra.proofloop.seqs.push(e.seq);
    const r: Obj = { content };
    if (owner) r.source_call_id = callId;
    (step.observation ??= { results: [] }).results.push(r);
    (step.extra.proofloop.results ??= []).push({
      seq: e.seq,
      ...(owner ? {} : { call_id: callId }),
      ...extra,
    });
  };

  for (const e of events) {
    const view = interpret(run.format, e.kind, e.payload, {
      seq: e.seq,
      run_id: run.run_id,
      source: e.source ?? null,
    });
    const p = view ? view.payload : e.payload;
    const tokens = num(p.tokens);
    switch (e.kind) {
      case 'run_started': {
        const a = isObj(p.agent) ? p.agent : {};
        agent.name = str(a.name) || run.format;
        agent.version = str(a.version) ?? str(a.variant) ?? 'unknown';
        const model = str(a.model) ?? str(p.model);
        if (model) agent.model_name = model;
        const s = newStep('system', e, summary('run_started', p));
        s.extra.proofloop.kind = e.kind;
        s.extra.proofloop.payload = p;
        agentStep = null;
        break;
      }
      case 'user_prompted':
        newStep('user', e, text(p.content));
        agentStep = null;
        break;
      case 'model_responded': {
        const s = agentFor(e, true);
        s.message = text(p.content);
        if (tokens !== null) {
          s.metrics = { completion_tokens: tokens };
          completionTokens += tokens;
          counted = true;
        }
        break;
      }
      case 'model_reasoned': {
        // Reasoning comes before the message and calls it leads to: a step that has them is done.
        const cur = agentStep as Step | null;
        const s = agentFor(e, cur === null || cur.message !== '' || (cur.tool_calls?.length ?? 0) > 0);
        s.reasoning_content = [s.reasoning_content, text(p.content)].filter(Boolean).join('\n');
        break;
      }
      case 'model_proposed': {
        const s = agentFor(e, false);
        // A proposal's own thought (SWE-agent, OpenHands) is the step's message when it has none.
        const thought = str(p.thought);
        if (s.message === '' && thought) s.message = thought;
        const callId = str(p.call_id) || `seq-${e.seq}`;
        const wrapped = !isObj(p.args);
        const call: Obj = {
          tool_call_id: callId,
          function_name: str(p.tool) ?? '',
          arguments: wrapped ? { input: p.args ?? null } : p.args,
        };
        (s.tool_calls ??= []).push(call);
        (s.extra.proofloop.calls ??= dict())[callId] = {
          seq: e.seq,
          ...(wrapped ? { args: 'wrapped' } : {}),
        };
        stepOfCall.set(callId, { step: s, call });
        if (tokens !== null) {
          completionTokens += tokens;
          counted = true;
        }
        break;
      }
      case 'tool_invoked': {
        // The host ran the call: ATIF has no field for it; the step that holds the call names its seq.
        const owner = stepOfCall.get(str(p.call_id) ?? '');
        if (owner) {
          owner.step.extra.proofloop.seqs.push(e.seq);
          break;
        }
        const s = newStep('system', e, summary(e.kind, p));
        s.extra.proofloop.kind = e.kind;
        s.extra.proofloop.payload = p;
        break;
      }
      case 'tool_returned':
        result(
          str(p.call_id) ?? '',
          text(p.excerpt ?? p.content ?? ''),
          { status: p.status ?? null, duration_ms: p.duration_ms ?? null },
          e,
        );
        break;
      case 'tool_timed_out':
        result(str(p.call_id) ?? '', `timed out after ${String(p.timeout_ms)} ms`, { timed_out: true }, e);
        break;
      case 'action_allowed':
      case 'action_denied': {
        const callId = str(p.call_id) ?? '';
        const owner = stepOfCall.get(callId);
        const decision = {
          decision: e.kind === 'action_allowed' ? 'allowed' : 'denied',
          rule: p.rule ?? null,
          reason: p.reason ?? null,
          seq: e.seq,
        };
        if (owner) {
          const calls = (owner.step.extra.proofloop.calls ??= dict());
          calls[callId] = { ...calls[callId], decision };
        }
        if (e.kind === 'action_denied')
          result(callId, `denied by ${text(p.rule)}: ${text(p.reason)}`, { decision: 'denied' }, e);
        else if (owner) owner.step.extra.proofloop.seqs.push(e.seq);
        else {
          const s = newStep('system', e, summary(e.kind, p));
          s.extra.proofloop.kind = e.kind;
          s.extra.proofloop.payload = p;
        }
        break;
      }
      default: {
        const s = newStep('system', e, summary(e.kind, p));
        s.extra.proofloop.kind = e.kind;
        s.extra.proofloop.payload = p;
        agentStep = null;
      }
    }
  }
  if (steps.length === 0) {
    // ATIF needs at least one step.
    steps.push({
      step_id: 1,
      source: 'system',
      message: 'the run has no events',
      extra: { proofloop: { seqs: [] } },
    });
  }
  const out: Obj = {
    schema_version: ATIF_VERSION,
    session_id: run.run_id,
    agent,
    steps,
    final_metrics: {
      total_steps: steps.length,
      ...(counted ? { total_completion_tokens: completionTokens } : {}),
    },
    extra: { proofloop: { run_id: run.run_id, format: run.format } },
  };
  return out;
}
