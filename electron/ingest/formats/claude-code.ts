/**
 * Claude Code sessions: `~/.claude/projects/<project>/<session>.jsonl`, and a session's subagents in
 * `<session>/subagents/agent-<id>.jsonl` (2.1) or as `isSidechain` lines of the session's file (1.x).
 *
 * Naming (each event's payload is the whole line as written; `source.part` names the content block):
 *   assistant block  text → model_responded, thinking / redacted_thinking → model_reasoned,
 *                    tool_use → model_proposed (Edit / MultiEdit / Write / NotebookEdit: also
 *                    file_changed, same part), any other block type → cc_block_<type>
 *   user             a prompt (string content, text or image blocks) → user_prompted,
 *                    tool_result block → tool_returned, any other block → cc_block_<type>,
 *                    isCompactSummary → context_updated (one event for the line),
 *                    a `<task-notification>` (a background subagent's end) → subagent_ended;
 *                    a tool_result line's `permissionDecision` (2.1.3xx) → action_allowed /
 *                    action_denied, before that block's tool_returned
 *   system           subtype compact_boundary → context_updated, any other → cc_system
 *   summary          → context_updated
 *   any other type   → cc_<type> (cc_file_history_snapshot, cc_queue_operation, cc_last_prompt,
 *                    cc_progress, and types never seen before); a line without a type → cc_record
 * A message with no content blocks is one event, cc_assistant or user_prompted.
 *
 * What needs two lines is done on read from `source.ids`: the conversation tree (uuid → parentUuid,
 * logicalParentUuid across a compaction), one model turn per message.id (its usage counted once),
 * a result paired with its call (tool_use_id), a subagent with the Task / Agent call that started
 * it (agentId in the result's toolUseResult and in progress lines, parentToolUseID).
 */
import { allows } from '../../../shared/formats/decision';
import { taskNotification } from '../../../shared/formats/claude-code';
import { kindPart } from './names';
import type { FormatAdapter, Json, MappedEvent, SourceRef } from './types';
import { dict } from '../../../shared/dict.js';
import { isObj, str, type Obj } from '../../../shared/json-read.js';

/** Tools whose input names a file they write. */
export const FILE_TOOLS: ReadonlySet<string> = new Set(['Edit', 'MultiEdit', 'Write', 'NotebookEdit']);

/** Record types only Claude Code writes, for detecting a file whose first line has no sessionId. */
const OWN_TYPES = new Set(['summary', 'file-history-snapshot', 'queue-operation', 'last-prompt']);

const ID_FIELDS = [
  'uuid',
  'parentUuid',
  'logicalParentUuid',
  'sessionId',
  'agentId',
  'requestId',
  'parentToolUseID',
  'toolUseID',
  'sourceToolAssistantUUID',
  'sourceToolUseID',
  'leafUuid',
  'messageId',
] as const;

function lineIds(r: Obj): Record<string, string> {
  const ids: Record<string, string> = dict();
  for (const k of ID_FIELDS) {
    const v = str(r[k]);
    if (v !== null && v !== '') ids[k] = v;
  }
  const msg = r.message;
  if (isObj(msg)) {
    const id = str(msg.id);
    if (id !== null && id !== '') ids['message.id'] = id;
  }
  const result = r.toolUseResult;
  if (isObj(result)) {
    const agent = str(result.agentId);
    if (agent !== null && agent !== '') ids['toolUseResult.agentId'] = agent;
  }
  const data = r.data;
  if (isObj(data)) {
    const agent = str(data.agentId);
    if (agent !== null && agent !== '') ids['data.agentId'] = agent;
  }
  return ids;
}

function at(r: Obj): string {
  const t = str(r.timestamp);
  if (t !== null) return t;
  const snap = r.snapshot;
  return isObj(snap) ? (str(snap.timestamp) ?? '') : '';
}

