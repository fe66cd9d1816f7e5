/**
 * What the conversation view shows of a run's events, derived one page at a time from each event's
 * v1 reading (shared/formats): prompts, the model's text, thinking, tool calls with their results
 * and file changes (paired by call_id), and notable events of ProofLoop's own runs. Items keep
 * bounded text only, never payloads, so a page can leave the event cache while its items stay.
 */
import { ECHO_KINDS } from '../../../shared/formats/codex';
import { isContextPrompt } from '../../../shared/formats/prompt';
import type { StoredEvent } from '../../api/types';
import { asV1 } from '../formats/readAs';

type Obj = Record<string, unknown>;

/** How much of a subagent's prompt is compared to find its sidechain. */
const SUB_PROMPT_CHARS = 2000;

/** Text an item keeps (the payload view has all of it). */
export const ITEM_CHARS = 3000;

const str = (x: unknown): string | null => (typeof x === 'string' ? x : null);
const clip = (s: string, n = ITEM_CHARS): string => (s.length > n ? `${s.slice(0, n)}…` : s);

function json(v: unknown, n = 600): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return clip(v, n);
  try {
    return clip(JSON.stringify(v, null, 1).replace(/\n\s*/g, ' '), n);
  } catch {
    return '';
  }
}

export type ItemType = 'prompt' | 'text' | 'thinking' | 'call' | 'result' | 'file' | 'note';

export interface ConvItem {
  type: ItemType;
  seq: number;
  kind: string;
  /** What the item says: the prompt, the text, the thinking, the call's arguments, the result. */
  text: string;
  /** A prompt's role (Codex writes developer and system messages too), a note's label. */
  label?: string;
  /** A prompt that Claude Code marks as meta (a command's output), a Codex environment context. */
  meta?: boolean;
  callId?: string;
  tool?: string;
  status?: string;
  path?: string;
  patch?: string;
  /** The subagent a Task / Agent call started (the result's agentId). */
  agentId?: string;
  /** A Claude Code 1.x sidechain line: the subagent's conversation, in the session's own file. */
  sidechain?: boolean;
  /** A Task / Agent call's prompt, or a sidechain's first prompt: how 1.x links the two. */
  subPrompt?: string;
  /** Claude Code: the line's place in the conversation tree. */
  uuid?: string;
  parent?: string;
  tone: 'ok' | 'bad' | 'plain';
}

/** A Claude Code line's place in the tree (every line with a uuid, messages and the rest). */
export interface TreeNode {
  seq: number;
  uuid: string;
  parent: string | null;
  /** The line's type (user, assistant, system, progress…). */
  type: string;
  message: boolean;
  sidechain: boolean;
}

export interface DerivedPage {
  items: ConvItem[];
  nodes: TreeNode[];
  /** call_id → agentId from progress lines (`data.agentId` with `parentToolUseID`). */
  agents: [string, string][];
}

const MESSAGE_TYPES = new Set(['user', 'assistant', 'system']);

const NOTE_KINDS: Record<string, string> = {
  run_started: 'run started',
  action_allowed: 'allowed',
  action_denied: 'denied',
  tool_timed_out: 'timed out',
  budget_exhausted: 'budget exhausted',
  judge_verdict: 'verdict',
  run_completed: 'completed',
  run_failed: 'failed',
  run_resumed: 'resumed',
  context_updated: 'context',
  event_annotated: 'note',
  codex_event_turn_aborted: 'turn aborted',
  codex_event_error: 'error',
  codex_event_exec_approval_request: 'approval requested',
  codex_event_apply_patch_approval_request: 'patch approval requested',
  codex_developer_message: 'developer',
  codex_system_message: 'system',
  cc_system: 'system',
};

function noteText(kind: string, p: Obj): string {
  switch (kind) {
    case 'run_started':
      return [str(p.goal), str(p.cwd)].filter(Boolean).join(' · ');
    case 'action_allowed':
    case 'action_denied':
      return `${str(p.call_id) ?? ''} by ${str(p.rule) ?? ''}${p.reason ? `: ${json(p.reason)}` : ''}`;
    case 'judge_verdict':
      return p.passed === true ? 'PASS' : 'FAIL';
    case 'run_completed':
      return json(p.outcome);
    case 'run_failed':
      return json(p.reason);
    case 'context_updated':
      return [str(p.op), str(p.summary)].filter(Boolean).join(': ');
    case 'codex_developer_message':
    case 'codex_system_message':
      return clip(texts(p), 600);
    default:
      return json(p, 400);
  }
}

function texts(line: Obj): string {
  const it = (line.payload && typeof line.payload === 'object' ? line.payload : line) as Obj;
  const c = it.content;
  if (typeof c === 'string') return c;
  if (!Array.isArray(c)) return '';
  return c
    .map((b) => (b && typeof b === 'object' && typeof (b as Obj).text === 'string' ? (b as Obj).text : ''))
    .join('\n');
}

