import type { StoredEvent } from '../api/types';

export type KindTone =
  | 'start'
  | 'model'
  | 'allow'
  | 'deny'
  | 'tool'
  | 'error'
  | 'file'
  | 'budget'
  | 'judge'
  | 'end'
  | 'note'
  | 'other';

const TONES: Record<string, KindTone> = {
  run_started: 'start',
  run_resumed: 'start',
  model_proposed: 'model',
  model_responded: 'model',
  context_updated: 'model',
  action_allowed: 'allow',
  action_denied: 'deny',
  tool_invoked: 'tool',
  tool_returned: 'tool',
  tool_timed_out: 'error',
  file_changed: 'file',
  budget_exhausted: 'budget',
  judge_verdict: 'judge',
  run_completed: 'end',
  run_failed: 'error',
  event_annotated: 'note',
};

/** Kinds the views of other programs' sessions read lines as (shared/formats), beside v1's. */
const SESSION_TONES: Record<string, KindTone> = {
  user_prompted: 'start',
  model_reasoned: 'model',
};

export const toneOf = (kind: string): KindTone => TONES[kind] ?? SESSION_TONES[kind] ?? 'other';

/** Every kind of protocol v1, for the kind filter. */
export const ALL_KINDS = Object.keys(TONES);

/** The kinds of session formats (Claude Code, Codex), offered by the kind filter for their runs. */
export const SESSION_KINDS = Object.keys(SESSION_TONES);

/** Kinds a person jumps between (Shift+→): denials, errors, timeouts, budget, verdicts, failures. */
export const NOTABLE_KINDS = [
  'action_denied',
  'tool_timed_out',
  'budget_exhausted',
  'judge_verdict',
  'run_failed',
];

/** A text a bundle's share profile left out reads as such, not as its JSON. */
function redactedText(v: object): string | null {
  const o = v as Record<string, unknown>;
  return typeof o.redacted === 'string' && typeof o.length === 'number'
    ? `[REDACTED:${o.redacted}, ${o.length} chars]`
    : null;
}

const str = (v: unknown): string =>
  typeof v === 'string'
    ? v
    : v === undefined || v === null
      ? ''
      : (typeof v === 'object' && redactedText(v)) || JSON.stringify(v);

function clip(s: string, n = 120): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > n ? `${one.slice(0, n - 1)}…` : one;
}

function argsLine(args: unknown): string {
  if (args && typeof args === 'object' && !Array.isArray(args)) {
    const o = args as Record<string, unknown>;
    // file_path: Claude Code's Read/Edit/Write; description: its Agent (a subagent's task).
    const first = o.path ?? o.file_path ?? o.command ?? o.cmd ?? o.query ?? o.description;
    if (first !== undefined) return str(first);
  }
  return str(args);
}

/**
 * A real agent's exchange through the gateway that answered with calls only (no text): its lane
 * (main, a subagent's, a side call), how the answer stopped and how many calls it made.
 */
function exchangeLine(p: Record<string, unknown>): string {
  const calls = Array.isArray(p.calls) ? p.calls.length : 0;
  return [
    str(p.lane),
    str(p.stop_reason),
    calls ? `${calls} call${calls === 1 ? '' : 's'}` : '',
    p.source ? `from ${str(p.source)}` : '',
  ]
    .filter(Boolean)
    .join(' · ');
}

