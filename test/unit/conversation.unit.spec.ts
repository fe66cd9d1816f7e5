import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { claudeCode } from '../../electron/ingest/formats/claude-code';
import { codex } from '../../electron/ingest/formats/codex';
import type { FormatAdapter } from '../../electron/ingest/formats/types';
import type { StoredEvent } from '../../renderer/api/types';
import { derivePage, type TreeNode } from '../../renderer/features/conversation/items';
import {
  ConversationModel,
  treeMarks,
  type ItemRow,
  type PageSource,
} from '../../renderer/features/conversation/model';
import { subagentLinks } from '../../shared/formats/claude-code';
import { PAGE_SIZE } from '../../renderer/features/timeline/pages';

type Obj = Record<string, unknown>;
const FIX = path.join(__dirname, '../fixtures');

/** A fixture file's events as the importer stores them: its adapter's mapping, one seq each. */
function eventsOf(file: string, adapter: FormatAdapter, runId: string): StoredEvent[] {
  const out: StoredEvent[] = [];
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .forEach((text, i) => {
      const mapped = adapter.map(JSON.parse(text) as never);
      for (const m of Array.isArray(mapped) ? mapped : []) {
        out.push({
          v: 1,
          seq: out.length + 1,
          run_id: runId,
          kind: m.kind,
          at: m.at ?? '',
          payload: m.payload as Obj,
          prev: null,
          hash: '',
          source: { line: i + 1, ...m.source },
        } as unknown as StoredEvent);
      }
    });
  return out;
}

/** The run's events in pages, as the event cache serves them (no server in a unit test). */
function pages(events: StoredEvent[]): PageSource {
  return {
    pageEvents: (p: number) => Promise.resolve(events.slice(p * PAGE_SIZE, (p + 1) * PAGE_SIZE)),
    subscribe: () => () => {},
  };
}

async function loaded(fmt: string, events: StoredEvent[]): Promise<ConversationModel> {
  const m = new ConversationModel('r', fmt, pages(events), events.length);
  for (let p = 0; p * PAGE_SIZE < events.length; p++) await m.ensure(p);
  return m;
}

const CC_SESSION = path.join(
  FIX,
  'claude-code/projects/-home-marco-projects-spotter-worktrees-spotter-4te/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl',
);

