/**
 * How a stored Inspect AI record reads as protocol v1, on read (see
 * electron/ingest/formats/inspect.ts for how records are named). The payload is the record as the
 * log writes it: an event (`{event: "model", …}`), a sample's shell, an eval's header, a pooled
 * message. Nothing here is stored.
 */
import type { FormatView, Interpreted, Usage } from './types';
import { isObj, str, num, type Obj } from '../json-read.js';

export const EXCERPT_CHARS = 4000;
const clip = (s: string): string => (s.length <= EXCERPT_CHARS ? s : `${s.slice(0, EXCERPT_CHARS)}…`);

/** Text of a message's content: a string, or the text parts of a list of content parts. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const out: string[] = [];
  for (const c of content) {
    if (!isObj(c)) continue;
    if (typeof c.text === 'string') out.push(c.text);
    else if (typeof c.reasoning === 'string') out.push(c.reasoning);
  }
  return out.join('\n');
}

/** A sample's input as text: a string, or its messages' text. */
function inputText(input: unknown): string {
  if (typeof input === 'string') return input;
  if (!Array.isArray(input)) return '';
  return input.map((m) => (isObj(m) ? contentText(m.content) : '')).join('\n');
}

function outputMessage(ev: Obj): Obj | null {
  const out = isObj(ev.output) ? ev.output : null;
  const c = out && Array.isArray(out.choices) && isObj(out.choices[0]) ? out.choices[0] : null;
  return c && isObj(c.message) ? c.message : null;
}

function usageOf(ev: Obj): number | null {
  const out = isObj(ev.output) ? ev.output : null;
  const u = out && isObj(out.usage) ? out.usage : null;
  return u ? num(u.total_tokens) : null;
}

function errorText(e: unknown): string | null {
  if (typeof e === 'string') return e;
  if (isObj(e)) return str(e.message) ?? str(e.error) ?? JSON.stringify(e);
  return null;
}

/** Inspect's value_to_float for the usual scalar values: C/I/P/N, yes/no, booleans, numbers. */
export function scoreValue(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v !== 'string') return null;
  const s = v.trim().toLowerCase();
  const named: Record<string, number> = { c: 1, i: 0, p: 0.5, n: 0, yes: 1, no: 0, true: 1, false: 0 };
  if (s in named) return named[s]!;
  const n = Number(s);
  return s !== '' && Number.isFinite(n) ? n : null;
}

/** Whether a score passes: every value (a dict's too) reads as 1 or more. */
function passed(value: unknown): boolean {
  if (isObj(value)) {
    const vs = Object.values(value);
    return vs.length > 0 && vs.every((x) => (scoreValue(x) ?? 0) >= 1);
  }
  return (scoreValue(value) ?? 0) >= 1;
}

const BUDGET: Record<string, 'steps' | 'tokens' | 'wall_ms'> = {
  message: 'steps',
  turn: 'steps',
  token: 'tokens',
  time: 'wall_ms',
  working: 'wall_ms',
};

function durationMs(ev: Obj): number | null {
  const a = str(ev.timestamp);
  const b = str(ev.completed);
  if (a !== null && b !== null) {
    const d = Date.parse(b) - Date.parse(a);
    if (Number.isFinite(d) && d >= 0) return d;
  }
  const w = num(ev.working_time);
  return w !== null && w >= 0 ? Math.round(w * 1000) : null;
}

