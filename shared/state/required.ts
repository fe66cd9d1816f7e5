import type { KnownKind } from '../protocol';
import { isRecord } from './draft';

type FieldType = 'string' | 'call' | 'number' | 'int' | 'boolean' | 'object';

/**
 * The required fields of each v1 payload (shared/protocol/kinds.ts), checked by hand: the zod
 * schemas say the same, but parsing one per fold costs more than the rest of evolve. Used only to
 * note an invalid event; the fold reads every field defensively either way.
 */
const REQUIRED: { readonly [K in KnownKind]: readonly (readonly [string, FieldType])[] } = {
  run_started: [
    ['task_id', 'string'],
    ['goal', 'string'],
    ['agent', 'object'],
  ],
  model_proposed: [
    ['call_id', 'call'],
    ['tool', 'string'],
  ],
  action_allowed: [
    ['call_id', 'call'],
    ['rule', 'string'],
  ],
  action_denied: [
    ['call_id', 'call'],
    ['rule', 'string'],
    ['reason', 'string'],
  ],
  tool_invoked: [
    ['call_id', 'call'],
    ['tool', 'string'],
  ],
  tool_returned: [
    ['call_id', 'call'],
    ['status', 'string'],
    ['duration_ms', 'number'],
  ],
  tool_timed_out: [
    ['call_id', 'call'],
    ['timeout_ms', 'number'],
  ],
  model_responded: [['content', 'string']],
  context_updated: [['op', 'string']],
  file_changed: [['path', 'string']],
  budget_exhausted: [
    ['budget', 'string'],
    ['limit', 'number'],
    ['used', 'number'],
  ],
  judge_verdict: [['passed', 'boolean']],
  run_completed: [['outcome', 'string']],
  run_failed: [['reason', 'string']],
  run_resumed: [['from_seq', 'int']],
  event_annotated: [
    ['target_seq', 'int'],
    ['note', 'string'],
  ],
};

export function invalidField(kind: KnownKind, p: Record<string, unknown>): string | null {
  for (const [name, type] of REQUIRED[kind]) {
    const v = p[name];
    let ok: boolean;
    switch (type) {
      case 'string':
        ok = typeof v === 'string';
        break;
      case 'call':
        ok = typeof v === 'string' && v.length > 0;
        break;
      case 'number':
        ok = typeof v === 'number' && Number.isFinite(v);
        break;
      case 'int':
        ok = typeof v === 'number' && Number.isInteger(v) && v >= 0;
        break;
      case 'boolean':
        ok = typeof v === 'boolean';
        break;
      case 'object':
        ok = isRecord(v);
        break;
    }
    if (!ok)
      return `${name}: ${v === undefined ? 'missing' : `not a valid ${type === 'call' ? 'call id' : type}`}`;
  }
  if (kind === 'run_started' && typeof (p.agent as Record<string, unknown>).name !== 'string')
    return 'agent.name: missing';
  return null;
}
