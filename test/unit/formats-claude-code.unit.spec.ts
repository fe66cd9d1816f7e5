import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { claudeCode } from '../../electron/ingest/formats/claude-code';
import { codex } from '../../electron/ingest/formats/codex';
import type { MappedEvent } from '../../electron/ingest/formats/types';
import {
  claudeCodeView,
  conversationTree,
  subagentLinks,
  treeLine,
  usageByMessage,
  usageTokens,
} from '../../shared/formats/claude-code';
import { KIND_RE, checkPayload, isKnownKind } from '../../shared/protocol';

type Obj = Record<string, unknown>;
const ROOT = path.join(__dirname, '../fixtures/claude-code/projects');

function jsonlFiles(dir: string): string[] {
  const out: string[] = [];
  const stack = [dir];
  while (stack.length > 0) {
    const d = stack.pop()!;
    for (const n of readdirSync(d)) {
      const p = path.join(d, n);
      if (statSync(p).isDirectory()) stack.push(p);
      else if (n.endsWith('.jsonl')) out.push(p);
    }
  }
  return out.sort();
}

interface Mapped {
  line: number;
  record: Obj;
  events: MappedEvent[];
}

function load(rel: string): Mapped[] {
  const text = readFileSync(path.join(ROOT, rel), 'utf8');
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l, i) => {
      const record = JSON.parse(l) as Obj;
      const r = claudeCode.map(record);
      if (!Array.isArray(r)) throw new Error(`line ${i + 1}: ${r.error}`);
      return { line: i + 1, record, events: r };
    });
}

const events = (m: Mapped[]): MappedEvent[] => m.flatMap((x) => x.events);
const ids = (e: MappedEvent): Record<string, string> => e.source?.ids ?? {};

const FILES = {
  v1_0_98: 'sample-project/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl',
  v1_0_108: 'sample-project/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl',
  v2_1_38: '-home-marco-projects-spotter/tool_heavy.jsonl',
  v2_1_39: '-home-marco-projects-spotter-worktrees-spotter-4te/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl',
  v2_1_39_agent:
    '-home-marco-projects-spotter-worktrees-spotter-4te/ae4a77f8-aedd-4bc1-888f-c94edc91af04/subagents/agent-aac57f5.jsonl',
  v2_1_39_compact:
    '-home-marco-projects-spotter-worktrees-spotter-fum/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl',
};
/** Whole files: every call has its result in the file. */
const COMPLETE = [FILES.v1_0_98, FILES.v1_0_108, FILES.v2_1_38, FILES.v2_1_39_agent];

