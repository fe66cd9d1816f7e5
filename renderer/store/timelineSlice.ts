import type { StateCreator } from 'zustand';
import { call, type UiError } from '../api/api';
import type { Finding } from '../api/types';
import { eventCache } from '../features/timeline/eventCache';
import { NOTABLE_KINDS } from '../ui/kinds';
import type { AppState } from './index';
import { runSummaryOf } from './runsSlice';
import { throttled } from './throttle';

export interface Marker {
  seq: number;
  kind: string;
}

export interface FilteredSeqs {
  kinds: string[];
  seqs: number[];
  capped: boolean;
  loading: boolean;
  error: UiError | null;
}

export interface TimelineSlice {
  view: 'home' | 'run' | 'diff';
  runId: string | null;
  /** Head seq of the selected run (its event count for a gapless run). */
  head: number;
  /**
   * Selected seq; 0 before a run has events. Views show `viewSeq`, which follows this one together
   * with the state at it (inspectorSlice).
   */
  seq: number;
  follow: boolean;
  filter: FilteredSeqs | null;
  markers: Marker[];
  markersCapped: boolean;
  findings: Finding[];
  findingsError: UiError | null;
  timelineError: UiError | null;
  goHome(): void;
  selectRun(runId: string, seq?: number | null): void;
  /** The view of the run being opened, at once, without waiting for its first events. */
  showRun(): void;
  syncSelectedRun(): void;
  setSeq(seq: number, opts?: { keepFollow?: boolean }): void;
  step(delta: number): void;
  jumpNotable(dir: 1 | -1): Promise<void>;
  jumpEdge(edge: 'first' | 'last'): void;
  setFollow(follow: boolean): void;
  setKindFilter(kinds: string[]): Promise<void>;
  onAppended(runId: string, fromSeq: number, toSeq: number): void;
  reloadFindings(): Promise<void>;
}

/** The selected run's data, empty: where a run starts when it is shown, and what going home leaves. */
const NO_RUN_DATA = {
  filter: null,
  markers: [],
  markersCapped: false,
  findings: [],
  findingsError: null,
  timelineError: null,
} satisfies Partial<TimelineSlice>;

const MARKER_LIMIT = 5000;
/** How long a run opened from the list waits for its first events before its view is drawn. */
const FIRST_PAGE_WAIT_MS = 300;
/** How often a live run's appends reach the timeline (see applyAppendedSoon). */
const APPEND_EVERY_MS = 100;
const FILTER_LIMIT = 20_000;