function interpret(kind: string, p: Obj, part: number | undefined, runId: string): Interpreted | null {
  const inferred: string[] = [];
  const v1 = (fields: Obj, guessed: string[] = []): Interpreted => {
    inferred.push(...guessed);
    return { payload: { ...p, ...fields }, inferred };
  };
  switch (kind) {
    case 'run_started': {
      const spec = isObj(p.eval) ? p.eval : null;
      if (spec) {
        // An eval's header (or journal start).
        const task = str(spec.task) ?? runId;
        return v1(
          {
            task_id: task,
            goal: task,
            agent: { name: 'inspect', ...(str(spec.model) !== null ? { model: str(spec.model) } : {}) },
          },
          ['agent'],
        );
      }
      const usage = isObj(p.model_usage) ? Object.keys(p.model_usage) : [];
      const id = p.id === undefined ? runId : String(p.id as string | number);
      return v1(
        {
          task_id: id,
          goal: clip(inputText(p.input)),
          agent: { name: 'inspect', ...(usage[0] !== undefined ? { model: usage[0] } : {}) },
        },
        ['agent'],
      );
    }
    case 'model_responded': {
      const msg = outputMessage(p);
      const tokens = usageOf(p);
      return v1({
        content: clip(contentText(msg?.content)),
        ...(tokens !== null ? { tokens } : {}),
        model: str(p.model),
        error: errorText(p.error),
      });
    }
    case 'model_proposed': {
      const calls = outputMessage(p)?.tool_calls;
      const tc =
        Array.isArray(calls) && part !== undefined && isObj(calls[part - 1]) ? (calls[part - 1] as Obj) : {};
      const tokens = usageOf(p);
      return v1({
        call_id: str(tc.id) ?? `${str(p.uuid) ?? 'model'}#${part ?? 0}`,
        tool: str(tc.function) ?? 'unknown',
        args: tc.arguments ?? null,
        ...(part === 1 && tokens !== null ? { tokens } : {}),
        model: str(p.model),
      });
    }
    case 'tool_invoked':
      return v1({
        call_id: str(p.id) ?? 'unknown',
        tool: str(p.function) ?? 'unknown',
        args: p.arguments ?? null,
      });
    case 'tool_returned': {
      const ms = durationMs(p);
      const err = errorText(p.error);
      const result = typeof p.result === 'string' ? p.result : JSON.stringify(p.result ?? null);
      return v1(
        {
          call_id: str(p.id) ?? 'unknown',
          status: err !== null ? 'error' : 'ok',
          duration_ms: ms ?? 0,
          excerpt: clip(err ?? result),
        },
        ms === null ? ['duration_ms'] : [],
      );
    }
    case 'action_allowed':
    case 'action_denied':
    case 'action_escalated': {
      const call = isObj(p.call) ? p.call : {};
      const decision = str(p.decision) ?? 'unknown';
      const approver = str(p.approver) ?? 'unknown';
      return v1({
        call_id: str(call.id) ?? 'unknown',
        tool: str(call.function),
        rule: `approver:${approver}`,
        reason: str(p.explanation) ?? decision,
        decision,
        approver,
      });
    }
    case 'budget_exhausted': {
      const type = str(p.type) ?? '';
      const budget = BUDGET[type] ?? 'steps';
      const limit = num(p.limit);
      const scaled = limit === null ? 0 : budget === 'wall_ms' ? limit * 1000 : limit;
      // Inspect records the limit that was hit, not what was used: used reads as the limit.
      return v1({ budget, limit: scaled, used: scaled, limit_type: type }, [
        'used',
        ...(limit === null ? ['limit'] : []),
      ]);
    }
    case 'judge_verdict': {
      const score = isObj(p.score) ? p.score : {};
      return v1(
        { passed: passed(score.value), value: score.value ?? null, explanation: str(score.explanation) },
        ['passed'],
      );
    }
    case 'run_failed': {
      const reason =
        errorText(p.error) ?? (str(p.status) !== null ? `eval ${str(p.status)}` : null) ?? 'error';
      return v1({ reason: clip(reason) });
    }
    case 'run_completed': {
      const status = str(p.status);
      return v1({ outcome: status ?? (p.limit ? 'limit' : 'completed') }, status === null ? ['outcome'] : []);
    }
    case 'context_updated':
      return v1({ op: str(p.type) ?? 'compaction' });
    case 'inspect_message':
      return v1({ role: str(p.role), content: clip(contentText(p.content)) });
    default:
      return null;
  }
}

export const inspectView: FormatView = {
  name: 'inspect',
  interpret(kind, payload, ctx): Interpreted | null {
    return interpret(kind, payload, ctx.source?.part, ctx.run_id);
  },
  usage(kind, payload, ctx): Usage | null {
    if (kind !== 'model_responded') return null;
    const t = usageOf(payload);
    return t === null ? null : { key: ctx.source?.ids?.uuid ?? `seq:${ctx.seq}`, tokens: t };
  },
};
