import type { FormatView, Interpreted } from './types';

type Obj = Record<string, unknown>;

/**
 * Seed article 004's events `{event_id, event_type, aggregate_id, payload, timestamp, version}`
 * are named by the adapter (agent_started → run_started, tool_result → tool_returned, …); their
 * payloads lack protocol v1's required fields, which read as:
 *   run_started      task_id ← run id, goal ← payload.task ?? '', agent ← {name: payload.model ?? 'unknown'}
 *   tool_invoked     call_id ← event_id, tool ← 'unknown', args ← {}
 *   tool_returned    call_id ← event_id, status ← 'ok', duration_ms ← 0
 *   model_responded  content ← ''
 *   context_updated  op ← 'updated'
 *   run_completed    outcome ← 'completed'
 *   run_failed       reason ← payload.error ?? 'unknown'
 * event_id comes from the event's source ids (the adapter keeps it there, not in the payload).
 */
export const seed004View: FormatView = {
  name: 'seed004',
  interpret(kind, p, ctx): Interpreted | null {
    const inferred: string[] = [];
    const out: Obj = { ...p };
    const fill = (key: string, value: unknown): void => {
      if (out[key] === undefined || out[key] === null) {
        out[key] = value;
        inferred.push(key);
      }
    };
    const callId = ctx.source?.ids?.event_id || 'unknown';
    switch (kind) {
      case 'run_started':
        fill('task_id', ctx.run_id);
        fill('goal', typeof p.task === 'string' ? p.task : '');
        fill('agent', { name: typeof p.model === 'string' ? p.model : 'unknown' });
        break;
      case 'tool_invoked':
        fill('call_id', callId);
        fill('tool', 'unknown');
        fill('args', {});
        break;
      case 'tool_returned':
        fill('call_id', callId);
        fill('status', 'ok');
        fill('duration_ms', 0);
        break;
      case 'model_responded':
        fill('content', '');
        break;
      case 'context_updated':
        fill('op', 'updated');
        break;
      case 'run_completed':
        fill('outcome', 'completed');
        break;
      case 'run_failed':
        fill('reason', typeof p.error === 'string' ? p.error : 'unknown');
        break;
      default:
        return null;
    }
    return inferred.length > 0 ? { payload: out, inferred } : null;
  },
};
