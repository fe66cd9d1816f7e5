import type { StateCreator } from 'zustand';
import { callOptional, type UiError, type UiResult } from '../api/api';
import type { StateAt, StateChanges } from '../api/types';
import { currentCache } from '../features/timeline/eventCache';
import type { AppState } from './index';
import { shareEqual } from './shareEqual';
import { afterPaint } from '../ui/afterPaint';
import { changes as stateChanges } from '../../shared/state/changes';

/**
 * How long the view waits for the state of a new seq before it moves without it (the state panel
 * then says "updating…"). The state of a seq usually arrives in a few milliseconds: waiting for it
 * paints the step once (row highlight, payload and state in one commit) instead of twice.
 */
export const VIEW_WAIT_MS = 100;

export interface InspectorSlice {
  /**
   * The seq the timeline highlight, the seq indicator, the scrubber thumb and the payload and state
   * panels show. It follows `seq` (the selection, updated at once by every key) together with the
   * state at that seq, in one store update, or after VIEW_WAIT_MS when the state is slow.
   */
  viewSeq: number;
  /** The state at `stateSeq` of `stateRun`: may lag the selected seq while a request is in flight. */
  stateAt: StateAt | null;
  stateRun: string | null;
  stateError: UiError | null;
  changes: StateChanges | null;
  changesError: UiError | null;
  requestState(): void;
}

/**
 * Where a step from seq goes when it is not seq ± 1: the conversation view steps over the events
 * it does not show. The state asked for ahead is that seq's, not the next one's.
 */
let stepHint: ((seq: number, dir: 1 | -1) => number | null) | null = null;

export function setStepHint(fn: typeof stepHint): void {
  stepHint = fn;
}

/** The key of one run's state at one seq (requests in flight and asked for ahead). */
const stateKey = (runId: string | null, seq: number) => `${runId}\u0000${seq}`;

export const createInspectorSlice: StateCreator<AppState, [], [], InspectorSlice> = (set, get) => {
  // One request pair in flight; while keys are held, only the newest seq is fetched next.
  let busy = false;
  let lastKey = '';
  let waitTimer: ReturnType<typeof setTimeout> | null = null;

  function stopWaiting() {
    if (waitTimer !== null) clearTimeout(waitTimer);
    waitTimer = null;
  }

  /** Moves the view to the selection after VIEW_WAIT_MS unless its state arrives first. */
  function waitForState() {
    stopWaiting();
    if (get().viewSeq === get().seq) return;
    waitTimer = setTimeout(() => {
      waitTimer = null;
      const { seq, viewSeq } = get();
      if (viewSeq !== seq) set({ viewSeq: seq });
    }, VIEW_WAIT_MS);
  }

  type Loaded = { at: UiResult<StateAt>; ch: UiResult<StateChanges> | null };
  // States asked for ahead of the selection (the next seq in the stepping direction), used once.
  const ahead = new Map<string, Promise<Loaded>>();

  function request(runId: string, seq: number, withChanges: boolean): Promise<Loaded> {
    return Promise.all([
      callOptional('state.at', { run_id: runId, seq }),
      withChanges ? callOptional('state.changes', { run_id: runId, seq }) : null,
    ]).then(([at, ch]) => ({ at, ch }));
  }

  function load(runId: string, seq: number, withChanges: boolean): Promise<Loaded> {
    const key = stateKey(runId, seq);
    const early = ahead.get(key);
    ahead.delete(key);
    // An early answer that failed is asked for again (it may have been a passing error).
    return early
      ? early.then((r) => (r.at.ok ? r : request(runId, seq, withChanges)))
      : request(runId, seq, withChanges);
  }

  function prefetch(runId: string, seq: number, withChanges: boolean): void {
    const key = stateKey(runId, seq);
    if (seq < 1 || seq > get().head || ahead.has(key)) return;
    ahead.set(key, request(runId, seq, withChanges));
    while (ahead.size > 2) ahead.delete(ahead.keys().next().value!);
    // The event's page too, when the next seq starts one (a no-op when it is loaded).
    const cache = currentCache();
    if (cache?.runId === runId) cache.get(seq);
  }

  async function pump(): Promise<void> {
    if (busy) return;
    busy = true;
    try {
      for (;;) {
        const { runId, seq, viewSeq: viewBefore } = get();
        const key = stateKey(runId, seq);
        if (!runId || seq < 1 || key === lastKey) break;
        lastKey = key;
        // Rows first: the service answers in order, and the first state of a big run can take
        // seconds to fold; asking for the event's page before the state keeps the timeline live.
        const cache = currentCache();
        if (cache?.runId === runId && !cache.peek(seq)) {
          await cache.fetch(seq);
          if (get().runId !== runId || get().seq !== seq) {
            lastKey = '';
            continue;
          }
        }
        // A step forward from the state on show needs one request, not two: what changed at seq is
        // the state at seq − 1 (on show) against the state at seq, the same diff the service makes
        // for 'state.changes' (shared/state/changes.ts). Other moves ask the service for both.
        const shown = get();
        const before =
          shown.stateRun === runId && shown.stateAt?.seq === seq - 1 ? shown.stateAt.state : undefined;
        const kind = before === undefined ? undefined : cache?.peek(seq)?.kind;
        const loaded = await load(runId, seq, kind === undefined);
        const at = loaded.at;
        const ch =
          loaded.ch ??
          (kind === undefined ? await callOptional('state.changes', { run_id: runId, seq }) : null);
        const now = get();
        if (now.runId !== runId) continue;
        const state = at.ok ? shareEqual(now.stateAt?.state, at.value.state) : undefined;
        const changes: Pick<InspectorSlice, 'changes' | 'changesError'> = ch
          ? { changes: ch.ok ? ch.value : null, changesError: ch.ok ? null : ch.error }
          : {
              changes:
                state && kind && at.ok && at.value.seq === seq
                  ? { seq, kind, changes: stateChanges(before, state) }
                  : null,
              changesError: null,
            };
        // The view moves to this seq with its state in the same update (one commit, one paint),
        // unless the wait ran out meanwhile and the view already shows a later selection.
        const viewSeq = now.seq === seq || now.viewSeq === viewBefore ? seq : now.viewSeq;
        if (viewSeq === now.seq) stopWaiting();
        set({
          viewSeq,
          stateRun: runId,
          stateAt: at.ok && state ? { ...at.value, state } : now.stateAt,
          stateError: at.ok ? null : at.error,
          ...changes,
        });
        // Stepping goes on the way it went: ask for the next seq's state now, so the next key
        // finds it here and paints at once. Not while keys are held (the loop fetches the newest).
        // After the frame that paints this step, not before it (a request costs the main thread
        // a millisecond or so).
        if (at.ok && viewSeq === seq && get().seq === seq) {
          const dir = seq < viewBefore ? -1 : 1;
          afterPaint(() => {
            if (get().runId !== runId || get().seq !== seq) return;
            const next = stepHint?.(seq, dir) ?? seq + dir;
            // A step of more than one seq cannot diff against the state on show: ask for both.
            prefetch(runId, next, dir < 0 || next !== seq + 1);
          });
        }
      }
    } finally {
      busy = false;
    }
  }

  return {
    viewSeq: 0,
    stateAt: null,
    stateRun: null,
    stateError: null,
    changes: null,
    changesError: null,
    requestState() {
      const { runId, stateRun, seq } = get();
      if (runId !== stateRun) {
        lastKey = '';
        ahead.clear();
        set({
          viewSeq: seq,
          stateAt: null,
          stateRun: runId,
          changes: null,
          stateError: null,
          changesError: null,
        });
      }
      waitForState();
      void pump();
    },
  };
};
