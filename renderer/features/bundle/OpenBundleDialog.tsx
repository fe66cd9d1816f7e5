import { useCallback, useEffect, useState } from 'react';
import { useApp } from '../../store';
import { ErrorBox } from '../../ui/ErrorBox';

/** Escape closes a dialog wherever the focus is. */
export function useEscape(fn: () => void): void {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') fn();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [fn]);
}

/**
 * Open a bundle (read-only) by its path inside the open folder. Web mode has no file chooser, and
 * the API only reads inside the folder, so a typed relative path it is.
 */
export function OpenBundleDialog() {
  const st = useApp((s) => s.openBundleState);
  const openBundle = useApp((s) => s.openBundle);
  const close = useApp((s) => s.setOverlay);
  const folder = useApp((s) => s.folder?.folder ?? '');
  const [file, setFile] = useState(st.file);
  useEscape(useCallback(() => close(null), [close]));
  return (
    <div className="modal-backdrop" onClick={() => close(null)}>
      <div
        className="modal"
        role="dialog"
        aria-label="Open bundle"
        data-testid="open-bundle-dialog"
        onClick={(e) => e.stopPropagation()}
      >
        <div className="popover-title">
          Open audit bundle
          <button type="button" className="btn ghost small" onClick={() => close(null)} aria-label="Close">
            ✕
          </button>
        </div>
        <form
          className="task-form"
          onSubmit={async (e) => {
            e.preventDefault();
            if (await openBundle(file)) close(null);
          }}
        >
          <label>
            Bundle file, relative to the open folder
            <input
              className="input mono"
              value={file}
              autoFocus
              spellCheck={false}
              placeholder="run-1.bundle.zip"
              onChange={(e) => setFile(e.target.value)}
              data-testid="open-bundle-path"
            />
            <span className="dim hint mono" title={folder}>
              in {folder}
            </span>
          </label>
          <p className="dim hint">
            The bundle is verified, then its runs join the list as read-only <b>bundle</b> runs with the
            result on top. A bundle that fails verification still opens, so you can see where.
          </p>
          {st.error && <ErrorBox error={st.error} what="Opening the bundle" />}
          <div className="row-gap">
            <button
              type="submit"
              className="btn primary"
              disabled={st.busy || !file.trim()}
              data-testid="open-bundle-submit"
            >
              {st.busy ? 'Verifying…' : 'Open'}
            </button>
            <button type="button" className="btn" onClick={() => close(null)}>
              Cancel
            </button>
          </div>
        </form>
      </div>
    </div>
  );
}

/** While the export dialog is put aside to look at a seq: the way back to it. */
export function ExportResumePill() {
  const draft = useApp((s) => s.exportDraft);
  const aside = useApp((s) => s.exportAside);
  const overlay = useApp((s) => s.overlay);
  const resume = useApp((s) => s.resumeExport);
  const discard = useApp((s) => s.discardExport);
  if (!draft || !aside || overlay === 'export-bundle') return null;
  return (
    <div className="resume-pill" data-testid="export-resume">
      <button type="button" className="btn small primary" onClick={resume}>
        ◂ Back to export ({draft.runIds.length} run{draft.runIds.length === 1 ? '' : 's'})
      </button>
      <button type="button" className="btn small ghost" onClick={discard} aria-label="Discard export">
        ✕
      </button>
    </div>
  );
}
