import { useEffect, useRef, useState } from 'react';
import { call } from '../../api/api';
import { useApp } from '../../store';
import { useEscape } from '../../ui/Modal';

/**
 * The open folder's path, and a menu of the folders this window may open (the app's recent
 * folders, or in web mode the folders `proofloop serve` was given): a click switches to one.
 */
export function FolderMenu() {
  const folder = useApp((s) => s.folder);
  const openFolder = useApp((s) => s.openFolder);
  const goHome = useApp((s) => s.goHome);
  const [open, setOpen] = useState(false);
  const [recent, setRecent] = useState<string[] | null>(null);
  const current = folder?.folder ?? null;
  const root = useRef<HTMLSpanElement>(null);
  // A menu, not a dialog: Escape or a click anywhere else closes it (it stayed open over the
  // runs list and the timeline until its button was clicked again).
  useEscape(() => setOpen(false));
  useEffect(() => {
    if (!open) return;
    const onDown = (e: MouseEvent) => {
      if (!root.current?.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener('mousedown', onDown);
    return () => document.removeEventListener('mousedown', onDown);
  }, [open]);
  return (
    <span className="folder-menu" ref={root}>
      <button
        type="button"
        className="folder mono linklike"
        title={current ?? ''}
        data-testid="folder-path"
        aria-expanded={open}
        onClick={async () => {
          if (open) return setOpen(false);
          const r = await call('folder.recent', {});
          setRecent(r.ok ? r.value : []);
          setOpen(true);
        }}
      >
        {current ?? 'no folder open'} ▾
      </button>
      {open && (
        <div className="popover folder-popover" data-testid="folder-menu" role="menu">
          <div className="popover-title">Open folder</div>
          {recent && recent.filter((f) => f !== current).length === 0 && (
            <p className="dim">
              No other folder to open. Name several when starting web mode:{' '}
              <code>proofloop serve ./runs ~/.claude/projects</code>
            </p>
          )}
          <ul className="folder-list">
            {(recent ?? []).map((f) => (
              <li key={f}>
                <button
                  type="button"
                  className="btn ghost mono"
                  role="menuitem"
                  data-testid="folder-option"
                  data-folder={f}
                  disabled={f === current}
                  onClick={async () => {
                    setOpen(false);
                    goHome();
                    await openFolder(f);
                  }}
                >
                  {f}
                  {f === current ? ' (open)' : ''}
                </button>
              </li>
            ))}
          </ul>
        </div>
      )}
    </span>
  );
}