function blockEvents(
  r: Obj,
  role: 'assistant' | 'user',
  blocks: unknown[],
  time: string,
  ids: Record<string, string>,
): MappedEvent[] {
  const out: MappedEvent[] = [];
  for (let part = 0; part < blocks.length; part++) {
    const b = blocks[part];
    const type = isObj(b) ? str(b.type) : null;
    const partIds = { ...ids };
    let kinds: string[];
    if (role === 'assistant' && type === 'text') kinds = ['model_responded'];
    else if (type === 'thinking' || type === 'redacted_thinking') kinds = ['model_reasoned'];
    else if (type === 'tool_use' && isObj(b)) {
      const id = str(b.id);
      if (id !== null && id !== '') partIds.tool_use_id = id;
      kinds = FILE_TOOLS.has(str(b.name) ?? '') ? ['model_proposed', 'file_changed'] : ['model_proposed'];
    } else if (type === 'tool_result' && isObj(b)) {
      const id = str(b.tool_use_id);
      if (id !== null && id !== '') partIds.tool_use_id = id;
      // The harness's decision on the call (2.1.3xx) comes before what the call returned.
      const decision = decisionOf(r);
      kinds = decision === null ? ['tool_returned'] : [decision, 'tool_returned'];
    } else if (role === 'user' && (type === 'text' || type === 'image')) kinds = ['user_prompted'];
    else kinds = [`cc_block_${kindPart(type ?? 'unnamed', 55)}`];
    const source: SourceRef = { part, ids: partIds };
    for (const kind of kinds) out.push({ kind, at: time, payload: r, source });
  }
  return out;
}

/** The kind of the decision a tool result line carries (`permissionDecision`), if it carries one. */
function decisionOf(r: Obj): 'action_allowed' | 'action_denied' | null {
  const d = r.permissionDecision;
  if (!isObj(d)) return null;
  return allows(str(d.decision) ?? '') ? 'action_allowed' : 'action_denied';
}

function mapRecord(r: Obj): MappedEvent[] {
  const type = str(r.type);
  const time = at(r);
  const ids = lineIds(r);
  const whole = (kind: string): MappedEvent[] => [{ kind, at: time, payload: r, source: { ids } }];
  const msg = isObj(r.message) ? r.message : null;
  switch (type) {
    case 'assistant': {
      const content = msg?.content;
      if (Array.isArray(content) && content.length > 0)
        return blockEvents(r, 'assistant', content, time, ids);
      // A message whose content is a bare string (older writers) is the model's text.
      return whole(typeof content === 'string' ? 'model_responded' : 'cc_assistant');
    }
    case 'user': {
      if (r.isCompactSummary === true) return whole('context_updated');
      const content = msg?.content;
      const note = taskNotification(content);
      if (note !== null) {
        const noteIds = { ...ids };
        if (note.toolUseId !== null) noteIds.tool_use_id = note.toolUseId;
        if (note.taskId !== null) noteIds.task_id = note.taskId;
        return [{ kind: 'subagent_ended', at: time, payload: r, source: { ids: noteIds } }];
      }
      if (Array.isArray(content) && content.length > 0) return blockEvents(r, 'user', content, time, ids);
      return whole('user_prompted');
    }
    case 'system':
      return whole(r.subtype === 'compact_boundary' ? 'context_updated' : 'cc_system');
    case 'summary':
      return whole('context_updated');
    case null:
      return whole('cc_record');
    default:
      return whole(`cc_${kindPart(type, 61)}`);
  }
}

export const claudeCode: FormatAdapter = {
  name: 'claude_code',
  label: 'Claude Code session',
  detect(first: Json): boolean {
    // ProofLoop's and the seeds' envelopes are never Claude Code lines.
    if ('seq' in first || 'event_type' in first || 'kind' in first) return false;
    const type = str(first.type);
    if (type === null) return false;
    if (typeof first.sessionId === 'string' && ('uuid' in first || 'parentUuid' in first || 'cwd' in first))
      return true;
    if (type === 'summary') return typeof first.summary === 'string' && 'leafUuid' in first;
    if (type === 'file-history-snapshot') return isObj(first.snapshot) && 'messageId' in first;
    return OWN_TYPES.has(type) && typeof first.sessionId === 'string';
  },
  map(record: Json): MappedEvent[] {
    return mapRecord(record);
  },
};
