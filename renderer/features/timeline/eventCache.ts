import { call, type UiError } from '../../api/api';
import type { StoredEvent } from '../../api/types';

import { isGap, PAGE_SIZE, pageOf } from './pages';

export { PAGE_SIZE, pageOf };
/** Page p of a run's events, as the cache reads it. */
function readPage(runId: string, p: number) {
  const from = p * PAGE_SIZE + 1;
  return call('events.read', { run_id: runId, from, to: from + PAGE_SIZE - 1, limit: PAGE_SIZE });
}

/** Pages kept per run (LRU): 40 × 500 events, never the whole run. */
const MAX_PAGES = 40;

type PageState =
  | { status: 'loading' }
  /** `head`: the run's head when the page was read; a seq past it was not there yet, not missing. */
  | { status: 'ok'; events: StoredEvent[]; head: number }
  | { status: 'error'; error: UiError };

/** The event at seq in its page: at its index when the page has no gap before it, else searched. */
function eventIn(events: readonly StoredEvent[], seq: number): StoredEvent | undefined {
  const ev = events[(seq - 1) % PAGE_SIZE];
  return ev && ev.seq === seq ? ev : events.find((e) => e.seq === seq);
}

/**
 * Pages of one run's events, fetched on demand and evicted least-recently-used. Lives outside the
 * store on purpose: rows subscribe to their page, so a page arriving re-renders only its rows.
 */
export class EventCache {
  private readonly pages = new Map<number, PageState>();
  private readonly listeners = new Map<number, Set<() => void>>();
  private head: number;
  private generation = 0;

  constructor(
    readonly runId: string,
    head: number,
  ) {
    this.head = head;
  }

  /** The event at seq if its page is loaded; starts loading the page otherwise. */
  get(seq: number): StoredEvent | undefined {
    if (seq < 1) return undefined; // no seq: nothing to load (a view before its run has events)
    const p = pageOf(seq);
    const page = this.touch(p);
    if (!page) {
      void this.load(p);
      return undefined;
    }
    return page.status === 'ok' ? eventIn(page.events, seq) : undefined;
  }

  /** The event at seq if its page is loaded; loads nothing (a row's render reads it every time). */
  peek(seq: number): StoredEvent | undefined {
    const page = this.pages.get(pageOf(seq));
    return page?.status === 'ok' ? eventIn(page.events, seq) : undefined;
  }

  /** Whether `seq` is known to be absent: its page is loaded and holds no such event (a seq gap). */
  isMissing(seq: number): boolean {
    const page = this.pages.get(pageOf(seq));
    return page?.status === 'ok' && isGap(eventIn(page.events, seq) !== undefined, page.head, this.head, seq);
  }

  pageError(seq: number): UiError | null {
    const page = this.pages.get(pageOf(seq));
    return page?.status === 'error' ? page.error : null;
  }

  /** Resolves with the event, loading its page when needed. */
  async fetch(seq: number): Promise<StoredEvent | undefined> {
    const hit = this.get(seq);
    if (hit) return hit;
    await this.load(pageOf(seq));
    return this.peek(seq);
  }

  /** Loaded events of the pages around seq (for call_id links without a request). */
  around(seq: number): StoredEvent[] {
    const p = pageOf(seq);
    const out: StoredEvent[] = [];
    for (const q of [p - 1, p, p + 1]) {
      const page = this.pages.get(q);
      if (page?.status === 'ok') out.push(...page.events);
    }
    return out;
  }

  /**
   * The events of page p, loaded when needed; after the run grew, read again (the conversation view
   * derives its items from whole pages). null when the page could not be read.
   */
  async pageEvents(p: number, fresh = false): Promise<StoredEvent[] | null> {
    const page = this.pages.get(p);
    if (fresh || !page || page.status !== 'ok') {
      const running = this.inflight.get(p);
      if (running) await running;
      if (fresh || this.pages.get(p)?.status !== 'ok') await this.load(p);
    }
    const now = this.pages.get(p);
    return now?.status === 'ok' ? now.events : null;
  }

