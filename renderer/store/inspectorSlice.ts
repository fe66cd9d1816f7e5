import type { StateCreator } from 'zustand';
import { callOptional, type UiError } from '../api/api';
import type { StateAt, StateChanges } from '../api/types';
import { currentCache } from '../features/timeline/eventCache';
import type { AppState } from './index';
import { shareEqual } from './shareEqual';

export interface InspectorSlice {
  /** The state at `stateSeq` of `stateRun`: may lag the selected seq while a request is in flight. */
  stateAt: StateAt | null;
  stateRun: string | null;
  stateError: UiError | null;
  changes: StateChanges | null;
  changesError: UiError | null;
  requestState(): void;
}

export const createInspectorSlice: StateCreator<AppState, [], [], InspectorSlice> = (set, get) => {
  // One request pair in flight; while keys are held, only the newest seq is fetched next.
  let busy = false;
  let lastKey = '';

  async function pump(): Promise<void> {
    if (busy) return;
    busy = true;
    try {
      for (;;) {
        const { runId, seq } = get();
        const key = `${runId}\u0000${seq}`;
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
        const [at, ch] = await Promise.all([
          callOptional('state.at', { run_id: runId, seq }),
          callOptional('state.changes', { run_id: runId, seq }),
        ]);
        if (get().runId !== runId) continue;
        set({
          stateRun: runId,
          stateAt: at.ok
            ? { ...at.value, state: shareEqual(get().stateAt?.state, at.value.state) }
            : get().stateAt,
          stateError: at.ok ? null : at.error,
          changes: ch.ok ? ch.value : null,
          changesError: ch.ok ? null : ch.error,
        });
      }
    } finally {
      busy = false;
    }
  }

  return {
    stateAt: null,
    stateRun: null,
    stateError: null,
    changes: null,
    changesError: null,
    requestState() {
      const { runId, stateRun } = get();
      if (runId !== stateRun) {
        lastKey = '';
        set({ stateAt: null, stateRun: runId, changes: null, stateError: null, changesError: null });
      }
      void pump();
    },
  };
};