/** Index of the first element ≥ x in a sorted array. */
export function lowerBound(a: readonly number[], x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export const createTimelineSlice: StateCreator<AppState, [], [], TimelineSlice> = (set, get) => {
  let selectToken = 0;
  /**
   * A seq asked for (a link, the URL) beyond the run's head, as when a page opens a session that
   * is still being imported: the selection stays on the newest event until that seq arrives, then
   * takes it, once. Any other move of the selection forgets it.
   */
  let awaited: { runId: string; seq: number } | null = null;

  async function loadMarkers(runId: string, from?: number, to?: number) {
    const r = await call('events.read', {
      run_id: runId,
      kinds: NOTABLE_KINDS,
      from,
      to,
      limit: MARKER_LIMIT,
    });
    if (!r.ok || get().runId !== runId) return;
    const found = r.value.events.map((e) => ({ seq: e.seq, kind: e.kind }));
    if (from === undefined) set({ markers: found, markersCapped: found.length >= MARKER_LIMIT });
    else if (found.length) {
      const known = new Set(get().markers.map((m) => m.seq));
      set({ markers: [...get().markers, ...found.filter((m) => !known.has(m.seq))] });
    }
  }

  /**
   * Appends to the shown run, taken at once and then at most every APPEND_EVERY_MS: a live run
   * pushes at every append (~30 a second), and each push re-rendered the timeline and asked for
   * the new range's markers (and a filter's seqs again) while the state pane waited for its turn
   * (bench/live-state.ts).
   */
  let appended: { runId: string; from: number; to: number } | null = null;
  const applyAppendedSoon = throttled(() => {
    const a = appended;
    appended = null;
    if (!a || a.runId !== get().runId) return;
    const { runId } = a;
    const head = Math.max(get().head, a.to);
    if (head === get().head) return;
    eventCache(runId, head);
    const wasEmpty = get().seq === 0;
    set({ head });
    void loadMarkers(runId, a.from, a.to);
    const filter = get().filter;
    if (filter) void get().setKindFilter(filter.kinds);
    if (awaited?.runId === runId) get().setSeq(awaited.seq);
    else if (get().follow) get().setSeq(head, { keepFollow: true });
    else if (wasEmpty) get().setSeq(1);
  }, APPEND_EVERY_MS);

  return {
    view: 'home',
    runId: null,
    head: 0,
    seq: 0,
    follow: false,
    ...NO_RUN_DATA,

    goHome: () => set({ view: 'home', runId: null, seq: 0, viewSeq: 0, head: 0, ...NO_RUN_DATA }),

    showRun() {
      if (get().view === 'home' && get().runId) set({ view: 'run' });
    },

    selectRun(runId, seq) {
      const token = ++selectToken;
      const known = runSummaryOf(get(), runId);
      const head = known?.head_seq ?? 0;
      awaited = seq != null && seq > head ? { runId, seq } : null;
      const wanted = seq ?? (head > 0 ? 1 : 0);
      const cache = eventCache(runId, head);
      const first = Math.min(wanted, head || wanted);
      // From the list, the run's view is drawn once with its first events, not empty and then again
      // when they arrive: their page is read first, for at most FIRST_PAGE_WAIT_MS.
      const fromHome = get().view === 'home' && first > 0 && !cache.peek(first);
      if (fromHome)
        void Promise.race([cache.fetch(first), new Promise((r) => setTimeout(r, FIRST_PAGE_WAIT_MS))]).then(
          () => {
            if (token === selectToken && get().runId === runId) set({ view: 'run' });
          },
        );
      set({
        view: fromHome ? 'home' : 'run',
        runId,
        head,
        seq: first,
        viewSeq: first,
        follow: known?.status === 'running' && seq == null,
        ...NO_RUN_DATA,
        diffRow: null,
      });
      get().requestState();
      // The summary may be stale or missing (a run made a moment ago): ask for the run itself.
      void call('run.get', { run_id: runId }).then((r) => {
        if (token !== selectToken) return;
        if (!r.ok) {
          set({ timelineError: r.error });
          return;
        }
        const h = Math.max(get().head, r.value.head_seq);
        eventCache(runId, h);
        if (awaited && awaited.seq <= h) awaited = null;
        const cur = get().seq;
        set({ head: h, seq: cur === 0 && h > 0 ? (seq ?? 1) : Math.min(cur, h) || cur });
        if (get().follow && h > 0) get().setSeq(h, { keepFollow: true });
        else get().requestState();
      });
      void loadMarkers(runId);
      void get().reloadFindings();
    },

    syncSelectedRun() {
      const { runId } = get();
      const r = runSummaryOf(get(), runId);
      if (!runId || !r) return;
      if (r.head_seq > get().head) get().onAppended(runId, get().head + 1, r.head_seq);
      if (r.findings !== get().findings.length) void get().reloadFindings();
    },

    setSeq(seq, opts) {
      const { head, runId } = get();
      if (!runId || head === 0) return;
      const s = Math.max(1, Math.min(head, Math.round(seq)));
      awaited = Math.round(seq) > head ? { runId, seq: Math.round(seq) } : null;
      const follow = opts?.keepFollow ? get().follow : s === head && get().follow;
      if (s !== get().seq || follow !== get().follow) set({ seq: s, follow });
      get().requestState();
    },

    step(delta) {
      const { filter, seq } = get();
      if (filter && filter.seqs.length) {
        const i = lowerBound(filter.seqs, seq);
        const at = filter.seqs[i] === seq ? i : delta > 0 ? i - 1 : i;
        const next = filter.seqs[Math.max(0, Math.min(filter.seqs.length - 1, at + delta))];
        if (next !== undefined) get().setSeq(next);
        return;
      }
      get().setSeq(seq + delta);
    },

    async jumpNotable(dir) {
      const { runId, seq, markers, markersCapped } = get();
      if (!runId) return;
      const sorted = markers.map((m) => m.seq).sort((a, b) => a - b);
      if (dir > 0) {
        const i = lowerBound(sorted, seq + 1);
        if (sorted[i] !== undefined) return get().setSeq(sorted[i]!);
        if (!markersCapped) return;
        const r = await call('events.read', { run_id: runId, kinds: NOTABLE_KINDS, from: seq + 1, limit: 1 });
        if (r.ok && r.value.events[0] && get().runId === runId) get().setSeq(r.value.events[0].seq);
        return;
      }
      const i = lowerBound(sorted, seq) - 1;
      if (i >= 0) get().setSeq(sorted[i]!);
    },

    jumpEdge(edge) {
      const { filter, head } = get();
      if (filter && filter.seqs.length)
        get().setSeq(edge === 'first' ? filter.seqs[0]! : filter.seqs.at(-1)!);
      else get().setSeq(edge === 'first' ? 1 : head);
    },

    setFollow(follow) {
      set({ follow });
      if (follow && get().head > 0) get().setSeq(get().head, { keepFollow: true });
    },

    async setKindFilter(kinds) {
      const { runId } = get();
      if (!runId) return;
      if (kinds.length === 0) {
        set({ filter: null });
        return;
      }
      set({ filter: { kinds, seqs: [], capped: false, loading: true, error: null } });
      const r = await call('events.read', { run_id: runId, kinds, limit: FILTER_LIMIT });
      if (get().runId !== runId || get().filter?.kinds !== kinds) return;
      if (!r.ok) {
        set({ filter: { kinds, seqs: [], capped: false, loading: false, error: r.error } });
        return;
      }
      const seqs = r.value.events.map((e) => e.seq);
      set({ filter: { kinds, seqs, capped: seqs.length >= FILTER_LIMIT, loading: false, error: null } });
      const cur = get().seq;
      if (seqs.length && !seqs.includes(cur))
        get().setSeq(seqs[Math.min(lowerBound(seqs, cur), seqs.length - 1)]!);
    },

    onAppended(runId, fromSeq, toSeq) {
      if (runId !== get().runId) return;
      appended =
        appended?.runId === runId
          ? { runId, from: Math.min(appended.from, fromSeq), to: Math.max(appended.to, toSeq) }
          : { runId, from: fromSeq, to: toSeq };
      applyAppendedSoon();
    },

    async reloadFindings() {
      const { runId } = get();
      if (!runId) return;
      const r = await call('run.findings', { run_id: runId });
      if (get().runId !== runId) return;
      if (r.ok) set({ findings: r.value, findingsError: null });
      else set({ findingsError: r.error });
    },
  };
};
