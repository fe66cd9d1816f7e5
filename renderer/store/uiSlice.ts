import type { StateCreator } from 'zustand';
import type { AppState } from './index';

export type Overlay =
  'goto' | 'search' | 'filter' | 'tasks' | 'help' | 'export-bundle' | 'open-bundle' | null;

/** What the run view's left pane shows; null: the run's format decides (sessions: conversation). */
export type RunTab = 'timeline' | 'conversation';

export interface UiSlice {
  overlay: Overlay;
  setOverlay(overlay: Overlay): void;
  runTab: RunTab | null;
  setRunTab(tab: RunTab): void;
}

export const createUiSlice: StateCreator<AppState, [], [], UiSlice> = (set) => ({
  overlay: null,
  setOverlay: (overlay) => set({ overlay }),
  runTab: null,
  setRunTab: (runTab) => set({ runTab }),
});
