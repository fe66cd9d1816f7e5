import type { StateCreator } from 'zustand';
import type { AppState } from './index';

export type Overlay =
  'goto' | 'search' | 'filter' | 'tasks' | 'help' | 'export-bundle' | 'open-bundle' | null;

/** What the run view's left pane shows; null: the run's format decides (sessions: conversation, OTLP: spans). */
export type RunTab = 'timeline' | 'conversation' | 'spans';

export interface UiSlice {
  overlay: Overlay;
  setOverlay(overlay: Overlay): void;
  runTab: RunTab | null;
  setRunTab(tab: RunTab): void;
  /** The payload search's hits in the run on screen (marked on the scrubber, highlighted in the payload). */
  searchHits: SearchHits | null;
  setSearchHits(hits: SearchHits | null): void;
}

export interface SearchHits {
  run_id: string;
  text: string;
  seqs: number[];
  /** The search stopped at its limit: more seqs match. */
  capped: boolean;
}

export const createUiSlice: StateCreator<AppState, [], [], UiSlice> = (set) => ({
  overlay: null,
  setOverlay: (overlay) => set({ overlay }),
  runTab: null,
  setRunTab: (runTab) => set({ runTab }),
  searchHits: null,
  setSearchHits: (searchHits) => set({ searchHits }),
});
