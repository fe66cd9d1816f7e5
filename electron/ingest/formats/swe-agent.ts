/**
 * SWE-agent trajectories (`<instance>.traj`): one JSON document `{environment, trajectory[],
 * history[], info, replay_config?}`, rewritten whole by SWE-agent after each step. Both layouts:
 * 0.x (steps `{action, observation, response, state, thought}`, history messages with `agent`
 * "primary") and 1.x (steps add `execution_time`, `query`, `messages`; history messages carry
 * `message_type` and `tool_calls`; info adds `edited_files30/50/70`).
 *
 * Naming (each event's payload is its part of the document as written):
 *   the document less trajectory, history and info → run_started
 *   trajectory[i]      → model_proposed (part 0: thought and action) and tool_returned (part 1:
 *                        observation, execution_time where the step has it: none is invented);
 *                        paired by the step's pointer, `/trajectory/<i>`
 *   history[i]         → swe_history_message (what the model was sent and answered, as written)
 *   info               → file_changed (part 0) when it holds a submission (the patch), then how the
 *                        run ended (part 1): exit_status "submitted" → run_completed; a cost,
 *                        context or time limit (exit_cost, exit_context, exit_total_execution_time,
 *                        also when autosubmitted: "submitted (exit_cost)") → budget_exhausted;
 *                        exit_error, exit_format, exit_api, exit_environment_error and other
 *                        exit_* → run_failed; no exit_status → swe_info
 * How the parts read as v1 is shared/formats/swe-agent.ts.
 */
import { endingOf } from '../../../shared/formats/swe-agent';
import type { DocPart, DocumentAdapter, Json, MappedEvent } from './types';
import { isObj, type Obj } from '../../../shared/json-read.js';
import { dict } from '../../../shared/dict.js';

const wrap = (x: unknown): Json => (isObj(x) ? x : { value: x ?? null });

export const sweAgent: DocumentAdapter = {
  name: 'swe_agent',
  label: 'SWE-agent trajectory',
  sniff: (head) => /^\s*\{/.test(head) && /"(trajectory|history|environment|info)"\s*:/.test(head),
  claims: (doc) =>
    isObj(doc) &&
    Array.isArray(doc.trajectory) &&
    (isObj(doc.info) || Array.isArray(doc.history)) &&
    !('schema_version' in doc),
  parts(doc) {
    const d = doc as Obj;
    const out: DocPart[] = [];
    const head: Obj = dict();
    for (const [k, v] of Object.entries(d))
      if (k !== 'trajectory' && k !== 'history' && k !== 'info') head[k] = v;
    out.push({ record: head, type: 'head', pointer: '' });
    const steps = d.trajectory as unknown[];
    steps.forEach((s, i) => out.push({ record: wrap(s), type: 'step', pointer: `/trajectory/${i}` }));
    if (Array.isArray(d.history))
      d.history.forEach((m, i) => out.push({ record: wrap(m), type: 'history', pointer: `/history/${i}` }));
    else if (d.history !== undefined)
      out.push({ record: wrap(d.history), type: 'history', pointer: '/history' });
    if (d.info !== undefined) out.push({ record: wrap(d.info), type: 'info', pointer: '/info' });
    return out;
  },
  mapPart(part) {
    const at = '';
    const r = part.record;
    switch (part.type) {
      case 'head':
        return [{ kind: 'run_started', at, payload: r }];
      case 'step':
        return [
          { kind: 'model_proposed', at, payload: r, source: { part: 0 } },
          { kind: 'tool_returned', at, payload: r, source: { part: 1 } },
        ];
      case 'history':
        return [{ kind: 'swe_history_message', at, payload: r }];
      case 'info': {
        const out: MappedEvent[] = [];
        if (typeof r.submission === 'string' && r.submission.trim() !== '')
          out.push({ kind: 'file_changed', at, payload: r, source: { part: 0 } });
        out.push({ kind: endingOf(r.exit_status).kind, at, payload: r, source: { part: 1 } });
        return out;
      }
      default:
        return { error: `a SWE-agent trajectory has no part "${part.type}"` };
    }
  },
};
