/**
 * How a stored Codex rollout line reads as protocol v1, on read (see electron/ingest/formats/codex.ts
 * for how lines are named). The payload is the whole line `{timestamp, type, payload}` (or, in the
 * older layout, the bare item).
 *
 * Tokens as Codex counts them: `event_msg` token_count carries `total_token_usage` (cumulative;
 * its input_tokens include cached_input_tokens) and `last_token_usage` (the last request). Codex
 * repeats a token_count when only rate limits change, so a run's tokens are the last cumulative
 * total (`tokens_total`), never a sum of events.
 */
import { patchOf, patchSections } from './codex-patch';
import { harnessDecision } from './decision';
import type { FormatView, Interpreted } from './types';
import type { SourceRef } from './source-ref';
import { isObj, str, num, type Obj } from '../json-read.js';

export const EXCERPT_CHARS = 4000;
const clip = (s: string): string => (s.length <= EXCERPT_CHARS ? s : `${s.slice(0, EXCERPT_CHARS)}…`);

/** The item a line is about: `payload` of the current layout, the line itself in the older one. */
export function itemOf(line: Obj): Obj {
  return typeof line.type === 'string' && isObj(line.payload) && 'timestamp' in line ? line.payload : line;
}

function texts(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const out: string[] = [];
  for (const c of content) if (isObj(c) && typeof c.text === 'string') out.push(c.text);
  return out.join('\n');
}

function parseArgs(a: unknown): unknown {
  if (typeof a !== 'string') return a ?? null;
  try {
    return JSON.parse(a) as unknown;
  } catch {
    return a;
  }
}

const TOOL_OF_TYPE: Record<string, string> = {
  local_shell_call: 'local_shell',
  tool_search_call: 'tool_search',
};

/**
 * Status and duration of a call's output. Codex writes a function_call_output's `output` as a
 * string that is often JSON `{output, metadata: {exit_code, duration_seconds}}`, or as text with
 * "Process exited with code N" / "Exit code: N" / "Wall time: S seconds" lines.
 */
function outcome(output: unknown): { status: string | null; duration_ms: number | null; text: string } {
  let o: unknown = output;
  if (typeof output === 'string') o = parseArgs(output);
  let text = typeof output === 'string' ? output : texts(isObj(output) ? [output] : output);
  let exit: number | null = null;
  let secs: number | null = null;
  if (isObj(o)) {
    if (typeof o.output === 'string') text = o.output;
    const meta = isObj(o.metadata) ? o.metadata : {};
    exit = num(meta.exit_code);
    secs = num(meta.duration_seconds);
  }
  if (exit === null) {
    const m = /(?:Process exited with code|Exit code:)\s*(-?\d+)/.exec(text);
    if (m) exit = Number(m[1]);
  }
  if (secs === null) {
    const m = /Wall time:\s*([0-9.]+)\s*seconds/.exec(text);
    if (m) secs = Number(m[1]);
  }
  return {
    status: exit === null ? null : exit === 0 ? 'ok' : 'error',
    duration_ms: secs === null ? null : Math.round(secs * 1000),
    text,
  };
}

/**
 * The refusal a call's output is, when Codex refused to run it (0.169: `exec_command failed:
 * CreateProcess { message: "Rejected(\"`…` rejected: policy forbids commands starting with …\")" }`;
 * older versions `exec command rejected by user`). Null: the call ran.
 */
