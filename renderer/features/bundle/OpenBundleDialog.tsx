import { useState } from 'react';
import { useApp } from '../../store';
import { ErrorBox } from '../../ui/ErrorBox';
import { Modal } from '../../ui/Modal';

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
  return (
    <Modal
      title="Open audit bundle"
      label="Open bundle"
      testId="open-bundle-dialog"
      onClose={() => close(null)}
    >
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
          The bundle is verified, then its runs join the list as read-only <b>bundle</b> runs with the result
          on top. A bundle that fails verification still opens, so you can see where.
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
    </Modal>
  );
}
