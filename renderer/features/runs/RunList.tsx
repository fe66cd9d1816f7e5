import { memo, useMemo } from 'react';
import { useApp } from '../../store';
import { durationMs, visibleRuns, type RunsSort } from '../../store/runsSlice';
import type { RunSummary } from '../../api/types';
import { ErrorBox } from '../../ui/ErrorBox';
import { bundleMetaOf } from '../bundle/bundleMeta';
import { formatMs } from '../../ui/kinds';
import { FolderFindings } from '../findings/FindingList';

function Integrity({ run }: { run: RunSummary }) {
  const bundle = bundleMetaOf(run);
  if (run.source === 'bundle' && (!bundle || bundle.verdict.integrity === 'failed'))
    return (
      <span
        className="badge bad"
        data-testid="integrity"
        title="the bundle this run came from failed verification"
      >
        tampered
      </span>
    );
  if (run.findings > 0)
    return (
      <span className="badge bad" data-testid="integrity" title="problems found in this run's events">
        {run.findings} finding{run.findings === 1 ? '' : 's'}
      </span>
    );
  if (!run.chained)
    return (
      <span
        className="badge warn"
        data-testid="integrity"
        title="a format without a hash chain: order and content cannot be verified"
      >
        unchained
      </span>
    );
  return (
    <span className="badge ok" data-testid="integrity" title="hash chain intact, seqs continuous">
      verified
    </span>
  );
}

const RunItem = memo(function RunItem({
  run,
  selected,
  compare,
}: {
  run: RunSummary;
  selected: boolean;
  compare: boolean;
}) {
  const selectRun = useApp((s) => s.selectRun);
  const d = durationMs(run);
  return (
    <li
      className={`run-item${selected ? ' selected' : ''}${compare ? ' compare' : ''}`}
      data-testid="run-item"
      data-run-id={run.run_id}
      data-status={run.status}
      aria-selected={selected}
      onClick={() => selectRun(run.run_id)}
    >
      <div className="run-line1">
        <span className={`status-dot st-${run.status}`} title={run.status} />
        <span className="run-id mono" title={run.run_id}>
          {run.run_id}
        </span>
        <span className={`src src-${run.source}`} title={`source: ${run.source} (${run.format})`}>
          {run.source}
        </span>
        <Integrity run={run} />
      </div>
      <div className="run-line2">
        <span className="run-status">{run.status}</span>
        <span className="mono run-task" title={`task ${run.task_id ?? '—'}`}>
          {run.task_id ?? '—'}
        </span>
        {run.variant && <span className="chip">{run.variant}</span>}
        <span className="spacer" />
        <span className="mono dim" title="events">
          {run.event_count.toLocaleString()} ev
        </span>
        {d !== null && <span className="mono dim">{formatMs(d)}</span>}
      </div>
    </li>
  );
});

export function RunList() {
  const runs = useApp((s) => s.runs);
  const runsError = useApp((s) => s.runsError);
  const filter = useApp((s) => s.runsFilter);
  const sort = useApp((s) => s.runsSort);
  const selected = useApp((s) => (s.view === 'run' ? s.runId : null));
  const compareWith = useApp((s) => s.compareWith);
  const setFilter = useApp((s) => s.setRunsFilter);
  const setSort = useApp((s) => s.setRunsSort);
  const loadRuns = useApp((s) => s.loadRuns);
  const openOpenBundle = useApp((s) => s.openOpenBundleDialog);
  const shown = useMemo(() => (runs ? visibleRuns(runs, filter, sort) : []), [runs, filter, sort]);

  return (
    <div className="runlist">
      <div className="runlist-tools">
        <input
          className="input"
          placeholder="Filter runs…"
          value={filter}
          onChange={(e) => setFilter(e.target.value)}
          data-testid="run-filter"
          aria-label="Filter runs"
        />
        <select
          className="input"
          value={sort}
          onChange={(e) => setSort(e.target.value as RunsSort)}
          data-testid="run-sort"
          aria-label="Sort runs"
        >
          <option value="recent">Recent</option>
          <option value="oldest">Oldest</option>
          <option value="events">Events</option>
          <option value="status">Status</option>
          <option value="id">Id</option>
        </select>
      </div>
      <div className="runlist-count dim">
        <span>
          {runs ? `${shown.length}${shown.length !== runs.length ? ` of ${runs.length}` : ''} runs` : ''}
        </span>
        <span className="spacer" />
        <button
          type="button"
          className="btn small ghost"
          data-testid="open-bundle"
          title="Open an audit bundle (.zip) from this folder, read-only"
          onClick={() => openOpenBundle()}
        >
          Open bundle…
        </button>
      </div>
      <FolderFindings />
      {runsError && <ErrorBox error={runsError} what="Listing runs" onRetry={() => void loadRuns()} />}
      {runs === null && !runsError && (
        <div className="loading" data-testid="runs-loading">
          Loading runs…
        </div>
      )}
      {runs && runs.length === 0 && (
        <div className="empty" data-testid="empty-state">
          <h3>No runs in this folder yet</h3>
          <p>Make one:</p>
          <ul>
            <li>
              press <b>Start task</b> above, or
            </li>
            <li>
              <code>proofloop --folder &lt;this folder&gt; run &lt;task&gt;</code>, or
            </li>
            <li>
              put <code>events.jsonl</code> files written by an agent in this folder.
            </li>
          </ul>
        </div>
      )}
      <ul className="runs" data-testid="run-list">
        {shown.map((r) => (
          <RunItem
            key={r.run_id}
            run={r}
            selected={r.run_id === selected}
            compare={r.run_id === compareWith}
          />
        ))}
      </ul>
    </div>
  );
}