describe('Claude Code adapter on real sessions', () => {
  it('claims every fixture by its first line, and no Codex rollout or ProofLoop line', () => {
    const all = jsonlFiles(ROOT);
    expect(all.length).toBe(Object.keys(FILES).length);
    for (const f of all) {
      const first = JSON.parse(readFileSync(f, 'utf8').split('\n')[0]!) as Obj;
      expect(claudeCode.detect(first), f).toBe(true);
      expect(codex.detect(first), f).toBe(false);
    }
    expect(
      claudeCode.detect({
        seq: 1,
        run_id: 'r',
        kind: 'run_started',
        payload: {},
        sessionId: 'x',
        uuid: 'u',
        type: 'user',
      }),
    ).toBe(false);
    expect(claudeCode.detect({ timestamp: 't', type: 'session_meta', payload: { id: 'x' } })).toBe(false);
  });

  it.each(Object.entries(FILES))(
    '%s: every line is one or more events, each with the line as written',
    (_v, rel) => {
      const m = load(rel);
      const raw = readFileSync(path.join(ROOT, rel), 'utf8')
        .split('\n')
        .filter((l) => l !== '');
      expect(m.length).toBe(raw.length);
      for (const x of m) {
        expect(x.events.length, `line ${x.line}`).toBeGreaterThan(0);
        for (const e of x.events) {
          expect(e.kind).toMatch(KIND_RE);
          // The payload is the record itself: nothing copied, filled in or dropped.
          expect(e.payload).toBe(x.record);
          expect(JSON.stringify(e.payload)).toBe(JSON.stringify(JSON.parse(raw[x.line - 1]!)));
          expect(typeof e.at).toBe('string');
        }
        const blocks = (x.record.message as Obj | undefined)?.content;
        // One event per content block (and a second for a file-writing tool call), parts in order.
        if (Array.isArray(blocks) && blocks.length > 0 && x.record.isCompactSummary !== true) {
          const parts = [...new Set(x.events.map((e) => e.source?.part))];
          expect(parts).toEqual(blocks.map((_b, i) => i));
        }
      }
    },
  );

  it.each(COMPLETE)('%s: every tool call is paired with exactly one result by tool_use_id', (rel) => {
    const ev = events(load(rel));
    const calls = ev.filter((e) => e.kind === 'model_proposed').map((e) => ids(e).tool_use_id);
    const results = ev.filter((e) => e.kind === 'tool_returned').map((e) => ids(e).tool_use_id);
    expect(calls.length).toBeGreaterThan(0);
    expect(new Set(calls).size).toBe(calls.length);
    expect([...results].sort()).toEqual([...calls].sort());
  });

  it('results of parallel calls chain to each other and still pair by id (1.0.98)', () => {
    const m = load(FILES.v1_0_98);
    // One API response (one message.id) that proposed two or more calls at once.
    const byMessage = new Map<string, string[]>();
    for (const e of events(m))
      if (e.kind === 'model_proposed') {
        const k = ids(e)['message.id']!;
        byMessage.set(k, [...(byMessage.get(k) ?? []), ids(e).tool_use_id!]);
      }
    const parallel = [...byMessage.values()].find((c) => c.length >= 2);
    expect(parallel).toBeDefined();
    const resultLines = parallel!
      .map((id) =>
        m.find((x) => x.events.some((e) => e.kind === 'tool_returned' && ids(e).tool_use_id === id))!,
      )
      .sort((a, b) => a.line - b.line);
    // The results chain to each other in file order (each one's parent is the line before it),
    // and come back in another order than the calls: only the tool_use_id pairs them.
    for (let k = 1; k < resultLines.length; k++)
      expect(resultLines[k]!.record.parentUuid).toBe(resultLines[k - 1]!.record.uuid);
    const resultOrder = resultLines.map((x) => ids(x.events[0]!).tool_use_id);
    expect(resultOrder).not.toEqual(parallel);
    expect([...resultOrder].sort()).toEqual([...parallel!].sort());
    for (const x of resultLines) {
      const e = x.events[0]!;
      expect(
        claudeCodeView.interpret('tool_returned', e.payload, { seq: 0, run_id: 'r', source: e.source })!
          .payload.call_id,
      ).toBe(ids(e).tool_use_id);
    }
  });

  it('the 2.1 subagent file is linked to the Task call that started it, by agentId', () => {
    const parent = load(FILES.v2_1_39);
    const links = subagentLinks(parent.map((x) => x.record));
    const agentId = path.basename(FILES.v2_1_39_agent, '.jsonl').replace(/^agent-/, '');
    const call = [...links].find(([, l]) => l.agentId === agentId);
    expect(call).toBeDefined();
    const proposed = events(parent).find(
      (e) => e.kind === 'model_proposed' && ids(e).tool_use_id === call![0],
    )!;
    const v = claudeCodeView.interpret('model_proposed', proposed.payload, {
      seq: 0,
      run_id: 'r',
      source: proposed.source,
    })!.payload;
    expect(['Task', 'Agent']).toContain(v.tool);
    // The subagent's own lines name the same agent and the parent's session.
    const sub = load(FILES.v2_1_39_agent);
    expect(new Set(events(sub).map((e) => ids(e).agentId))).toEqual(new Set([agentId]));
    expect(sub[0]!.record.sessionId).toBe(
      parent.find((x) => typeof x.record.sessionId === 'string')!.record.sessionId,
    );
    // Its first prompt is the prompt of the call.
    const firstPrompt = events(sub).find((e) => e.kind === 'user_prompted')!;
    expect(
      claudeCodeView.interpret('user_prompted', firstPrompt.payload, {
        seq: 0,
        run_id: 'r',
        source: firstPrompt.source,
      })!.payload.content,
    ).toBe((v.args as Obj).prompt);
    // Where it began and ended in the parent: progress lines between the call and its result.
    const progress = parent.filter((x) => ids(x.events[0]!).parentToolUseID === call![0]);
    expect(progress.length).toBeGreaterThan(0);
    const callLine = parent.find((x) => x.events.includes(proposed))!.line;
    const resultLine = parent.find((x) =>
      x.events.some((e) => e.kind === 'tool_returned' && ids(e).tool_use_id === call![0]),
    )!.line;
    expect(progress.every((x) => x.line > callLine && x.line < resultLine)).toBe(true);
  });

  it('1.x sidechain lines are linked to their Task call by prompt (1.0.108)', () => {
    const m = load(FILES.v1_0_108);
    const links = subagentLinks(m.map((x) => x.record));
    const roots = [...links.values()].filter((l) => l.sidechainRoot !== undefined);
    expect(roots.length).toBeGreaterThan(0);
    const sidechainRoots = m.filter((x) => x.record.isSidechain === true && x.record.parentUuid === null);
    expect(roots.map((r) => r.sidechainRoot).sort()).toEqual(sidechainRoots.map((x) => x.record.uuid).sort());
  });

  it('the conversation is a tree of uuid → parentUuid; a window names its dangling parents', () => {
    for (const rel of [FILES.v1_0_98, FILES.v1_0_108, FILES.v2_1_39_agent]) {
      const t = conversationTree(load(rel).map((x) => treeLine(x.record)));
      expect(t.dangling, rel).toEqual([]);
      expect(t.roots.length, rel).toBeGreaterThan(0);
    }
    // The 1.0.108 session holds the main line and its sidechain: two roots, both kept apart.
    expect(
      conversationTree(load(FILES.v1_0_108).map((x) => treeLine(x.record))).roots.length,
    ).toBeGreaterThanOrEqual(2);
    // Across a compaction the boundary's logicalParentUuid links to the line before it.
    const w = load(FILES.v2_1_39_compact);
    const boundary = w.find((x) => x.record.subtype === 'compact_boundary')!;
    expect(boundary.record.parentUuid).toBeNull();
    expect(treeLine(boundary.record).parent).toBe(boundary.record.logicalParentUuid);
    const t = conversationTree(w.map((x) => treeLine(x.record)));
    expect(t.dangling.length).toBeGreaterThan(0);
  });

  it('a branch (a rewound prompt) is two children of one line, not a flattened list', () => {
    const m = load(FILES.v2_1_38);
    const lines = m.map((x) => treeLine(x.record));
    const firstUser = m.find((x) => x.record.type === 'user' && typeof x.record.uuid === 'string')!;
    // A rewind as Claude Code writes it: a new prompt whose parent is the same line as the first's.
    const edited = { ...treeLine(firstUser.record), uuid: 'edited-prompt' };
    const t = conversationTree([...lines, edited]);
    const before = conversationTree(lines);
    expect(t.branches.length).toBe(before.branches.length + (firstUser.record.parentUuid === null ? 0 : 1));
    if (firstUser.record.parentUuid === null) expect(t.roots).toContain('edited-prompt');
    else expect(t.children.get(firstUser.record.parentUuid as string)).toContain('edited-prompt');
  });

  it('lines split from one API response (one message.id) are one turn, with usage counted once', () => {
    const m = load(FILES.v2_1_39);
    const assistant = m.filter((x) => x.record.type === 'assistant');
    const ids1 = assistant.map((x) => (x.record.message as Obj).id as string);
    expect(new Set(ids1).size).toBeLessThan(ids1.length);
    const once = usageByMessage(assistant.map((x) => ({ payload: x.record })));
    expect(once.size).toBe(new Set(ids1).size);
    const naive = assistant.reduce((t, x) => t + usageTokens((x.record.message as Obj).usage), 0);
    const counted = [...once.values()].reduce((t, u) => t + u.tokens, 0);
    expect(counted).toBeLessThan(naive);
    // Each message's tokens are those of its last line.
    for (const [id, u] of once) {
      const last = assistant.filter((x) => (x.record.message as Obj).id === id).at(-1)!;
      expect(u.tokens).toBe(usageTokens((last.record.message as Obj).usage));
    }
    // Every event of a turn carries the same usage key, so the projection can count it once.
    for (const x of assistant)
      for (const e of x.events)
        expect(
          claudeCodeView.interpret(e.kind, e.payload, { seq: 0, run_id: 'r', source: e.source })!.payload
            .usage_key,
        ).toBe((x.record.message as Obj).id);
  });

  it('thinking, compaction and Edit/Write are named as issue 13 says, with the patch on read', () => {
    const w = events(load(FILES.v2_1_39_compact));
    expect(w.some((e) => e.kind === 'model_reasoned')).toBe(true);
    const ctx = w
      .filter((e) => e.kind === 'context_updated')
      .map((e) => claudeCodeView.interpret(e.kind, e.payload, { seq: 0, run_id: 'r', source: e.source })!);
    expect(ctx.map((c) => c.payload.op).sort()).toEqual(['compact_summary', 'compacted']);
    expect(ctx.find((c) => c.payload.op === 'compacted')!.payload.tokens_before).toBe(167731);
    const changes = [...w, ...events(load(FILES.v1_0_108)), ...events(load(FILES.v1_0_98))].filter(
      (e) => e.kind === 'file_changed',
    );
    expect(changes.length).toBeGreaterThan(0);
    for (const e of changes) {
      const v = claudeCodeView.interpret(e.kind, e.payload, { seq: 0, run_id: 'r', source: e.source })!;
      expect(v.payload.path).toMatch(/\S/);
      expect(v.payload.patch).toMatch(/^--- /);
      expect(v.inferred).toEqual(['patch']);
      // The same part is also the call, so the change can be drawn beside its call and result.
      const call = (e.payload.message as { content: Obj[] }).content[e.source!.part!]!;
      expect(v.payload.call_id).toBe(call.id);
    }
  });

  it('every event of a v1 kind reads, through the view, as a payload its v1 schema accepts', () => {
    let n = 0;
    for (const rel of Object.values(FILES))
      for (const e of events(load(rel))) {
        if (!isKnownKind(e.kind)) continue;
        const v = claudeCodeView.interpret(e.kind, e.payload, { seq: 0, run_id: 'run-1', source: e.source })!;
        const r = checkPayload(e.kind, 1, v.payload);
        expect(r.ok, `${rel} ${e.kind}: ${r.ok ? '' : r.message}`).toBe(true);
        n++;
      }
    expect(n).toBeGreaterThan(150);
  });

  it('a tool result keeps is_error as its status and toolUseResult beside it', () => {
    const all = Object.values(FILES).flatMap((rel) => load(rel));
    const errs = all.flatMap((x) =>
      x.events
        .filter((e) => e.kind === 'tool_returned')
        .map((e) => ({ e, b: (x.record.message as { content: Obj[] }).content[e.source!.part!]! })),
    );
    const withError = errs.find(({ b }) => b.is_error === true);
    const ok = errs.find(({ b }) => b.is_error !== true);
    expect(ok).toBeDefined();
    expect(
      claudeCodeView.interpret('tool_returned', ok!.e.payload, { seq: 0, run_id: 'r', source: ok!.e.source })!
        .payload.status,
    ).toBe('ok');
    if (withError)
      expect(
        claudeCodeView.interpret('tool_returned', withError.e.payload, {
          seq: 0,
          run_id: 'r',
          source: withError.e.source,
        })!.payload.status,
      ).toBe('error');
    // An error result, as Claude Code writes one, copied and marked at runtime.
    const rec = structuredClone(ok!.e.payload);
    (rec.message as { content: Obj[] }).content[ok!.e.source!.part!]!.is_error = true;
    const [e] = claudeCode.map(rec) as MappedEvent[];
    expect(
      claudeCodeView.interpret(e!.kind, e!.payload, { seq: 0, run_id: 'r', source: e!.source })!.payload
        .status,
    ).toBe('error');
    expect(e!.payload.toolUseResult).toEqual(ok!.e.payload.toolUseResult);
  });

  it('record types and block types never seen before are events of their own kind, as written', () => {
    const base = load(FILES.v2_1_38)[1]!.record;
    const novel = { ...base, type: 'brand-new/Thing', extraField: { deep: [1, 2] } };
    const [e] = claudeCode.map(novel) as MappedEvent[];
    expect(e!.kind).toBe('cc_brand_new_thing');
    expect(e!.payload).toBe(novel);
    const block = {
      ...base,
      type: 'assistant',
      message: {
        id: 'm',
        content: [
          { type: 'server_tool_use', id: 's1' },
          { type: 'text', text: 'hi' },
        ],
      },
    };
    expect((claudeCode.map(block) as MappedEvent[]).map((x) => x.kind)).toEqual([
      'cc_block_server_tool_use',
      'model_responded',
    ]);
    const kinds = new Set(Object.values(FILES).flatMap((rel) => events(load(rel)).map((x) => x.kind)));
    for (const k of ['cc_file_history_snapshot', 'cc_progress', 'cc_queue_operation', 'cc_system'])
      expect(kinds).toContain(k);
    // A type of 300 characters still makes a valid kind.
    expect((claudeCode.map({ ...base, type: 'x'.repeat(300) }) as MappedEvent[])[0]!.kind).toMatch(KIND_RE);
  });
});
