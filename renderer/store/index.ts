import { create } from 'zustand';
import { createBundleSlice, type BundleSlice } from './bundleSlice';
import { createDiffSlice, type DiffSlice } from './diffSlice';
import { createInspectorSlice, type InspectorSlice } from './inspectorSlice';
import { createRunsSlice, type RunsSlice } from './runsSlice';
import { createTasksSlice, type TasksSlice } from './tasksSlice';
import { createTimelineSlice, type TimelineSlice } from './timelineSlice';
import { createUiSlice, type UiSlice } from './uiSlice';

export type AppState = RunsSlice &
  TimelineSlice &
  InspectorSlice &
  DiffSlice &
  TasksSlice &
  UiSlice &
  BundleSlice;

/** The one store; components read it through narrow selectors (`useApp((s) => s.seq)`). */
export const useApp = create<AppState>()((...a) => ({
  ...createRunsSlice(...a),
  ...createTimelineSlice(...a),
  ...createInspectorSlice(...a),
  ...createDiffSlice(...a),
  ...createTasksSlice(...a),
  ...createUiSlice(...a),
  ...createBundleSlice(...a),
}));