describe('conversation view model', () => {
  it('pairs every Claude Code tool call with its result, and links the Task call to its subagent', async () => {
    const events = eventsOf(CC_SESSION, claudeCode, 'r');
    const lines = readFileSync(CC_SESSION, 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as Obj);
    const blocks = lines.flatMap((l) => {
      const c = (l.message as Obj | undefined)?.content;
      return Array.isArray(c) ? (c as Obj[]) : [];
    });
    const calls = blocks.filter((b) => b.type === 'tool_use').map((b) => String(b.id));
    const answered = new Set(
      blocks.filter((b) => b.type === 'tool_result').map((b) => String(b.tool_use_id)),
    );
    const m = await loaded('claude_code', events);
    const callRows = m.rows().rows.filter((r): r is ItemRow => r.kind === 'item' && r.item.type === 'call');
    expect(callRows.map((r) => r.item.callId)).toEqual(calls);
    for (const r of callRows) expect(r.result !== undefined).toBe(answered.has(r.item.callId!));
    // No result is listed on its own when its call is there.
    expect(m.rows().rows.some((r) => r.kind === 'item' && r.item.type === 'result')).toBe(false);
    const task = callRows.find((r) => r.item.tool === 'Task')!;
    expect(task.agentId).toBe('aac57f5');
    // Parallel calls and their chained results are one turn, not branches.
    expect(m.rows().rows.some((r) => r.kind === 'item' && (r.branches || r.branchFrom))).toBe(false);
  });

  it('steps in the conversation’s order: a call, its result, then the next row; across pages', async () => {
    const events = eventsOf(CC_SESSION, claudeCode, 'r');
    // Pages of 500: pad the session so that its end is on the second page, not derived yet.
    const pad = Array.from({ length: PAGE_SIZE }, (_, i) => ({
      ...events[0]!,
      seq: i + 1,
      kind: 'cc_progress',
    })) as StoredEvent[];
    const all = [...pad, ...events.map((e) => ({ ...e, seq: e.seq + PAGE_SIZE }))];
    const m = new ConversationModel('r', 'claude_code', pages(all), all.length);
    const first = await m.stepFrom(1, 1);
    const row = m.rows().rows[m.rowIndexOf(first!)];
    expect(row?.kind === 'item' && row.item.type).toBe('prompt');
    // On to the first call: its result comes next, though a later call has a smaller seq.
    let seq = first!;
    let callRow: ItemRow | undefined;
    for (let i = 0; i < 20 && !callRow; i++) {
      seq = (await m.stepFrom(seq, 1))!;
      const r = m.rows().rows[m.rowIndexOf(seq)]!;
      if (r.kind === 'item' && r.item.type === 'call' && r.item.seq === seq) callRow = r;
    }
    expect(callRow?.result).toBeDefined();
    expect(await m.stepFrom(seq, 1)).toBe(callRow!.result!.seq);
    const after = (await m.stepFrom(callRow!.result!.seq, 1))!;
    expect(m.rowIndexOf(after)).toBe(m.rowIndexOf(seq) + 1);
    expect(await m.stepFrom(after, -1)).toBe(callRow!.result!.seq);
  });

  it('reads the head page once more when the run grows, not again and again', async () => {
    // A page source that behaves as the event cache does (timeline/eventCache.ts, which needs the
    // renderer's API client): each read of a page is answered a macrotask later, as a server
    // would, and then tells the page's subscribers, whoever asked for it. The conversation was
    // opened when the run had 11 events (serve still importing it); then the run grows.
    const events = eventsOf(CC_SESSION, claudeCode, 'r');
    expect(events.length).toBeGreaterThan(20);
    let head = 11;
    let reads = 0;
    const subscribers = new Map<number, Set<() => void>>();
    const read = (p: number): Promise<StoredEvent[]> =>
      new Promise((resolve) =>
        setTimeout(() => {
          reads++;
          resolve(events.slice(p * PAGE_SIZE, Math.min(head, (p + 1) * PAGE_SIZE)));
          for (const fn of subscribers.get(p) ?? []) fn();
        }, 1),
      );
    const cache: PageSource = {
      pageEvents: (p) => read(p),
      subscribe: (p, fn) => {
        const set = subscribers.get(p) ?? new Set();
        subscribers.set(p, set.add(fn));
        return () => set.delete(fn);
      },
    };
    const m = new ConversationModel('r', 'claude_code', cache, head);
    await m.ensure(0);
    expect(reads).toBe(1);
    // The run grew: the cache reads the page that held the old head again (its grow()).
    head = events.length;
    await read(0);
    // That read, and the model's fresh read of the page it made stale: then quiet. Before, each of
    // the model's own reads told it the page had changed: 76 reads in 150 ms, never quiet. Quiet is
    // 100 ms without a read (3 s at most): fixed waits of 150 and 50 ms raced a loaded machine's timers.
    let seen = -1;
    for (const end = Date.now() + 3000; seen !== reads && Date.now() < end;) {
      seen = reads;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(reads).toBeLessThanOrEqual(3);
    expect(reads).toBe(seen);
    m.dispose();
  });

  it('a step pressed while the page is still being read waits for it', async () => {
    const events = eventsOf(CC_SESSION, claudeCode, 'r');
    const slow: PageSource = {
      pageEvents: (p) =>
        new Promise((resolve) =>
          setTimeout(() => resolve(events.slice(p * PAGE_SIZE, (p + 1) * PAGE_SIZE)), 30),
        ),
      subscribe: () => () => {},
    };
    const m = new ConversationModel('r', 'claude_code', slow, events.length);
    void m.ensure(0); // the view's placeholder starts the read
    const first = await m.stepFrom(1, 1);
    expect(first).not.toBeNull();
    const row = m.rows().rows[m.rowIndexOf(first!)];
    expect(row?.kind === 'item' && row.item.type).toBe('prompt');
  });

  it('links a 1.x Task call to the sidechain it started in the same file', async () => {
    const file = path.join(
      FIX,
      'claude-code/projects/sample-project/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl',
    );
    const lines = readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as Obj);
    // The format's own reading of the links (shared/formats/claude-code.ts), by uuid.
    const links = [...subagentLinks(lines)].filter(([, v]) => v.sidechainRoot);
    expect(links.length).toBeGreaterThan(0);
    const events = eventsOf(file, claudeCode, 'r');
    const m = await loaded('claude_code', events);
    const rows = m.rows().rows.filter((r): r is ItemRow => r.kind === 'item');
    for (const [callId, { sidechainRoot }] of links) {
      const call = rows.find((r) => r.item.callId === callId && r.item.type === 'call')!;
      const root = rows.find((r) => r.item.uuid === sidechainRoot)!;
      expect(root.item.sidechain).toBe(true);
      expect(call.sidechainAt).toBe(root.item.seq);
    }
  });

  it('marks a rewind as a branch, and the message it forks from', () => {
    const n = (seq: number, uuid: string, parent: string | null, type: string): TreeNode => ({
      seq,
      uuid,
      parent,
      type,
      message: type !== 'progress',
      sidechain: false,
    });
    const { branchFrom, branches } = treeMarks([
      n(1, 'u1', null, 'user'),
      n(2, 'a1', 'u1', 'assistant'),
      n(3, 'p1', 'a1', 'progress'),
      n(4, 'u2', 'p1', 'user'), // through a progress line: a1's child
      n(5, 'a2', 'u2', 'assistant'),
      n(6, 'u2b', 'a1', 'user'), // the prompt edited: a second user child of a1
      n(7, 'a3', 'u2b', 'assistant'),
    ]);
    expect([...branchFrom]).toEqual([['u2b', 2]]);
    expect(branches.get('a1')).toEqual([4, 6]);
    expect(branches.size).toBe(1);
  });

  it('shows a Codex message once: the event_msg echo is no item', async () => {
    const file = path.join(
      FIX,
      'codex/sessions/2025/11/17/rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl',
    );
    const events = eventsOf(file, codex, 'r');
    expect(events.some((e) => e.kind === 'codex_event_user_message')).toBe(true);
    const { items } = derivePage('codex', events);
    expect(items.some((i) => i.kind.startsWith('codex_event_user_message'))).toBe(false);
    const echo = events.find((e) => e.kind === 'codex_event_user_message')!;
    const said = String(((echo.payload as Obj).payload as Obj).message).trim();
    expect(items.filter((i) => i.type === 'prompt' && i.text.trim() === said)).toHaveLength(1);
  });
});
