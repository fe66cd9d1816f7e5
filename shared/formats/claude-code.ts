/**
 * How a stored Claude Code line reads as protocol v1, on read (see electron/ingest/formats/
 * claude-code.ts for how lines are named). The payload is the whole line; `source.part` names the
 * content block an event is about.
 *
 * Tokens: Claude Code writes one line per content block of an API response, each repeating the
 * message's usage (output_tokens growing as it streams). So no single event carries `tokens`;
 * each carries `usage_key` (message.id) and `usage`, and usageByMessage() counts once per key.
 */
import { harnessDecision } from './decision';
import type { FormatView, Interpreted } from './types';
import type { SourceRef } from './source-ref';
import { isObj, str, num, type Obj } from '../json-read.js';
import { dict } from '../dict.js';

/** Bound on the text a view copies into `excerpt` / `content` of a result (the payload keeps all). */
export const EXCERPT_CHARS = 4000;

const clip = (s: string): string => (s.length <= EXCERPT_CHARS ? s : `${s.slice(0, EXCERPT_CHARS)}…`);

function block(p: Obj, source: SourceRef | undefined): Obj | null {
  const msg = p.message;
  if (!isObj(msg) || !Array.isArray(msg.content) || source?.part === undefined) return null;
  const b: unknown = msg.content[source.part];
  return isObj(b) ? b : null;
}

/** The text of a content value: a string, or the text blocks of an array, joined. */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const out: string[] = [];
  for (const c of content) if (isObj(c) && typeof c.text === 'string') out.push(c.text);
  return out.join('\n');
}

/** input + cache reads + cache writes + output of one usage object (Anthropic counts them apart). */
export function usageTokens(u: unknown): number {
  if (!isObj(u)) return 0;
  let t = 0;
  for (const k of ['input_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens', 'output_tokens'])
    t += num(u[k]) ?? 0;
  return t;
}

/**
 * Usage counted once per message.id: the last line of a message has its final usage (Claude Code
 * writes output_tokens as they grow), so the last seen for a key wins. Lines without a message.id
 * count as their own.
 */
export function usageByMessage(
  events: Iterable<{ payload: Obj; source?: SourceRef }>,
): Map<string, { tokens: number; lines: number }> {
  const out = new Map<string, { tokens: number; lines: number }>();
  let anon = 0;
  for (const e of events) {
    const msg = e.payload.message;
    if (!isObj(msg) || !isObj(msg.usage)) continue;
    const key = str(msg.id) ?? `#${anon++}`;
    const prev = out.get(key);
    out.set(key, { tokens: usageTokens(msg.usage), lines: (prev?.lines ?? 0) + 1 });
  }
  return out;
}

/** A unified-diff-like patch of an Edit / MultiEdit / Write input (the view builds it: inferred). */
export function editPatch(tool: string, input: Obj): string | null {
  const path = str(input.file_path) ?? str(input.notebook_path) ?? '';
  const hunk = (a: string, b: string): string =>
    ['@@', ...a.split('\n').map((l) => `-${l}`), ...b.split('\n').map((l) => `+${l}`)].join('\n');
  if (tool === 'Edit') {
    const a = str(input.old_string);
    const b = str(input.new_string);
    return a === null || b === null ? null : `--- ${path}\n+++ ${path}\n${hunk(a, b)}`;
  }
  if (tool === 'MultiEdit' && Array.isArray(input.edits)) {
    const hunks = input.edits
      .filter(isObj)
      .map((e) => hunk(str(e.old_string) ?? '', str(e.new_string) ?? ''));
    return `--- ${path}\n+++ ${path}\n${hunks.join('\n')}`;
  }
  if (tool === 'Write') {
    const c = str(input.content);
    return c === null ? null : `--- /dev/null\n+++ ${path}\n${hunk('', c).replace('@@\n-\n', '@@\n')}`;
  }
  return null;
}

/** A background task's end as Claude Code tells the parent: a user line `<task-notification>…`. */
export interface TaskNotification {
  toolUseId: string | null;
  taskId: string | null;
  status: string | null;
  summary: string | null;
}

const tag = (text: string, name: string): string | null => {
  const m = new RegExp(`<${name}>([^<]*)</${name}>`).exec(text);
  return m ? m[1]!.trim() : null;
};

/** The notification a user message's content is (2.1.3xx background agents), else null. */
export function taskNotification(content: unknown): TaskNotification | null {
  const text =
    typeof content === 'string'
      ? content
      : Array.isArray(content) && content.length === 1 && isObj(content[0])
        ? (str(content[0].text) ?? '')
        : '';
  if (!text.trimStart().startsWith('<task-notification>')) return null;
  return {
    toolUseId: tag(text, 'tool-use-id'),
    taskId: tag(text, 'task-id'),
    status: tag(text, 'status'),
    summary: tag(text, 'summary'),
  };
}

