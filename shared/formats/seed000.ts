import type { FormatView, Interpreted } from './types';
import { isObj, type Obj } from '../json-read.js';

/**
 * Seed article 000's lines `{seq, run_id, kind, at, payload}` predate protocol v1's required fields:
 * its run_started has only a goal, its model_proposed `{tool, path}` names no call. Read as v1:
 *   run_started      task_id ← run id, goal ← '', agent ← {name: 'unknown'}
 *   model_proposed,  call_id ← 'seq-<n>', tool ← 'unknown',
 *   tool_invoked     args ← the payload's other fields (seed 000 writes {tool, path}: args = {path})
 */
export const seed000View: FormatView = {
  name: 'seed000',
  interpret(kind, p, ctx): Interpreted | null {
    const inferred: string[] = [];
    const out: Obj = { ...p };
    const fill = (key: string, value: unknown): void => {
      if (out[key] === undefined) {
        out[key] = value;
        inferred.push(key);
      }
    };
    switch (kind) {
      case 'run_started':
        fill('task_id', ctx.run_id);
        fill('goal', '');
        if (!isObj(out.agent)) {
          out.agent = { name: 'unknown' };
          inferred.push('agent');
        }
        break;
      case 'model_proposed':
      case 'tool_invoked': {
        const { call_id: _c, tool: _t, tokens: _k, ...rest } = p;
        fill('call_id', `seq-${ctx.seq}`);
        fill('tool', 'unknown');
        fill('args', rest);
        break;
      }
      default:
        return null;
    }
    return inferred.length > 0 ? { payload: out, inferred } : null;
  },
};
