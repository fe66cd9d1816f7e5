import { useEffect, useRef, useState } from 'react';
import { call } from '../../api/api';
import { useApp } from '../../store';
import { useEscape } from '../../ui/Modal';

const isTeamUrl = (s: string): boolean => /^postgres(ql)?:\/\//i.test(s);

/**
 * The open folder's path (or team ledger's URL), and a menu of what this window may open: the
 * app's recent folders, or in web mode the folders `proofloop serve` was given, and team ledgers
 * opened before (their URL without a password); a click switches to one. "Open team ledger…" asks
 * for a postgres:// connection string and, apart, its password: the password goes with that one
 * connection and is never listed or kept (a recent team ledger asks for it again, unless the
 * server takes it from ~/.pgpass).
 */
export function FolderMenu() {
  const folder = useApp((s) => s.folder);
  const openFolder = useApp((s) => s.openFolder);
  const openTeamLedger = useApp((s) => s.openTeamLedger);
  const teamFormOpen = useApp((s) => s.teamFormOpen);
  const setTeamFormOpen = useApp((s) => s.setTeamFormOpen);
  const folderError = useApp((s) => s.folderError);
  const goHome = useApp((s) => s.goHome);
  const [open, setOpen] = useState(false);
  const [recent, setRecent] = useState<string[] | null>(null);
  const [url, setUrl] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const current = folder?.folder ?? null;
  const root = useRef<HTMLSpanElement>(null);
  // A menu, not a dialog: Escape or a click anywhere else closes it (it stayed open over the
  // runs list and the timeline until its button was clicked again).
  // The team form's flag goes too, else the effect below would open the menu again at once.
  const close = () => {
    setTeamFormOpen(false);
    setOpen(false);
  };
  const closeRef = useRef(close);
  closeRef.current = close;
  useEscape(() => {
    if (open) close();
  });
  useEffect(() => {
    if (!open) return;
    const onDown = (e: MouseEvent) => {
      if (!root.current?.contains(e.target as Node)) closeRef.current();
    };
    document.addEventListener('mousedown', onDown);
    return () => document.removeEventListener('mousedown', onDown);
  }, [open]);
  const team = folder?.engine === 'postgres';

  const loadRecent = async () => {
    const r = await call('folder.recent', {});
    setRecent(r.ok ? r.value : []);
  };
  // The app's File ▸ Open Team Ledger… opens the menu on its form.
  useEffect(() => {
    if (teamFormOpen && !open) {
      void loadRecent();
      setOpen(true);
    }
  }, [teamFormOpen, open]);

  const submitTeam = async () => {
    if (!url.trim()) return;
    setBusy(true);
    goHome();
    const ok = await openTeamLedger(url.trim(), password || undefined);
    setBusy(false);
    setPassword('');
    if (ok) {
      setUrl('');
      setOpen(false);
    }
  };

  return (
    <span className="folder-menu" ref={root}>
      <button
        type="button"
        className="folder mono linklike"
        title={current ?? ''}
        data-testid="folder-path"
        aria-expanded={open}
        onClick={async () => {
          if (open) {
            setTeamFormOpen(false);
            return setOpen(false);
          }
          await loadRecent();
          setOpen(true);
        }}
      >
        {team && (
          <span className="team-badge" data-testid="team-badge">
            team
          </span>
        )}
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
                    if (isTeamUrl(f)) {
                      // Its password is not kept: tried without (a server may take it from ~/.pgpass), else asked.
                      setUrl(f);
                      setTeamFormOpen(true);
                      setBusy(true);
                      goHome();
                      const ok = await openTeamLedger(f);
                      setBusy(false);
                      if (ok) setOpen(false);
                      return;
                    }
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
          {!teamFormOpen ? (
            <button
              type="button"
              className="btn ghost"
              data-testid="open-team-ledger"
              onClick={() => setTeamFormOpen(true)}
            >
              Open team ledger…
            </button>
          ) : (
            <form
              className="team-form"
              data-testid="team-form"
              onSubmit={(e) => {
                e.preventDefault();
                void submitTeam();
              }}
            >
              <div className="popover-title">Open team ledger</div>
              <input
                className="input mono"
                data-testid="team-url"
                placeholder="postgres://user@host:5432/db"
                aria-label="connection string"
                autoComplete="off"
                spellCheck={false}
                value={url}
                onChange={(e) => setUrl(e.target.value)}
              />
              <input
                className="input"
                type="password"
                data-testid="team-password"
                placeholder="password (not stored)"
                aria-label="password"
                autoComplete="off"
                value={password}
                onChange={(e) => setPassword(e.target.value)}
              />
              {folderError && teamFormOpen && (
                <p className="error" data-testid="team-error">
                  {folderError.message}
                </p>
              )}
              <button type="submit" className="btn" disabled={busy || !url.trim()} data-testid="team-open">
                {busy ? 'Connecting…' : 'Open'}
              </button>
            </form>
          )}
        </div>
      )}
    </span>
  );
}
