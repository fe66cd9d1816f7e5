/**
 * The conversation of the selected run, one page of events (eventCache's) at a time: pages are
 * derived into items when they come into view, and rows are rebuilt from what is derived (calls
 * paired with their results and file changes by call_id, Claude Code's uuid tree checked for
 * branches). A page not derived yet is one placeholder row; the list never holds the whole run.
 */
import type { StoredEvent } from '../../api/types';
import { PAGE_SIZE, pageOf } from '../timeline/pages';
import { derivePage, type ConvItem, type DerivedPage, type TreeNode } from './items';

export interface ItemRow {
  kind: 'item';
  key: string;
  item: ConvItem;
  result?: ConvItem;
  /** The host's denial of the call (action_denied): it has no result and will have none. */
  denied?: ConvItem;
  files: ConvItem[];
  agentId?: string;
  /** Claude Code 1.x: the seq where the sidechain this Task call started begins, in this file. */
  sidechainAt?: number;
  /** Claude Code: this message does not follow the one before it; it continues from this seq. */
  branchFrom?: number;
  /** Claude Code: the conversation goes on from here in several ways (rewinds, edits): their seqs. */
  branches?: number[];
  /** Every seq the row shows (call, files, result), in order: keyboard steps stop at each. */
  seqs: number[];
}

export interface PageRow {
  kind: 'page';
  key: string;
  page: number;
  from: number;
  to: number;
}

export type Row = ItemRow | PageRow;

/** Where the model reads pages of events: the run's event cache (timeline/eventCache.ts). */
export interface PageSource {
  pageEvents(p: number, fresh?: boolean): Promise<StoredEvent[] | null>;
  subscribe(page: number, fn: () => void): () => void;
}

interface Built {
  rows: Row[];
  /** The seqs a step stops at, in the conversation's order; stopRow: the row of each. */
  order: number[];
  stopRow: number[];
  posOfSeq: Map<number, number>;
  rowOfSeq: Map<number, number>;
}