  get headSeq(): number {
    return this.head;
  }

  subscribe(page: number, fn: () => void): () => void {
    let set = this.listeners.get(page);
    if (!set) this.listeners.set(page, (set = new Set()));
    set.add(fn);
    return () => {
      set.delete(fn);
      if (set.size === 0) this.listeners.delete(page);
    };
  }

  /** The run grew: the page that held the old head is partial, fetch it again when shown. */
  grow(newHead: number): void {
    if (newHead <= this.head) return;
    const first = pageOf(Math.max(1, this.head));
    this.head = newHead;
    for (let p = first; p <= pageOf(newHead); p++) {
      const page = this.pages.get(p);
      if (!page) continue;
      if (page.status === 'loading' || this.inflight.has(p)) this.stale.add(p);
      else if (this.listeners.has(p)) void this.load(p);
      else this.pages.delete(p);
    }
  }

  dispose(): void {
    this.generation++;
    this.pages.clear();
    this.listeners.clear();
  }

  private touch(p: number): PageState | undefined {
    const page = this.pages.get(p);
    if (page) {
      this.pages.delete(p);
      this.pages.set(p, page);
    }
    return page;
  }

  private readonly inflight = new Map<number, Promise<void>>();
  private readonly stale = new Set<number>();

  private load(p: number): Promise<void> {
    const running = this.inflight.get(p);
    if (running) return running.then(() => this.inflight.get(p));
    const gen = this.generation;
    // A page read again (the run grew) keeps showing its old events until the new ones arrive.
    if (this.pages.get(p)?.status !== 'ok') this.pages.set(p, { status: 'loading' });
    const promise = ((p === 0 && takePressed(this.runId)) || readPage(this.runId, p)).then((r) => {
      this.inflight.delete(p);
      if (gen !== this.generation) return;
      if (this.stale.delete(p)) {
        // Important: the run grew while this page was in flight; read it again.
        void this.load(p);
        return;
      }
      this.pages.set(
        p,
        r.ok
          ? { status: 'ok', events: r.value.events, head: r.value.head_seq }
          : { status: 'error', error: r.error },
      );
      this.evict();
      this.notify(p);
    });
    this.inflight.set(p, promise);
    return promise;
  }

  private evict(): void {
    for (const key of this.pages.keys()) {
      if (this.pages.size <= MAX_PAGES) break;
      if (this.listeners.has(key)) continue; // a page on screen stays
      this.pages.delete(key);
    }
  }

  private notify(p: number): void {
    for (const fn of this.listeners.get(p) ?? []) fn();
  }
}

let current: EventCache | null = null;

/**
 * A run's first page, asked when its row is pressed: a click by hand is a press and a release
 * ~0.1 s apart, and the read goes on meanwhile instead of after the release. Taken once, by that
 * run's cache, within PRESSED_FOR_MS; a press that makes no click costs one read.
 */
let pressed: { runId: string; at: number; answer: ReturnType<typeof readPage> } | null = null;
const PRESSED_FOR_MS = 2000;

/** Asks for the run's first page now, for a click on its row that is to come (see `pressed`). */
export function prefetchFirstPage(runId: string): void {
  // The run shown has its pages, or asks for them itself.
  if (current?.runId === runId) return;
  if (pressed?.runId === runId && performance.now() - pressed.at <= PRESSED_FOR_MS) return;
  pressed = { runId, at: performance.now(), answer: readPage(runId, 0) };
}

function takePressed(runId: string): ReturnType<typeof readPage> | null {
  const p = pressed;
  if (!p || p.runId !== runId) return null;
  pressed = null;
  return performance.now() - p.at <= PRESSED_FOR_MS ? p.answer : null;
}

/** The cache of the selected run (one at a time). */
export function eventCache(runId: string, head: number): EventCache {
  if (current?.runId !== runId) {
    current?.dispose();
    current = new EventCache(runId, head);
  } else {
    current.grow(head);
  }
  return current;
}

export function currentCache(): EventCache | null {
  return current;
}