function usageFields(p: Obj): Obj {
  const msg = isObj(p.message) ? p.message : {};
  const id = str(msg.id);
  return id === null ? {} : { usage_key: id, usage: msg.usage ?? null, model: msg.model ?? null };
}

function interpret(kind: string, p: Obj, source: SourceRef | undefined): Interpreted {
  const b = block(p, source);
  const msg = isObj(p.message) ? p.message : {};
  const side = p.isSidechain === true ? { sidechain: true } : {};
  switch (kind) {
    case 'model_responded':
      return {
        payload: { content: b ? (str(b.text) ?? '') : textOf(msg.content), ...usageFields(p), ...side },
        inferred: [],
      };
    case 'model_reasoned':
      return {
        payload: {
          content: b ? (str(b.thinking) ?? '') : '',
          redacted: b?.type === 'redacted_thinking',
          ...usageFields(p),
          ...side,
        },
        inferred: [],
      };
    case 'model_proposed':
      return {
        payload: {
          call_id: str(b?.id) ?? '',
          tool: str(b?.name) ?? '',
          args: b?.input ?? null,
          ...usageFields(p),
          ...side,
        },
        inferred: [],
      };
    case 'file_changed': {
      const input = isObj(b?.input) ? b.input : {};
      const tool = str(b?.name) ?? '';
      const patch = editPatch(tool, input);
      const path = str(input.file_path) ?? str(input.notebook_path) ?? '';
      const out: Obj = { path, call_id: str(b?.id) ?? '', tool, ...side };
      if (tool === 'Write') out.after = str(input.content);
      if (patch !== null) out.patch = clip(patch);
      return { payload: out, inferred: patch === null ? [] : ['patch'] };
    }
    case 'tool_returned': {
      const r = p.toolUseResult;
      const ro = isObj(r) ? r : null;
      const duration = num(ro?.durationMs) ?? num(ro?.totalDurationMs);
      const inferred: string[] = [];
      if (duration === null) inferred.push('duration_ms');
      if (b?.is_error === undefined) inferred.push('status');
      const out: Obj = {
        call_id: str(b?.tool_use_id) ?? '',
        status: b?.is_error === true ? 'error' : 'ok',
        duration_ms: duration ?? 0,
        excerpt: clip(textOf(b?.content)),
        ...side,
      };
      const agent = str(ro?.agentId);
      if (agent !== null) out.agent_id = agent;
      // A background agent's call returns at once; the agent ends later (subagent_ended).
      if (ro?.status === 'async_launched' || ro?.isAsync === true) out.async_launched = true;
      return { payload: out, inferred };
    }
    case 'action_allowed':
    case 'action_denied': {
      const d = isObj(p.permissionDecision) ? p.permissionDecision : {};
      const denied = kind === 'action_denied';
      const out = harnessDecision({
        harness: 'claude_code',
        call_id: str(b?.tool_use_id) ?? '',
        decision: str(d.decision),
        source: str(d.source),
        // What the model was told of a denial is its reason (a hook's message, say).
        reason: denied && b?.is_error === true ? clip(textOf(b.content)) : null,
        reason_type: str(d.reasonType),
      }).payload;
      const extra: Obj = dict();
      if (typeof p.toolDenialKind === 'string') extra.denial_kind = p.toolDenialKind;
      if (typeof d.reasonCode === 'string') extra.reason_code = d.reasonCode;
      return { payload: { ...out, ...extra, ...side }, inferred: [] };
    }
    case 'subagent_ended': {
      const n = taskNotification(msg.content);
      return {
        payload: {
          call_id: n?.toolUseId ?? '',
          agent_id: n?.taskId ?? null,
          status: n?.status ?? null,
          summary: n?.summary ?? null,
          ...side,
        },
        inferred: [],
      };
    }
    case 'user_prompted': {
      const content = b ? (b.type === 'image' ? '[image]' : (str(b.text) ?? '')) : textOf(msg.content);
      return { payload: { content: clip(content), meta: p.isMeta === true, ...side }, inferred: [] };
    }
    case 'context_updated': {
      const cm = isObj(p.compactMetadata) ? p.compactMetadata : {};
      const op =
        p.type === 'summary' ? 'summary' : p.isCompactSummary === true ? 'compact_summary' : 'compacted';
      const out: Obj = { op };
      const pre = num(cm.preTokens);
      if (pre !== null) out.tokens_before = pre;
      if (op === 'summary') out.summary = str(p.summary);
      if (op === 'compact_summary') out.summary = clip(textOf(msg.content));
      return { payload: out, inferred: ['op'] };
    }
    default:
      return { payload: p, inferred: [] };
  }
}

