import { forgetDiffEvents } from '../features/diff/diffEvents';
import type { StateCreator } from 'zustand';
import { callOptional, type UiError } from '../api/api';
import type { RunsDiff } from '../api/types';
import type { AppState } from './index';

export interface DiffSlice {
  diffLeft: string | null;
  diffRight: string | null;
  diff: RunsDiff | null;
  diffError: UiError | null;
  diffLoading: boolean;
  /** Selected row index in diff.rows. */
  diffRow: number | null;
  /** Run picked as the other side of a comparison (the source of a rerun). */
  compareWith: string | null;
  openDiff(left: string, right: string): Promise<void>;
  selectDiffRow(i: number | null): void;
  setCompareWith(runId: string | null): void;
}

/**
 * The row index of the first divergence: for a replay and its source, the row of the source's seq
 * where the replay's verdict says they part (none when it found no divergence: rows that differ
 * by nature, such as ids and digests, are not one); else the first row 'runs.diff' reports.
 */
export function firstDivergenceRow(diff: RunsDiff): number | null {
  if (diff.replay) {
    const v = diff.replay;
    if (!v.first_divergence) return null;
    const seq = v.first_divergence.seq;
    const sourceLeft = v.source === diff.left.run_id;
    const i = diff.rows.findIndex((row) => {
      const at = sourceLeft ? row.left_seq : row.right_seq;
      return at !== null && seq >= at && seq < at + Math.max(1, row.count);
    });
    // A seq past the source's end (the replay went on): the first row the source lacks.
    if (i >= 0) return i;
    const extra = diff.rows.findIndex((row) => row.type === (sourceLeft ? 'only_right' : 'only_left'));
    return extra >= 0 ? extra : null;
  }
  const fd = diff.first_divergence;
  if (!fd) return null;
  const i = diff.rows.findIndex(
    (row) =>
      row.type !== 'same' &&
      ((fd.left_seq !== null && row.left_seq === fd.left_seq) ||
        (fd.right_seq !== null && row.right_seq === fd.right_seq)),
  );
  if (i >= 0) return i;
  const any = diff.rows.findIndex((r) => r.type !== 'same');
  return any >= 0 ? any : null;
}

export const createDiffSlice: StateCreator<AppState, [], [], DiffSlice> = (set, get) => ({
  diffLeft: null,
  diffRight: null,
  diff: null,
  diffError: null,
  diffLoading: false,
  diffRow: null,
  compareWith: null,
  async openDiff(left, right) {
    forgetDiffEvents();
    set({
      view: 'diff',
      diffLeft: left,
      diffRight: right,
      diff: null,
      diffError: null,
      diffLoading: true,
      diffRow: null,
      overlay: null,
    });
    const r = await callOptional('runs.diff', { left, right });
    if (get().diffLeft !== left || get().diffRight !== right) return;
    if (!r.ok) {
      set({ diffError: r.error, diffLoading: false });
      return;
    }
    set({ diff: r.value, diffLoading: false, diffRow: firstDivergenceRow(r.value) });
  },
  selectDiffRow: (diffRow) => set({ diffRow }),
  setCompareWith: (compareWith) => set({ compareWith }),
});