/** Index of the first element ≥ x in a sorted array. */
function lowerBoundBy(a: readonly number[], x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** How far a parent chain is walked through non-message lines (progress, hooks) to a message. */
const MAX_WALK = 1000;

export class ConversationModel {
  private readonly pages = new Map<number, DerivedPage>();
  private readonly loading = new Map<number, Promise<void>>();
  private readonly stale = new Set<number>();
  private readonly failed = new Set<number>();
  private readonly listeners = new Set<() => void>();
  private unsubscribeLast: (() => void) | null = null;
  private lastPage = -1;
  private built: (Built & { version: number }) | null = null;
  private version = 0;
  private disposed = false;

  constructor(
    readonly runId: string,
    readonly fmt: string | null,
    private readonly cache: PageSource,
    private head: number,
  ) {}

  subscribe(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  getVersion = (): number => this.version;

  /** The run grew: the pages from the old head's on are derived again. */
  grow(head: number): void {
    if (head <= this.head) return;
    const from = pageOf(Math.max(1, this.head));
    this.head = head;
    for (let p = from; p <= pageOf(head); p++) if (this.pages.has(p)) this.stale.add(p);
    this.bump();
    for (const p of [...this.stale]) void this.ensure(p);
  }

  isFailed(p: number): boolean {
    return this.failed.has(p);
  }

  /** Derives page p (when not derived, or stale); resolves when done (also when already under way). */
  ensure(p: number): Promise<void> {
    if (this.disposed || p < 0 || p > pageOf(Math.max(1, this.head))) return Promise.resolve();
    const running = this.loading.get(p);
    if (running) return running;
    if (this.pages.has(p) && !this.stale.has(p)) return Promise.resolve();
    const done = this.derive(p).finally(() => {
      this.loading.delete(p);
      this.watchLast();
      this.bump();
      if (this.stale.has(p)) void this.ensure(p);
    });
    this.loading.set(p, done);
    return done;
  }

  private async derive(p: number): Promise<void> {
    const fresh = this.stale.delete(p);
    let events = await this.cache.pageEvents(p, fresh);
    const end = Math.min(this.head, (p + 1) * PAGE_SIZE);
    // A page read while the run grew may end early: once more (a gap at a page's end reads alike).
    if (events && (events.at(-1)?.seq ?? 0) < end) events = await this.cache.pageEvents(p, true);
    if (this.disposed) return;
    if (!events) this.failed.add(p);
    else {
      this.failed.delete(p);
      this.pages.set(p, derivePage(this.fmt, events));
    }
  }

  /** Rows of what is derived, with the index of each seq's row and the seqs a step stops at. */
  rows(): Built {
    if (this.built?.version === this.version) return this.built;
    const pagesTotal = this.head > 0 ? pageOf(this.head) + 1 : 0;
    const calls = new Set<string>();
    const results = new Map<string, ConvItem>();
    const denials = new Map<string, ConvItem>();
    const invocations = new Map<string, ConvItem>();
    const files = new Map<string, ConvItem[]>();
    const agents = new Map<string, string>();
    const nodes: TreeNode[] = [];
    for (let p = 0; p < pagesTotal; p++) {
      const d = this.pages.get(p);
      if (!d) continue;
      for (const it of d.items) {
        if (!it.callId) continue;
        if (it.type === 'call') {
          // A proposal and its invocation (ProofLoop's own runs) are one call: the first draws it.
          if (calls.has(it.callId)) {
            if (!invocations.has(it.callId)) invocations.set(it.callId, it);
          } else calls.add(it.callId);
        } else if (it.type === 'result' && !results.has(it.callId)) results.set(it.callId, it);
        else if (it.type === 'note' && it.kind === 'action_denied' && !denials.has(it.callId))
          denials.set(it.callId, it);
        else if (it.type === 'file') {
          const list = files.get(it.callId);
          if (list) list.push(it);
          else files.set(it.callId, [it]);
        }
      }
      for (const [call, agent] of d.agents) agents.set(call, agent);
      nodes.push(...d.nodes);
    }
    const { branchFrom, branches } = treeMarks(nodes);
    // 1.x subagents: the sidechain whose first prompt is the Task call's prompt.
    const sideRoots = new Map<string, number>();
    for (let p = 0; p < pagesTotal; p++)
      for (const it of this.pages.get(p)?.items ?? [])
        if (it.type === 'prompt' && it.subPrompt && !sideRoots.has(it.subPrompt))
          sideRoots.set(it.subPrompt, it.seq);
    const rows: Row[] = [];
    const rowOfSeq = new Map<number, number>();
    const order: number[] = [];
    const stopRow: number[] = [];
    const posOfSeq = new Map<number, number>();
    const rowOfUuid = new Map<string, number>();
    const seenUuid = new Set<string>();
    for (let p = 0; p < pagesTotal; p++) {
      const d = this.pages.get(p);
      if (!d) {
        const from = p * PAGE_SIZE + 1;
        rows.push({
          kind: 'page',
          key: `p${p}`,
          page: p,
          from,
          to: Math.min(this.head, from + PAGE_SIZE - 1),
        });
        continue;
      }
      for (const it of d.items) {
        if ((it.type === 'result' || it.type === 'file') && it.callId && calls.has(it.callId)) continue;
        if (it.type === 'note' && it.kind === 'action_denied' && it.callId && calls.has(it.callId)) continue;
        if (it.type === 'call' && it.callId && invocations.get(it.callId)?.seq === it.seq) continue;
        const row: ItemRow = {
          kind: 'item',
          key: `s${it.seq}:${it.kind}`,
          item: it,
          files: [],
          seqs: [it.seq],
        };
        if (it.type === 'call' && it.callId) {
          row.result = results.get(it.callId);
          row.files = files.get(it.callId) ?? [];
          row.agentId = row.result?.agentId ?? agents.get(it.callId);
          if (it.subPrompt) row.sidechainAt = sideRoots.get(it.subPrompt);
          const invoked = invocations.get(it.callId);
          if (invoked && invoked.seq !== it.seq) row.seqs.push(invoked.seq);
          for (const f of row.files) row.seqs.push(f.seq);
          if (row.result) row.seqs.push(row.result.seq);
          else {
            row.denied = denials.get(it.callId);
            if (row.denied) row.seqs.push(row.denied.seq);
          }
        }
        if (it.type === 'result') row.agentId = it.agentId;
        const i = rows.length;
        rows.push(row);
        for (const s of row.seqs) {
          if (rowOfSeq.has(s)) continue;
          rowOfSeq.set(s, i);
          posOfSeq.set(s, order.length);
          order.push(s);
          stopRow.push(i);
        }
        for (const u of [it.uuid, row.result?.uuid]) if (u && !rowOfUuid.has(u)) rowOfUuid.set(u, i);
        if (it.uuid && !seenUuid.has(it.uuid)) {
          seenUuid.add(it.uuid);
          row.branchFrom = branchFrom.get(it.uuid);
        }
      }
    }
    // A point the conversation forks at: marked on the last row of its line (or of the call it answers).
    for (const [uuid, seqs] of branches) {
      let at = rowOfUuid.get(uuid);
      if (at === undefined) continue;
      while (at + 1 < rows.length) {
        const next = rows[at + 1]!;
        if (next.kind !== 'item' || next.item.uuid !== uuid) break;
        at++;
      }
      (rows[at] as ItemRow).branches = seqs;
    }
    this.built = { version: this.version, rows, order, stopRow, posOfSeq, rowOfSeq };
    return this.built;
  }

  /** The row that shows seq: the row holding it, else the last row before it. */
  rowIndexOf(seq: number): number {
    const { rows, rowOfSeq } = this.rows();
    const hit = rowOfSeq.get(seq);
    if (hit !== undefined) return hit;
    // Rows are in seq order: the last one starting at or before seq.
    let lo = 0;
    let hi = rows.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (firstSeq(rows[mid]!) <= seq) lo = mid + 1;
      else hi = mid;
    }
    return lo - 1;
  }

  /**
   * The seq a step of `delta` from seq lands on, in the conversation's order (a call, then its
   * files and its result, then the next row), deriving the pages on the way. null when none.
   */
  async stepFrom(seq: number, delta: 1 | -1): Promise<number | null> {
    for (let guard = 0; guard < 10_000; guard++) {
      const { rows, order, stopRow, posOfSeq } = this.rows();
      const at = posOfSeq.get(seq);
      let j: number;
      let from: number;
      if (at !== undefined) {
        j = at + delta;
        from = stopRow[at]!;
      } else {
        // A seq the conversation does not show (a progress line): from the row before it.
        from = this.rowIndexOf(seq);
        const k = lowerBoundBy(stopRow, from + (delta > 0 ? 1 : 0));
        j = delta > 0 ? k : k - 1;
      }
      const to = j >= 0 && j < order.length ? stopRow[j]! : delta > 0 ? rows.length : -1;
      // A page between here and there that is not derived yet may hold nearer stops.
      let gap: PageRow | undefined;
      // The seq's own page first, when it is not derived yet.
      const start = rows[from]?.kind === 'page' ? from : from + delta;
      for (let r = start; delta > 0 ? r < to : r > to; r += delta) {
        const row = rows[r];
        if (row?.kind === 'page' && !this.failed.has(row.page)) {
          gap = row;
          break;
        }
      }
      if (!gap) return order[j] ?? null;
      await this.ensure(gap.page);
      if (this.disposed) return null;
    }
    return null;
  }

  /** The next stop from seq among the rows derived, without reading pages (null: not known). */
  peekStep(seq: number, delta: 1 | -1): number | null {
    const { order, posOfSeq } = this.rows();
    const at = posOfSeq.get(seq);
    return at === undefined ? null : (order[at + delta] ?? null);
  }

  dispose(): void {
    this.disposed = true;
    this.unsubscribeLast?.();
    this.listeners.clear();
  }

  /** The page holding the head is watched: the cache reads it again as the run grows. */
  private watchLast(): void {
    const last = pageOf(Math.max(1, this.head));
    if (last === this.lastPage) return;
    this.unsubscribeLast?.();
    this.lastPage = last;
    this.unsubscribeLast = this.cache.subscribe(last, () => {
      // Important: the cache also tells of the reads this model asked for itself. Taken as news,
      // each fresh read of the page made it stale again and read it again, without end: after an
      // import grew a run whose conversation had been opened, serve answered an 830 KB page every
      // ~50 ms for as long as the page stayed open (~20 ms of serve's CPU a keyboard step).
      if (this.pages.has(last) && !this.loading.has(last)) {
        this.stale.add(last);
        void this.ensure(last);
      }
    });
  }

  private bump(): void {
    this.version++;
    for (const fn of this.listeners) fn();
  }
}

const firstSeq = (r: Row): number => (r.kind === 'item' ? r.item.seq : r.from);

/**
 * Claude Code's tree over the derived lines. A message whose nearest message ancestor already has a
 * child of the same type (a second user message under one reply: an edited prompt; a second reply
 * to one message: a regeneration, a rewind) starts a branch; the ancestor is a fork. Children of
 * different types are the normal run of a turn (parallel tool calls, then their results), not a
 * branch. Iterative, walks bounded.
 */
export function treeMarks(nodes: readonly TreeNode[]): {
  branchFrom: Map<string, number>;
  branches: Map<string, number[]>;
} {
  const byUuid = new Map<string, TreeNode>();
  for (const n of nodes) byUuid.set(n.uuid, n);
  const ancestor = (n: TreeNode): TreeNode | null => {
    let cur = n.parent === null ? undefined : byUuid.get(n.parent);
    for (let k = 0; cur && k < MAX_WALK; k++) {
      if (cur.message) return cur;
      cur = cur.parent === null ? undefined : byUuid.get(cur.parent);
    }
    return null;
  };
  const branchFrom = new Map<string, number>();
  const groups = new Map<string, { at: string; seqs: number[] }>();
  for (const n of nodes) {
    if (!n.message) continue;
    const a = ancestor(n);
    if (!a) continue;
    const key = `${a.uuid}\u0000${n.type}`;
    const g = groups.get(key);
    if (g) {
      g.seqs.push(n.seq);
      branchFrom.set(n.uuid, a.seq);
    } else groups.set(key, { at: a.uuid, seqs: [n.seq] });
  }
  const branches = new Map<string, number[]>();
  for (const g of groups.values())
    if (g.seqs.length > 1) branches.set(g.at, [...(branches.get(g.at) ?? []), ...g.seqs]);
  return { branchFrom, branches };
}
