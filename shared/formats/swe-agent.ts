/**
 * How a stored part of a SWE-agent trajectory reads as protocol v1, on read (see
 * electron/ingest/formats/swe-agent.ts for how parts are named). A step is stored once per event
 * it makes (its proposal and its result); the call id of both is the step's JSON pointer
 * (`source.ids.pointer`, `/trajectory/<i>`), so they pair as any call and result do.
 *
 * SWE-agent's tools are commands the agent writes in its action (`edit 4:4`, `python x.py`,
 * `submit`), so the tool is the action's first word and args the whole action text.
 */
import type { FormatView, Interpreted } from './types';
import type { SourceRef } from './source-ref';
import { isObj, str, num, type Obj } from '../json-read.js';

export const EXCERPT_CHARS = 4000;
const clip = (s: string): string => (s.length <= EXCERPT_CHARS ? s : `${s.slice(0, EXCERPT_CHARS)}…`);

/** Which budget a limit exit names (ProofLoop's v1 knows steps, tokens and wall time). */
const LIMITS: Record<string, string> = {
  exit_cost: 'cost_usd',
  exit_context: 'tokens',
  exit_total_execution_time: 'wall_ms',
  exit_command_timeout: 'wall_ms',
};

/**
 * How a run ended, from info.exit_status: `submitted` → run_completed; a limit (also when the
 * agent was autosubmitted after it: `submitted (exit_cost)`) → budget_exhausted; any other exit_*
 * → run_failed; none → swe_info (the run was still going when the file was written, or an old
 * file without one).
 */
export function endingOf(status: unknown): { kind: string; limit: string | null; reason: string } {
  if (typeof status !== 'string' || status === '') return { kind: 'swe_info', limit: null, reason: '' };
  const inner = /\((exit_[a-z_]+)\)/.exec(status)?.[1] ?? status;
  if (Object.prototype.hasOwnProperty.call(LIMITS, inner))
    return { kind: 'budget_exhausted', limit: inner, reason: status };
  if (status === 'submitted') return { kind: 'run_completed', limit: null, reason: status };
  return { kind: 'run_failed', limit: null, reason: status };
}

/** info.model_stats as SWE-agent writes it (0.x: tokens_sent/received; 1.x adds api_calls). */
function stats(p: Obj): { sent: number; received: number; cost: number | null; calls: number | null } {
  const s = isObj(p.model_stats) ? p.model_stats : {};
  return {
    sent: num(s.tokens_sent) ?? 0,
    received: num(s.tokens_received) ?? 0,
    cost: num(s.instance_cost),
    calls: num(s.api_calls),
  };
}

/** The paths a unified diff touches (`diff --git a/x b/x`, else `+++ b/x`). */
export function patchPaths(patch: string): string[] {
  const out: string[] = [];
  for (const m of patch.matchAll(/^diff --git a\/(\S+) b\/(\S+)/gm)) out.push(m[2]!);
  if (out.length === 0) for (const m of patch.matchAll(/^\+\+\+ b\/(\S+)/gm)) out.push(m[1]!);
  return out;
}

function interpret(kind: string, p: Obj, source: SourceRef | null | undefined): Interpreted {
  const callId = source?.ids?.pointer ?? '';
  switch (kind) {
    case 'run_started': {
      const env = str(p.environment) ?? '';
      return {
        payload: { task_id: env, goal: '', agent: { name: 'swe-agent' }, environment: env },
        inferred: ['task_id', 'goal', 'agent'],
      };
    }
    case 'model_proposed': {
      const action = str(p.action) ?? '';
      return {
        payload: {
          call_id: callId,
          tool: action.trim().split(/\s+/)[0] ?? '',
          args: action,
          thought: clip(str(p.thought) ?? ''),
        },
        inferred: ['call_id', 'tool'],
      };
    }
    case 'tool_returned': {
      const secs = num(p.execution_time);
      const text = str(p.observation) ?? '';
      return {
        payload: {
          call_id: callId,
          status: 'ok',
          duration_ms: secs === null ? 0 : Math.round(secs * 1000),
          excerpt: clip(text),
        },
        inferred: secs === null ? ['call_id', 'status', 'duration_ms'] : ['call_id', 'status'],
      };
    }
    case 'file_changed': {
      const patch = str(p.submission) ?? '';
      return {
        payload: { path: patchPaths(patch).join(', '), patch: clip(patch) },
        inferred: ['path'],
      };
    }
    case 'run_completed':
      return { payload: { outcome: str(p.exit_status) ?? '' }, inferred: [] };
    case 'run_failed':
      return { payload: { reason: str(p.exit_status) ?? '' }, inferred: [] };
    case 'budget_exhausted': {
      const e = endingOf(p.exit_status);
      const s = stats(p);
      const used = e.limit === 'exit_cost' ? (s.cost ?? 0) : e.limit === 'exit_context' ? s.sent : 0;
      return {
        // The limit itself is in the run's configuration, not in the trajectory.
        payload: { budget: LIMITS[e.limit ?? ''] ?? 'unknown', limit: 0, used, exit_status: e.reason },
        inferred: ['budget', 'limit', 'used'],
      };
    }
    default:
      return { payload: p, inferred: [] };
  }
}

export const sweAgentView: FormatView = {
  name: 'swe_agent',
  // A trajectory records each call and its result, not a host's invocation of it (as a session does).
  session: true,
  interpret(kind, payload, ctx) {
    return interpret(kind, payload, ctx.source);
  },
  usage(kind, payload) {
    if (
      kind === 'swe_info' ||
      kind === 'run_completed' ||
      kind === 'run_failed' ||
      kind === 'budget_exhausted'
    ) {
      if (!isObj(payload.model_stats)) return null;
      const s = stats(payload);
      return { total: s.sent + s.received };
    }
    return null;
  },
};