export const claudeCodeView: FormatView = {
  session: true,
  name: 'claude_code',
  // A session's file is named by its session id, which its telemetry sends as `session.id`; a
  // subagent's run is `<session>:agent-<id>` (electron/ingest/importer.ts, fileRun), of the same
  // session, whose telemetry is the parent's.
  sessionOf(sourceRunId) {
    const session = sourceRunId.split(':')[0]!;
    return session === '' ? null : session;
  },
  interpret(kind, payload, ctx) {
    return interpret(kind, payload, ctx.source ?? undefined);
  },
  // Once per message.id (see usageByMessage): every line and block of one response repeats it.
  usage(_kind, payload, ctx) {
    const msg = payload.message;
    if (!isObj(msg) || !isObj(msg.usage)) return null;
    return { key: str(msg.id) ?? `seq:${ctx.seq}`, tokens: usageTokens(msg.usage) };
  },
};

/** One line of a session as the conversation tree needs it. */
export interface TreeLine {
  type: string;
  uuid: string | null;
  parent: string | null;
}

/** The line's place in the tree: its uuid, and its parent (parentUuid, else logicalParentUuid). */
export function treeLine(p: Obj): TreeLine {
  return {
    type: str(p.type) ?? '',
    uuid: str(p.uuid),
    parent: str(p.parentUuid) ?? str(p.logicalParentUuid),
  };
}

/**
 * The conversation as a tree of uuid → parentUuid. Every line with a uuid is a node (a message's
 * parent may be a progress or hook line); a branch is a node with two or more message children
 * (user, assistant, system): a rewind or an edited prompt, not progress lines fanning out.
 * Iterative, whatever the depth.
 */
export function conversationTree(lines: Iterable<TreeLine>): {
  children: Map<string, string[]>;
  roots: string[];
  branches: string[];
  /** Message lines whose parent is not in the file (a window of a session, or a resumed one). */
  dangling: string[];
} {
  const MESSAGE = new Set(['user', 'assistant', 'system']);
  const seen = new Set<string>();
  const kept: TreeLine[] = [];
  for (const l of lines) {
    if (l.uuid === null) continue;
    seen.add(l.uuid);
    kept.push(l);
  }
  const children = new Map<string, string[]>();
  const messageChildren = new Map<string, number>();
  const roots: string[] = [];
  const dangling: string[] = [];
  for (const l of kept) {
    const isMessage = MESSAGE.has(l.type);
    if (l.parent === null) {
      if (isMessage) roots.push(l.uuid!);
    } else if (!seen.has(l.parent)) {
      if (isMessage) dangling.push(l.uuid!);
    } else {
      const c = children.get(l.parent);
      if (c) c.push(l.uuid!);
      else children.set(l.parent, [l.uuid!]);
      if (isMessage) messageChildren.set(l.parent, (messageChildren.get(l.parent) ?? 0) + 1);
    }
  }
  const branches = [...messageChildren].filter(([, n]) => n > 1).map(([k]) => k);
  return { children, roots, branches, dangling };
}

/**
 * The subagent each Task / Agent call started, from the lines of its session: in 2.1 by the
 * `agentId` of the call's result (`toolUseResult.agentId`) or of progress lines (`data.agentId`
 * with `parentToolUseID`), naming `subagents/agent-<agentId>.jsonl`; in 1.x by the prompt, as the
 * root of a sidechain (`isSidechain` lines of the same file) whose first user message is the
 * call's `input.prompt`.
 */
export function subagentLinks(
  lines: Iterable<Obj>,
): Map<string, { agentId?: string; sidechainRoot?: string }> {
  const out = new Map<string, { agentId?: string; sidechainRoot?: string }>();
  const prompts = new Map<string, string>();
  const sideRoots: { uuid: string; prompt: string }[] = [];
  for (const p of lines) {
    const msg = isObj(p.message) ? p.message : null;
    const content = msg && Array.isArray(msg.content) ? msg.content : [];
    if (p.type === 'assistant') {
      for (const b of content)
        if (
          isObj(b) &&
          b.type === 'tool_use' &&
          (b.name === 'Task' || b.name === 'Agent') &&
          isObj(b.input)
        ) {
          const id = str(b.id);
          const prompt = str(b.input.prompt);
          if (id !== null && prompt !== null) prompts.set(prompt, id);
        }
    }
    if (p.type === 'user' && isObj(p.toolUseResult)) {
      const agent = str(p.toolUseResult.agentId);
      for (const b of content)
        if (agent !== null && isObj(b) && b.type === 'tool_result' && typeof b.tool_use_id === 'string')
          out.set(b.tool_use_id, { ...out.get(b.tool_use_id), agentId: agent });
    }
    if (p.type === 'progress' && isObj(p.data)) {
      const agent = str(p.data.agentId);
      const call = str(p.parentToolUseID);
      if (agent !== null && call !== null) out.set(call, { ...out.get(call), agentId: agent });
    }
    if (p.isSidechain === true && p.parentUuid === null && p.type === 'user' && msg) {
      const uuid = str(p.uuid);
      if (uuid !== null) sideRoots.push({ uuid, prompt: textOf(msg.content) });
    }
  }
  for (const r of sideRoots) {
    const call = prompts.get(r.prompt);
    if (call !== undefined) out.set(call, { ...out.get(call), sidechainRoot: r.uuid });
  }
  return out;
}