/** One event's item, or null when the conversation does not show it (progress, echoes, snapshots). */
export function itemOf(fmt: string | null, stored: StoredEvent): ConvItem | null {
  const ev = asV1(fmt, stored);
  const p = ev.payload as Obj;
  const ids = stored.source?.ids ?? {};
  const base = {
    seq: ev.seq,
    kind: ev.kind,
    sidechain: p.sidechain === true || undefined,
    uuid: ids.uuid,
    parent: ids.parentUuid ?? ids.logicalParentUuid,
  };
  if (ECHO_KINDS.has(ev.kind)) return null;
  switch (ev.kind) {
    case 'user_prompted': {
      const text = str(p.content) ?? '';
      const meta = p.meta === true || isContextPrompt(text);
      const role = str(p.role);
      const root = p.sidechain === true && !base.parent;
      return {
        ...base,
        type: 'prompt',
        subPrompt: root ? text.trim().slice(0, SUB_PROMPT_CHARS) : undefined,
        text: clip(text),
        meta,
        label: role && role !== 'user' ? role : undefined,
        tone: 'plain',
      };
    }
    case 'model_responded': {
      const text = str(p.content) ?? '';
      // Claude Code often writes an empty text block before a thinking one: nothing to read.
      if (!text.trim()) return null;
      return { ...base, type: 'text', text: clip(text), tone: 'plain' };
    }
    case 'model_reasoned': {
      const unreadable = p.redacted === true || (p.encrypted === true && !str(p.content));
      return {
        ...base,
        type: 'thinking',
        text: unreadable
          ? '(not readable: the source keeps it encrypted or redacted)'
          : clip(str(p.content) ?? ''),
        tone: 'plain',
      };
    }
    case 'model_proposed':
    case 'tool_invoked': {
      if (ev.kind === 'tool_invoked' && !fmt) return null; // a v1 run's proposal says it already
      const args = (p.args ?? {}) as Obj;
      const tool = str(p.tool) ?? '';
      const subPrompt =
        (tool === 'Task' || tool === 'Agent') && typeof args.prompt === 'string'
          ? args.prompt.trim().slice(0, SUB_PROMPT_CHARS)
          : undefined;
      return {
        ...base,
        type: 'call',
        subPrompt,
        callId: str(p.call_id) ?? undefined,
        tool,
        text: json(p.args),
        tone: 'plain',
      };
    }
    case 'tool_returned': {
      const status = str(p.status) ?? 'ok';
      return {
        ...base,
        type: 'result',
        callId: str(p.call_id) ?? undefined,
        status,
        text: clip(str(p.excerpt) ?? json(p.output ?? p.result ?? '')),
        agentId: str(p.agent_id) ?? undefined,
        tone: status === 'ok' || status === 'success' ? 'ok' : 'bad',
      };
    }
    case 'file_changed':
      return {
        ...base,
        type: 'file',
        callId: str(p.call_id) || undefined,
        path: str(p.path) ?? '',
        patch: clip(str(p.patch) ?? '', 20_000),
        text: '',
        tone: 'plain',
      };
    default: {
      const label = NOTE_KINDS[ev.kind];
      if (label === undefined) return null;
      const bad = ['action_denied', 'tool_timed_out', 'run_failed', 'budget_exhausted', 'codex_event_error'];
      return {
        ...base,
        type: 'note',
        label,
        // A decision names its call: a denied call's row says so instead of waiting for a result.
        callId: ev.kind === 'action_denied' ? (str(p.call_id) ?? undefined) : undefined,
        text: noteText(ev.kind, p),
        tone: bad.includes(ev.kind) || (ev.kind === 'judge_verdict' && p.passed !== true) ? 'bad' : 'plain',
      };
    }
  }
}

/** The items of one page of events, and what pairing and the tree need of its other lines. */
export function derivePage(fmt: string | null, events: readonly StoredEvent[]): DerivedPage {
  const items: ConvItem[] = [];
  const nodes: TreeNode[] = [];
  const agents: [string, string][] = [];
  let lastUuid: string | null = null;
  for (const e of events) {
    const item = itemOf(fmt, e);
    if (item) items.push(item);
    if (fmt !== 'claude_code') continue;
    const p = e.payload as Obj;
    const ids = e.source?.ids ?? {};
    // One line may be several events (its content blocks): one node.
    if (ids.uuid && ids.uuid !== lastUuid) {
      lastUuid = ids.uuid;
      nodes.push({
        seq: e.seq,
        uuid: ids.uuid,
        parent: ids.parentUuid ?? ids.logicalParentUuid ?? null,
        type: str(p.type) ?? '',
        message: MESSAGE_TYPES.has(str(p.type) ?? ''),
        sidechain: p.isSidechain === true,
      });
    }
    if (ids['data.agentId'] && ids.parentToolUseID) agents.push([ids.parentToolUseID, ids['data.agentId']]);
  }
  return { items, nodes, agents };
}

/** `<session>:agent-<id>` (the importer's name of a Claude Code subagent run) → its session's run id. */
export function parentSessionOf(runId: string): string | null {
  const m = /^(.+):agent-[^:]+$/.exec(runId);
  return m ? m[1]! : null;
}

export const subagentRunId = (session: string, agentId: string): string => `${session}:agent-${agentId}`;
