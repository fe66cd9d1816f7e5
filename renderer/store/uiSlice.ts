import type { StateCreator } from 'zustand';
import type { AppState } from './index';

export type Overlay =
  'goto' | 'search' | 'filter' | 'tasks' | 'help' | 'export-bundle' | 'open-bundle' | null;

export interface UiSlice {
  overlay: Overlay;
  setOverlay(overlay: Overlay): void;
}

export const createUiSlice: StateCreator<AppState, [], [], UiSlice> = (set) => ({
  overlay: null,
  setOverlay: (overlay) => set({ overlay }),
});
