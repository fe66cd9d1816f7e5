import { useEffect, useState } from 'react';
import { useApp } from '../../store';
import { ErrorBox } from '../../ui/ErrorBox';
import { VARIANTS, VARIANT_TEXT } from '../../../shared/api/variants';
import type { Variant } from '../../store/tasksSlice';

/** Start a task (task, variant, seed) and watch the new run live. */
export function TaskPanel() {
  const tasks = useApp((s) => s.tasks);
  const tasksError = useApp((s) => s.tasksError);
  const loadTasks = useApp((s) => s.loadTasks);
  const startTask = useApp((s) => s.startTask);
  const busy = useApp((s) => s.actionBusy);
  const actionError = useApp((s) => s.actionError);
  const close = useApp((s) => s.setOverlay);
  const [task, setTask] = useState('');
  const [variant, setVariant] = useState<Variant | ''>('');
  const catalogErrors = useApp((s) => s.catalogErrors);
  const [seed, setSeed] = useState('');
  const folder = useApp((s) => s.folder);
  // Another program's folder (a Claude Code projects folder): runs go to ProofLoop's own directory.
  const elsewhere = folder?.runs_root && folder.runs_root !== folder.folder ? folder.runs_root : null;

  useEffect(() => {
    void loadTasks();
  }, [loadTasks]);

  const chosen = tasks?.find((t) => t.id === (task || tasks[0]?.id));
  const seedNum = seed.trim() === '' ? null : Number(seed);
  const seedOk = seedNum === null || Number.isInteger(seedNum);

  return (
    <div className="modal-backdrop" onClick={() => close(null)}>
      <div
        className="modal"
        data-testid="task-panel"
        onClick={(e) => e.stopPropagation()}
        onKeyDown={(e) => {
          if (e.key === 'Escape') close(null);
        }}
      >
        <div className="popover-title">
          Start a task
          <button type="button" className="btn ghost small" onClick={() => close(null)} aria-label="Close">
            ✕
          </button>
        </div>
        {tasksError && <ErrorBox error={tasksError} what="Listing tasks" onRetry={() => void loadTasks()} />}
        {!tasks && !tasksError && <div className="loading">Loading tasks…</div>}
        {tasks && tasks.length === 0 && <div className="empty">No tasks found in the task catalog.</div>}
        {catalogErrors.length > 0 && (
          <ul className="findings">
            {catalogErrors.map((e, i) => (
              <li key={i} className="mono">
                {e.file} {e.field}: {e.message}
              </li>
            ))}
          </ul>
        )}
        {tasks && tasks.length > 0 && (
          <form
            className="task-form"
            onSubmit={async (e) => {
              e.preventDefault();
              if (!chosen || !seedOk) return;
              await startTask(chosen.id, variant || null, seedNum);
              if (!useApp.getState().actionError) close(null);
            }}
          >
            <label>
              Task
              <select
                className="input"
                value={chosen?.id ?? ''}
                onChange={(e) => setTask(e.target.value)}
                data-testid="task-select"
              >
                {tasks.map((t) => (
                  <option key={t.id} value={t.id}>
                    {t.id}
                    {t.title !== t.id ? ` — ${t.title}` : ''}
                  </option>
                ))}
              </select>
            </label>
            {chosen && (
              <p className="dim task-goal">
                {chosen.goal}
                {chosen.simulated ? ' · simulated model' : ''} · budget {chosen.budget.steps} steps
              </p>
            )}
            <label>
              Variant
              <select
                className="input"
                value={variant}
                onChange={(e) => setVariant(e.target.value as Variant | '')}
                data-testid="variant-select"
              >
                <option value="">default (careful)</option>
                {VARIANTS.map((v) => (
                  <option key={v} value={v} title={VARIANT_TEXT[v]}>
                    {v} — {VARIANT_TEXT[v]}
                  </option>
                ))}
              </select>
            </label>
            <p className="dim task-goal" data-testid="variant-text">
              {VARIANT_TEXT[variant || 'careful']}
            </p>
            <label>
              Seed
              <input
                className="input mono"
                value={seed}
                onChange={(e) => setSeed(e.target.value)}
                placeholder="0"
                inputMode="numeric"
                data-testid="seed-input"
              />
            </label>
            <p className="dim task-where" data-testid="task-where">
              {elsewhere ? (
                <>
                  This folder belongs to another program: ProofLoop writes nothing into it. The run’s folder
                  (workspace, artifacts, events.jsonl) goes to <code>{elsewhere}</code>, and the run is listed
                  here.
                </>
              ) : (
                <>
                  The run’s folder (workspace, artifacts, events.jsonl) goes into{' '}
                  <code>{folder?.folder ?? 'the open folder'}</code>.
                </>
              )}
            </p>
            {!seedOk && <div className="bad-text">seed must be a whole number</div>}
            {actionError && <ErrorBox error={actionError} what="Starting the task" />}
            <div className="row-gap">
              <button
                type="submit"
                className="btn primary"
                disabled={busy || !seedOk}
                data-testid="start-task"
              >
                {busy ? 'Starting…' : 'Start and watch'}
              </button>
            </div>
          </form>
        )}
      </div>
    </div>
  );
}