/** One line that says what the event is about, for the timeline. */
export function summarize(ev: StoredEvent): string {
  const p = (ev.payload ?? {}) as Record<string, unknown>;
  switch (ev.kind) {
    case 'run_started':
      return clip(`${str(p.task_id)}: ${str(p.goal)}`);
    case 'model_proposed':
    case 'tool_invoked':
      return clip(`${str(p.tool)}(${argsLine(p.args)})`);
    case 'action_allowed':
      return clip(`${str(p.call_id)} by ${str(p.rule)}`);
    case 'action_denied':
      return clip(`${str(p.call_id)} by ${str(p.rule)}: ${str(p.reason)}`);
    case 'tool_returned':
      return clip(`${str(p.call_id)} ${str(p.status)}${p.excerpt ? ` — ${str(p.excerpt)}` : ''}`);
    case 'tool_timed_out':
      return clip(`${str(p.call_id)} after ${str(p.timeout_ms)} ms`);
    case 'model_responded':
      if (!str(p.content) && typeof p.lane === 'string') return clip(exchangeLine(p));
      return clip(str(p.content));
    case 'user_prompted':
      return clip(str(p.content));
    case 'model_reasoned':
      return clip(p.redacted === true || p.encrypted === true ? '(thinking, not readable)' : str(p.content));
    case 'context_updated':
      return clip(`${str(p.op)} ${p.tokens_before ?? '?'} → ${p.tokens_after ?? '?'} tokens`);
    case 'file_changed':
      return clip(str(p.path));
    case 'budget_exhausted':
      return clip(`${str(p.budget)} ${str(p.used)} / ${str(p.limit)}`);
    case 'judge_verdict':
      return clip(
        `${p.passed ? 'PASS' : 'FAIL'}${p.tests_passed !== undefined ? ` · ${str(p.tests_passed)} passed` : ''}${
          p.tests_failed !== undefined ? `, ${str(p.tests_failed)} failed` : ''
        }`,
      );
    case 'run_completed':
      return clip(str(p.outcome));
    case 'run_failed':
      return clip(`${str(p.reason)}${p.error_type ? ` (${str(p.error_type)})` : ''}`);
    case 'run_resumed':
      return `from seq ${str(p.from_seq)}`;
    case 'event_annotated':
      return clip(`seq ${str(p.target_seq)}: ${str(p.note)}`);
    default:
      return clip(recordLine(p));
  }
}

/**
 * Fields every Claude Code record repeats (a subagent's its agentId; Codex's time): as the start of a summary they are
 * all a row would show (`{"parentUuid":…,"isSidechain":false,"userType":…`), so they are left out.
 * The top-level `type` is the event's kind already.
 */
const RECORD_ENVELOPE = new Set([
  'parentUuid',
  'logicalParentUuid',
  'isSidechain',
  'userType',
  'cwd',
  'sessionId',
  'version',
  'gitBranch',
  'agentId',
  'slug',
  'uuid',
  'timestamp',
  'type',
  'requestId',
  'parentToolUseID',
  'toolUseID',
]);

/**
 * A record of a kind ProofLoop keeps as written (a hook's progress, a file-history snapshot, a
 * Codex event it has no reading of): what it says, not the envelope it shares with every record.
 * Objects are opened one level (`data`, Codex's `payload`), their own `type` first, bare.
 */
function recordLine(p: Record<string, unknown>): string {
  const parts: string[] = [];
  const scalar = (v: unknown): v is string | number | boolean =>
    typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
  const add = (o: Record<string, unknown>, nested: boolean): void => {
    if (nested && scalar(o.type)) parts.push(String(o.type));
    for (const [k, v] of Object.entries(o)) {
      if (parts.length >= 8) return;
      if (nested ? k === 'type' : RECORD_ENVELOPE.has(k)) continue;
      const part = scalar(v) ? `${k}=${String(v)}` : null;
      if (part !== null) {
        if (!parts.includes(part)) parts.push(part); // a snapshot repeats its messageId
      } else if (Array.isArray(v)) parts.push(`${k}[${v.length}]`);
      else if (v && typeof v === 'object')
        if (nested) parts.push(`${k}{…}`);
        else add(v as Record<string, unknown>, true);
    }
  };
  add(p, false);
  return parts.length > 0 ? parts.join(' · ') : JSON.stringify(p);
}

/** Whether the row should read as a problem even though its kind is ordinary (a failed tool). */
export function isErrorEvent(ev: StoredEvent): boolean {
  if (ev.kind === 'tool_returned') {
    const status = (ev.payload as Record<string, unknown>).status;
    return typeof status === 'string' && status !== 'ok' && status !== 'success';
  }
  if (ev.kind === 'judge_verdict') return (ev.payload as Record<string, unknown>).passed === false;
  return false;
}

export function durationOf(ev: StoredEvent): number | null {
  const d = (ev.payload as Record<string, unknown>).duration_ms;
  return typeof d === 'number' ? d : null;
}

export function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)}s`;
  const m = Math.floor(ms / 60_000);
  const s = Math.round((ms % 60_000) / 1000);
  if (m < 60) return `${m}m${String(s).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

export const callIdOf = (ev: StoredEvent): string | null => {
  const c = (ev.payload as Record<string, unknown>).call_id;
  return typeof c === 'string' ? c : null;
};
