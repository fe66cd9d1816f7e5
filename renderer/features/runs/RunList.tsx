import { memo, useEffect, useMemo } from 'react';
import { useApp } from '../../store';
import { durationMs, visibleRuns, type RunsOutcome, type RunsSort } from '../../store/runsSlice';
import { OUTCOMES, OUTCOME_TEXT } from '../../../shared/outcome';
import type { RunSummary } from '../../api/types';
import { ErrorBox } from '../../ui/ErrorBox';
import { bundleMetaOf } from '../bundle/bundleMeta';
import { formatMs } from '../../ui/kinds';
import { FolderFindings } from '../findings/FindingList';
import { useRunDetailsOnScreen } from './runDetails';
import { isSessionFormat } from '../../../shared/formats';
import { parentSessionOf } from '../conversation/items';
import { OutcomeBadge } from './OutcomeBadge';
import { count } from '../../ui/numbers';
import { preloadMarkdown } from '../inspector/ReadableView';
import { prefetchFirstPage } from '../timeline/eventCache';

/**
 * The run id, and the id its source gave it when it is stored under another one (an id that could
 * not be used as is, or was taken): its digests cover the source's id.
 */
function runIdTitle(run: RunSummary): string {
  const src = run.meta?.source_run_id;
  if (typeof src !== 'string') return run.run_id;
  const shown = JSON.stringify(src);
  return `${run.run_id}: stored under this id; its source names it ${shown.length > 300 ? `${shown.slice(0, 300)}…` : shown} (source_run_id), the id its digests cover`;
}

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
  if (!run.chained && run.meta?.seal)
    return (
      <span
        className="badge ok"
        data-testid="integrity"
        data-value="sealed"
        title="a source without a hash chain of its own: ProofLoop chained it when it imported it and sealed the source's bytes (sha256), so it is verifiable from its import on"
      >
        sealed
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

const FORMAT_LABEL: Record<string, string> = {
  proofloop: 'ProofLoop',
  seed000: 'seed 000',
  seed004: 'seed 004',
  claude_code: 'Claude Code',
  codex: 'Codex',
};

export const formatLabel = (f: string): string => FORMAT_LABEL[f] ?? f;

/** A project path's last two parts (the whole path is the title). */
function projectName(p: string): string {
  const parts = p.split(/[\\/]/).filter(Boolean);
  return parts.length <= 2 ? p : `…/${parts.slice(-2).join('/')}`;
}

function compact(n: number): string {
  if (n < 10_000) return count(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 100_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

function startOf(run: RunSummary): string {
  const t = run.first_at ?? run.created_at;
  const d = new Date(t);
  return Number.isNaN(d.getTime()) ? '' : t.slice(0, 16).replace('T', ' ');
}

const RunItem = memo(function RunItem({
  run,
  selected,
  compare,
  sharedTitle,
}: {
  run: RunSummary;
  selected: boolean;
  compare: boolean;
  /** Whether other rows listed have the same title (a task's goal): then the row says it once, in its tooltip. */
  sharedTitle: boolean;
}) {
  const selectRun = useApp((s) => s.selectRun);
  const { ref, details } = useRunDetailsOnScreen(run);
  const d = durationMs(run);
  const title = details?.title;
  const parent = isSessionFormat(run.format) ? parentSessionOf(run.run_id) : null;
  return (
    <li
      ref={ref}
      className={`run-item${selected ? ' selected' : ''}${compare ? ' compare' : ''}`}
      data-testid="run-item"
      data-run-id={run.run_id}
      data-status={run.status}
      data-outcome={run.outcome ?? ''}
      data-format={run.format}
      aria-selected={selected}
      title={title && sharedTitle ? title : undefined}
      onClick={() => selectRun(run.run_id)}
      // Its first events are asked at the press, and are there (or on the way) at the click.
      onPointerDown={(e) => {
        if (e.button === 0) prefetchFirstPage(run.run_id);
      }}
    >
      <div className="run-line1">
        <OutcomeBadge run={run} testId="run-item-outcome" />
        {parent === null ? (
          <span className="run-id mono" title={runIdTitle(run)}>
            {run.run_id}
          </span>
        ) : (
          // `<session>:agent-<id>` cut at its end reads as its parent's id: name the agent instead.
          <span
            className="run-id mono"
            title={`${run.run_id}: a subagent of ${parent}`}
            data-testid="run-item-subagent"
          >
            ↳ {run.run_id.slice(parent.length + 1)}
          </span>
        )}
      </div>
      {title && !sharedTitle && (
        <div className="run-title-line" data-testid="run-item-title" title={title}>
          {title}
        </div>
      )}
      <div className="run-line2">
        <span className="chip run-format" data-testid="run-item-format">
          {formatLabel(run.format)}
        </span>
        {parent !== null && <span className="chip">subagent</span>}
        {run.task_id && !isSessionFormat(run.format) && (
          <span className="mono run-task" title={`task ${run.task_id}`}>
            {run.task_id}
          </span>
        )}
        {run.variant && <span className="chip">{run.variant}</span>}
        <span className="spacer" />
        <span className="mono dim run-counts" title="events · duration">
          {count(run.event_count)} ev{d !== null ? ` · ${formatMs(d)}` : ''}
        </span>
        <span className={`src src-${run.source}`} title={`source: ${run.source} (${run.format})`}>
          {run.source}
        </span>
        <Integrity run={run} />
      </div>
      {details && (details.project || details.model) && (
        <div className="run-line3 dim">
          {details.project && (
            <span className="mono run-project" data-testid="run-item-project" title={details.project}>
              {projectName(details.project)}
            </span>
          )}
          <span className="spacer" />
          {details.model && (
            <span className="mono run-model" data-testid="run-item-model" title="model">
              {details.model}
            </span>
          )}
        </div>
      )}
      {details && (
        <div className="run-line3 dim" data-testid="run-item-details">
          <span className="mono" title={`started ${run.first_at ?? run.created_at}`}>
            {startOf(run)}
          </span>
          <span className="spacer" />
          {details.tokens !== null && (
            <span className="mono" data-testid="run-item-tokens" title={`${count(details.tokens)} tokens`}>
              {compact(details.tokens)} tok
            </span>
          )}
          {details.calls !== null && (
            <span className="mono" data-testid="run-item-calls" title="tool calls">
              {details.calls} calls
            </span>
          )}
          {details.errors !== null && details.errors > 0 && (
            <span className="mono bad-text" data-testid="run-item-errors" title="tool calls that failed">
              {details.errors} err
            </span>
          )}
        </div>
      )}
    </li>
  );
});

export function RunList() {
  const runs = useApp((s) => s.runs);
  const runsError = useApp((s) => s.runsError);
  const filter = useApp((s) => s.runsFilter);
  const sort = useApp((s) => s.runsSort);
  // Home with a run: one being opened, its view drawn once its first events are read (at most
  // 300 ms, timelineSlice.ts): its row is selected meanwhile.
  const selected = useApp((s) => (s.view === 'run' || s.view === 'home' ? s.runId : null));
  const compareWith = useApp((s) => s.compareWith);
  const setFilter = useApp((s) => s.setRunsFilter);
  const setSort = useApp((s) => s.setRunsSort);
  const loadRuns = useApp((s) => s.loadRuns);
  const openOpenBundle = useApp((s) => s.openOpenBundleDialog);
  const runsFormat = useApp((s) => s.runsFormat);
  const runsProject = useApp((s) => s.runsProject);
  const setRunsFormat = useApp((s) => s.setRunsFormat);
  const setRunsProject = useApp((s) => s.setRunsProject);
  const runsOutcome = useApp((s) => s.runsOutcome);
  const setRunsOutcome = useApp((s) => s.setRunsOutcome);
  const outcomes = useMemo(() => new Set((runs ?? []).map((r) => r.outcome ?? null)), [runs]);
  // Once the first rows are drawn: a run opened next shows its payload, often Markdown.
  const listed = runs !== null && runs.length > 0;
  useEffect(() => (listed ? preloadMarkdown() : undefined), [listed]);
  // Details matter to the list only while a filter reads them.
  const details = useApp((s) => (filter.trim() || s.runsProject ? s.runDetails : null));
  const allDetails = useApp((s) => s.runDetails);
  const formats = useMemo(() => [...new Set((runs ?? []).map((r) => r.format))].sort(), [runs]);
  const projects = useMemo(
    () =>
      [...new Set(Object.values(allDetails).map((d) => d.project))].filter((p): p is string => !!p).sort(),
    [allDetails],
  );
  // Titles more than one listed run has (every run of a task is titled with its goal).
  const titleCount = useMemo(() => {
    const m = new Map<string, number>();
    for (const r of runs ?? []) {
      const t = allDetails[r.run_id]?.title;
      if (t) m.set(t, (m.get(t) ?? 0) + 1);
    }
    return m;
  }, [runs, allDetails]);
  const shown = useMemo(
    () =>
      runs
        ? visibleRuns(runs, filter, sort, {
            format: runsFormat,
            project: runsProject,
            details: details ?? {},
            outcome: runsOutcome,
          })
        : [],
    [runs, filter, sort, runsFormat, runsProject, details, runsOutcome],
  );

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
          <option value="outcome">Outcome</option>
          <option value="status">Status</option>
          <option value="id">Id</option>
        </select>
        {(outcomes.size > 1 || runsOutcome) && (
          <select
            className="input"
            value={runsOutcome}
            onChange={(e) => setRunsOutcome(e.target.value as RunsOutcome)}
            data-testid="run-outcome-filter"
            aria-label="Only runs of an outcome"
          >
            <option value="">All</option>
            <option value="failing">Not passed</option>
            {OUTCOMES.filter((o) => outcomes.has(o)).map((o) => (
              <option key={o} value={o}>
                {OUTCOME_TEXT[o].label}
              </option>
            ))}
          </select>
        )}
      </div>
      {(formats.length > 1 || projects.length > 1 || runsFormat || runsProject) && (
        <div className="runlist-tools">
          <select
            className="input"
            value={runsFormat}
            onChange={(e) => setRunsFormat(e.target.value)}
            data-testid="run-format-filter"
            aria-label="Only runs of a format"
          >
            <option value="">All formats</option>
            {formats.map((f) => (
              <option key={f} value={f}>
                {formatLabel(f)}
              </option>
            ))}
          </select>
          <select
            className="input"
            value={runsProject}
            onChange={(e) => setRunsProject(e.target.value)}
            data-testid="run-project-filter"
            aria-label="Only runs of a project"
            title="Projects of the runs listed so far (read as rows come into view)"
          >
            <option value="">All projects</option>
            {projects.map((p) => (
              <option key={p} value={p}>
                {projectName(p)}
              </option>
            ))}
          </select>
        </div>
      )}
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
            sharedTitle={(titleCount.get(allDetails[r.run_id]?.title ?? '') ?? 0) > 1}
          />
        ))}
      </ul>
    </div>
  );
}
