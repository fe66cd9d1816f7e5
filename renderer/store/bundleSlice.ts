import type { StateCreator } from 'zustand';
import { callOptional, type UiError } from '../api/api';
import type { ResultOf } from '../../shared/api/contract';
import type { AppState } from './index';

export type BundleProfile = 'share' | 'credentials';
export type BundlePreview = ResultOf<'bundle.preview'>;
export type BundleExport = ResultOf<'bundle.export'>;
export type BundleVerdict = ResultOf<'bundle.verify'>;

export interface ExportDraft {
  runIds: string[];
  profile: BundleProfile;
  sign: boolean;
  /** A name relative to the open folder; the service refuses anything outside it. */
  out: string;
  /** Once the user typed a name, picking other runs no longer renames the file. */
  outEdited: boolean;
  /** Replace an existing file of that name. */
  force: boolean;
}

interface Pending<T> {
  value: T | null;
  error: UiError | null;
  busy: boolean;
}

const idle = <T>(): Pending<T> => ({ value: null, error: null, busy: false });

export interface BundleSlice {
  /** The export being prepared; kept while the dialog is hidden to look at a seq. */
  exportDraft: ExportDraft | null;
  /** The export dialog is put aside (not discarded) while the user looks at a seq of its preview. */
  exportAside: boolean;
  exportPreview: Pending<BundlePreview> & { key: string };
  exportResult: Pending<BundleExport>;
  exportVerdict: Pending<BundleVerdict>;
  openBundleState: Pending<ResultOf<'bundle.open'>> & { file: string };
  /** Opens the export dialog with `runId` (or the selected run) preselected. */
  openExportDialog(runId?: string | null): void;
  /** Shows the export dialog again after looking at a seq, with the same choices. */
  resumeExport(): void;
  discardExport(): void;
  updateExportDraft(patch: Partial<ExportDraft>): void;
  loadExportPreview(): Promise<void>;
  runExport(): Promise<void>;
  verifyExport(): Promise<void>;
  /** Leaves the dialog (kept in the store) to show `seq` of `runId` in the timeline. */
  showSeqFromExport(runId: string, seq: number): void;
  openOpenBundleDialog(file?: string): void;
  openBundle(file: string): Promise<boolean>;
}

/** A file name from a run id: `<run_id>.bundle.zip`, with characters a file system may refuse replaced. */
export function defaultBundleName(runIds: readonly string[]): string {
  const first = (runIds[0] ?? 'runs').replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^\.+/, '') || 'runs';
  return runIds.length > 1 ? `${first}+${runIds.length - 1}.bundle.zip` : `${first}.bundle.zip`;
}

export const previewKey = (d: ExportDraft): string => `${d.profile}\n${[...d.runIds].sort().join('\n')}`;

export const createBundleSlice: StateCreator<AppState, [], [], BundleSlice> = (set, get) => ({
  exportDraft: null,
  exportAside: false,
  exportPreview: { ...idle<BundlePreview>(), key: '' },
  exportResult: idle(),
  exportVerdict: idle(),
  openBundleState: { ...idle<ResultOf<'bundle.open'>>(), file: '' },

  openExportDialog(runId) {
    const id = runId ?? (get().view === 'run' ? get().runId : null);
    const draft = get().exportDraft;
    // Reopening on the same run keeps what was chosen; another run starts afresh.
    if (!draft || (id && !draft.runIds.includes(id)) || get().exportResult.value) {
      const runIds = id ? [id] : [];
      set({
        exportDraft: {
          runIds,
          profile: 'share',
          sign: false,
          out: defaultBundleName(runIds),
          outEdited: false,
          force: false,
        },
        exportPreview: { ...idle<BundlePreview>(), key: '' },
        exportResult: idle(),
        exportVerdict: idle(),
      });
    }
    set({ exportAside: false });
    get().setOverlay('export-bundle');
  },

  resumeExport() {
    set({ exportAside: false });
    if (get().exportDraft) get().setOverlay('export-bundle');
  },

  discardExport() {
    set({ exportDraft: null, exportAside: false, exportResult: idle(), exportVerdict: idle() });
    if (get().overlay === 'export-bundle') get().setOverlay(null);
  },

  updateExportDraft(patch) {
    const d = get().exportDraft;
    if (!d) return;
    const next = { ...d, ...patch };
    if (patch.out !== undefined) next.outEdited = true;
    if (patch.runIds && !next.outEdited) next.out = defaultBundleName(next.runIds);
    set({
      exportDraft: next,
      exportResult: { ...get().exportResult, value: null, error: null },
      exportVerdict: idle(),
    });
  },

  async loadExportPreview() {
    const d = get().exportDraft;
    if (!d) return;
    const key = previewKey(d);
    if (d.runIds.length === 0) {
      set({ exportPreview: { ...idle<BundlePreview>(), key } });
      return;
    }
    set({ exportPreview: { ...get().exportPreview, key, busy: true, error: null } });
    const r = await callOptional('bundle.preview', { run_ids: d.runIds, profile: d.profile });
    if (get().exportPreview.key !== key) return;
    set({
      exportPreview: r.ok
        ? { value: r.value, error: null, busy: false, key }
        : { value: null, error: r.error, busy: false, key },
    });
  },

  async runExport() {
    const d = get().exportDraft;
    if (!d || d.runIds.length === 0 || get().exportResult.busy) return;
    set({ exportResult: { value: null, error: null, busy: true }, exportVerdict: idle() });
    const r = await callOptional('bundle.export', {
      run_ids: d.runIds,
      out: d.out.trim(),
      profile: d.profile,
      sign: d.sign,
      force: d.force,
    });
    if (get().exportDraft !== d) return;
    set({
      exportResult: r.ok
        ? { value: r.value, error: null, busy: false }
        : { value: null, error: r.error, busy: false },
    });
  },

  async verifyExport() {
    const file = get().exportResult.value?.file;
    if (!file) return;
    set({ exportVerdict: { value: null, error: null, busy: true } });
    const r = await callOptional('bundle.verify', { file });
    if (get().exportResult.value?.file !== file) return;
    set({
      exportVerdict: r.ok
        ? { value: r.value, error: null, busy: false }
        : { value: null, error: r.error, busy: false },
    });
  },

  showSeqFromExport(runId, seq) {
    set({ exportAside: true });
    get().setOverlay(null);
    if (get().view === 'run' && get().runId === runId) get().setSeq(seq);
    else get().selectRun(runId, seq);
  },

  openOpenBundleDialog(file) {
    set({
      openBundleState: {
        ...idle<ResultOf<'bundle.open'>>(),
        file: file ?? get().openBundleState.file,
      },
    });
    get().setOverlay('open-bundle');
  },

  async openBundle(file) {
    const f = file.trim();
    if (!f || get().openBundleState.busy) return false;
    set({ openBundleState: { value: null, error: null, busy: true, file: f } });
    const r = await callOptional('bundle.open', { file: f });
    if (!r.ok) {
      set({ openBundleState: { value: null, error: r.error, busy: false, file: f } });
      return false;
    }
    set({ openBundleState: { value: r.value, error: null, busy: false, file: f } });
    await get().loadRuns();
    const first = r.value.run_ids[0];
    if (first) get().selectRun(first);
    return true;
  },
});
