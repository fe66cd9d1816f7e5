import { useApp } from './store';
import { RunList } from './features/runs/RunList';
import { RunView, useRunTab } from './features/runs/RunView';
import { useTimelineKeys } from './features/timeline/useKeyboard';
import { DiffView } from './features/diff/DiffView';
import { JobBar } from './features/tasks/JobBar';
import { TaskPanel } from './features/tasks/TaskPanel';
import { ErrorBox } from './ui/ErrorBox';
import { FolderPicker } from './features/runs/FolderPicker';
import { FolderMenu } from './features/runs/FolderMenu';
import { ExportDialog, ExportResumePill } from './features/bundle/ExportDialog';
import { OpenBundleDialog } from './features/bundle/OpenBundleDialog';

function Home() {
  const runs = useApp((s) => s.runs);
  const hasRuns = (runs?.length ?? 0) > 0;
  return (
    <div className="home">
      {hasRuns ? (
        <div className="placeholder" data-testid="no-selection">
          <h2>Select a run</h2>
          <p>Pick a run on the left to scrub its events, or start a task.</p>
          <p className="hint">
            Keys: <kbd>←</kbd> <kbd>→</kbd> step · <kbd>Shift</kbd>+<kbd>→</kbd> next notable · <kbd>g</kbd>{' '}
            go to seq · <kbd>/</kbd> search · <kbd>f</kbd> filter kinds
          </p>
        </div>
      ) : runs ? (
        <div className="placeholder" data-testid="welcome">
          <h2>No runs yet</h2>
          <p>
            Start a task to watch an agent run live, or drop agent-written events.jsonl files into this
            folder.
          </p>
          <button type="button" className="btn primary" onClick={() => useApp.getState().setOverlay('tasks')}>
            ▶ Start a task
          </button>
        </div>
      ) : null}
    </div>
  );
}

/** The run's keys, apart so that what they follow (the run's tab) re-renders nothing else. */
function RunKeys() {
  useTimelineKeys(useRunTab());
  return null;
}

export function App() {
  const view = useApp((s) => s.view);
  const folder = useApp((s) => s.folder);
  const folderError = useApp((s) => s.folderError);
  const overlay = useApp((s) => s.overlay);
  const setOverlay = useApp((s) => s.setOverlay);
  return (
    <div className="app">
      <header className="topbar">
        <span className="brand">
          <span className="brand-mark" aria-hidden="true" />
          ProofLoop
        </span>
        <FolderMenu />
        <JobBar />
        <span className="spacer" />
        <button
          type="button"
          className="btn"
          data-testid="open-tasks"
          onClick={() => setOverlay(overlay === 'tasks' ? null : 'tasks')}
        >
          ▶ Start task
        </button>
      </header>
      {folderError && <ErrorBox error={folderError} what="Opening the folder" />}
      {!folder && <FolderPicker />}
      <div className="main">
        <aside className="sidebar">
          <RunList />
        </aside>
        <section className="content">
          {view === 'run' ? <RunView /> : view === 'diff' ? <DiffView /> : <Home />}
        </section>
      </div>
      {overlay === 'tasks' && <TaskPanel />}
      {overlay === 'export-bundle' && <ExportDialog />}
      {overlay === 'open-bundle' && <OpenBundleDialog />}
      <ExportResumePill />
      <RunKeys />
    </div>
  );
}