export function rejectionOf(output: unknown): string | null {
  const text =
    typeof output === 'string'
      ? output
      : isObj(output) && typeof output.output === 'string'
        ? output.output
        : '';
  if (text.length > 4096) return null;
  // Only Codex's own wording, at the start of the output: a command's output may say "rejected".
  if (/^exec_command failed: CreateProcess \{ message: "Rejected\(/.test(text)) {
    const m = /rejected: ([^"\\]+)/.exec(text);
    return m ? m[1]!.trim() : 'rejected';
  }
  const old = /^(exec command rejected[^\n]*)/i.exec(text);
  return old ? old[1]!.trim() : null;
}

function interpret(kind: string, line: Obj, source: SourceRef | undefined, runId: string): Interpreted {
  const it = itemOf(line);
  switch (kind) {
    case 'run_started': {
      const cli = str(it.cli_version);
      const agent: Obj = { name: 'codex' };
      if (cli !== null) agent.variant = cli;
      return {
        payload: {
          task_id: str(it.id) ?? runId,
          goal: '',
          agent,
          cwd: str(it.cwd),
          model_provider: str(it.model_provider),
          originator: str(it.originator),
          git: isObj(it.git) ? it.git : null,
        },
        inferred: ['task_id', 'goal', 'agent'],
      };
    }
    case 'model_responded':
    case 'user_prompted':
      return { payload: { content: clip(texts(it.content)), role: str(it.role) }, inferred: [] };
    case 'model_reasoned': {
      const summary = Array.isArray(it.summary) ? texts(it.summary) : '';
      return {
        payload: {
          content: clip(summary || texts(it.content)),
          encrypted: typeof it.encrypted_content === 'string',
        },
        inferred: [],
      };
    }
    case 'model_proposed': {
      const type = str(it.type) ?? '';
      const tool = str(it.name) ?? TOOL_OF_TYPE[type] ?? type;
      const args =
        'arguments' in it ? parseArgs(it.arguments) : 'input' in it ? it.input : (it.action ?? null);
      return { payload: { call_id: str(it.call_id) ?? str(it.id) ?? '', tool, args }, inferred: [] };
    }
    case 'tool_returned': {
      const o = outcome(it.output);
      const inferred: string[] = [];
      if (o.status === null) inferred.push('status');
      if (o.duration_ms === null) inferred.push('duration_ms');
      return {
        payload: {
          call_id: str(it.call_id) ?? '',
          status: o.status ?? 'ok',
          duration_ms: o.duration_ms ?? 0,
          excerpt: clip(o.text),
        },
        inferred,
      };
    }
    case 'action_denied': {
      const why = rejectionOf(it.output) ?? '';
      const user = /by user/i.test(why);
      return {
        payload: harnessDecision({
          harness: 'codex',
          call_id: str(it.call_id) ?? '',
          decision: 'denied',
          // Codex's telemetry names an exec policy's refusal `Config`, the user's `User`.
          source: user ? 'User' : 'Config',
          reason: why,
        }).payload,
        inferred: ['decided_by'],
      };
    }
    case 'file_changed': {
      const patch = patchOf(it);
      const f = patch === null ? undefined : patchSections(patch)[source?.part ?? 0];
      return {
        payload: {
          path: f?.path ?? '',
          op: f?.op ?? null,
          patch: f ? clip(f.patch) : '',
          call_id: str(it.call_id) ?? '',
        },
        inferred: [],
      };
    }
    case 'context_updated':
      return {
        payload: { op: line.type === 'compacted' ? 'compacted' : 'context_compacted' },
        inferred: ['op'],
      };
    case 'codex_event_token_count': {
      const info = isObj(it.info) ? it.info : null;
      const total = info && isObj(info.total_token_usage) ? info.total_token_usage : null;
      const last = info && isObj(info.last_token_usage) ? info.last_token_usage : null;
      return {
        payload: {
          tokens_total: total ? num(total.total_tokens) : null,
          tokens_last: last ? num(last.total_tokens) : null,
          input_tokens: total ? num(total.input_tokens) : null,
          cached_input_tokens: total ? num(total.cached_input_tokens) : null,
          output_tokens: total ? num(total.output_tokens) : null,
          rate_limits: it.rate_limits ?? null,
        },
        inferred: [],
      };
    }
    default:
      return { payload: line, inferred: [] };
  }
}

/** event_msg kinds that echo a response item of the same turn: a conversation shows the item only. */
export const ECHO_KINDS: ReadonlySet<string> = new Set([
  'codex_event_user_message',
  'codex_event_agent_message',
  'codex_event_agent_reasoning',
  'codex_event_agent_reasoning_raw_content',
]);

/** The run's tokens as Codex counts them: the last cumulative total of its token_count events. */
export function codexTokens(events: Iterable<{ kind: string; payload: Obj }>): number | null {
  let t: number | null = null;
  for (const e of events) {
    const u = totalOf(e.kind, e.payload);
    if (u !== null) t = u;
  }
  return t;
}

function totalOf(kind: string, payload: Obj): number | null {
  if (kind !== 'codex_event_token_count') return null;
  const v = interpret(kind, payload, undefined, '').payload.tokens_total;
  return typeof v === 'number' ? v : null;
}

export const codexView: FormatView = {
  session: true,
  name: 'codex',
  // A rollout's run is named after its file, `rollout-<local time>-<thread id>` (importer.ts,
  // fileRun); the thread id is what its telemetry sends as `conversation.id`.
  sessionOf(sourceRunId) {
    const id = sourceRunId.split(':')[0]!;
    const m = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i.exec(id);
    return m ? m[1]!.toLowerCase() : id === '' ? null : id;
  },
  interpret(kind, payload, ctx) {
    return interpret(kind, payload, ctx.source ?? undefined, ctx.run_id);
  },
  usage(kind, payload) {
    const total = totalOf(kind, payload);
    return total === null ? null : { total };
  },
};
