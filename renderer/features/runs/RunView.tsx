import { useState } from 'react';
import { useApp } from '../../store';
import type { RunSummary } from '../../api/types';
import { runSummaryOf } from '../../store/runsSlice';
import { ErrorBox } from '../../ui/ErrorBox';
import { Timeline } from '../timeline/Timeline';
import { Scrubber } from '../timeline/Scrubber';
import { GotoBox, HelpBox, KindFilter, SearchBox } from '../timeline/Overlays';
import { PayloadView } from '../inspector/PayloadView';
import { StateView } from '../inspector/StateView';
import { BundleBanner } from '../bundle/BundleBanner';
import { FindingList } from '../findings/FindingList';
import { ConversationView } from '../conversation/ConversationView';
import { useRunFormat } from '../formats/useRunFormat';
import { isSessionFormat } from '../../../shared/formats';
import type { RunTab } from '../../store/uiSlice';
import { OutcomeBadge } from './OutcomeBadge';
import { SpanTree } from '../spans/SpanTree';
import { ReplayBanner } from './ReplayBanner';
import { replayedRunOf, runAgentOf } from './runAgent';
import { ResumeControl } from './ResumeControl';

function SeqIndicator() {
  const seq = useApp((s) => s.viewSeq);
  const head = useApp((s) => s.head);
  return (
    <span className="seq-indicator mono" data-testid="seq-indicator">
      seq {seq} / {head}
    </span>
  );
}

function FollowToggle() {
  const follow = useApp((s) => s.follow);
  const setFollow = useApp((s) => s.setFollow);
  return (
    <button
      type="button"
      className={`btn small toggle${follow ? ' on' : ''}`}
      aria-pressed={follow}
      data-testid="follow-toggle"
      title="Keep the newest event selected as the run grows"
      onClick={() => setFollow(!follow)}
    >
      {follow ? '● Following' : '○ Follow'}
    </button>
  );
}

function CompareControl({ runId }: { runId: string }) {
  const runs = useApp((s) => s.runs);
  const compareWith = useApp((s) => s.compareWith);
  const openDiff = useApp((s) => s.openDiff);
  const [other, setOther] = useState<string>('');
  const pick = other || (compareWith && compareWith !== runId ? compareWith : '');
  const others = (runs ?? []).filter((r) => r.run_id !== runId);
  return (
    <span className="compare-control">
      <select
        className="input small"
        value={pick}
        onChange={(e) => setOther(e.target.value)}
        data-testid="compare-select"
        aria-label="Run to compare with"
      >
        <option value="">compare with…</option>
        {others.map((r) => (
          <option key={r.run_id} value={r.run_id}>
            {r.run_id}
            {r.variant ? ` (${r.variant})` : ''}
          </option>
        ))}
      </select>
      <button
        type="button"
        className="btn small"
        disabled={!pick}
        data-testid="compare-button"
        onClick={() => void openDiff(pick, runId)}
      >
        Diff
      </button>
    </span>
  );
}

/**
 * What a run's status means where it is not obvious: an OTLP run has no end of its own (a sender
 * just stops), so it is `running` while records arrive and `idle` after a quiet period
 * (PROOFLOOP_OTLP_IDLE_MS, 2 min by default), never failed and never ended by the receiver.
 */
function statusTitle(run: RunSummary | undefined): string | undefined {
  if (run?.format !== 'otlp') return undefined;
  if (run.status === 'idle')
    return 'idle: no span or log arrived for a quiet period (PROOFLOOP_OTLP_IDLE_MS, 2 min by default). Telemetry has no end of its own: the run is not ended, and the next record makes it running again.';
  if (run.status === 'running')
    return 'receiving over OTLP; marked idle after a quiet period without a span or log (PROOFLOOP_OTLP_IDLE_MS, 2 min by default)';
  return undefined;
}

function RunHeader() {
  const runId = useApp((s) => s.runId)!;
  const run = useApp((s) => runSummaryOf(s, s.runId));
  const rerun = useApp((s) => s.rerun);
  const busy = useApp((s) => s.actionBusy);
  const actionError = useApp((s) => s.actionError);
  const clear = useApp((s) => s.clearActionError);
  const runFindings = useApp((s) => s.findings);
  const [showFindings, setShowFindings] = useState(false);
  const agent = runAgentOf(run);
  const real = agent !== null && agent.agent !== 'sim';
  // A run still going has no whole recording to replay yet.
  const running = run !== undefined && run.status !== 'completed' && run.status !== 'failed';
  const openExport = useApp((s) => s.openExportDialog);
  // A run opened from a bundle is evidence: it can be read and exported again, never re-executed.
  // Only runs ProofLoop executed can be re-executed; imported and bundle runs are records to read.
  const readOnly = run !== undefined && run.source !== 'executed';
  return (
    <div className="run-header">
      {run?.source === 'bundle' && <BundleBanner run={run} />}
      <div className="run-title">
        <OutcomeBadge run={run} testId="run-outcome" />
        <h2 className="mono" data-testid="run-title" title={runId}>
          {runId}
        </h2>
        <span className="run-status" data-testid="run-status" title={statusTitle(run)}>
          {run?.status ?? ''}
          {run?.format === 'otlp' && (run.status === 'running' || run.status === 'idle') && (
            <span className="dim" data-testid="otlp-liveness">
              {run.status === 'idle'
                ? ' · nothing received for a quiet period; a new span or log resumes it'
                : ' · receiving; idle after a quiet period without a span or log'}
            </span>
          )}
        </span>
        {run?.task_id && <span className="chip mono">task {run.task_id}</span>}
        {real && (
          <span
            className="chip mono"
            data-testid="run-agent"
            title="the agent, and where its model's answers came from"
          >
            {agent.agent} · model{' '}
            {agent.modelFrom?.startsWith('replay:') ? 'replay' : (agent.modelFrom ?? 'sim')}
          </span>
        )}
        {run?.variant && <span className="chip mono">{run.variant}</span>}
        {run && run.source !== 'executed' && <span className="chip">{run.source}</span>}
        {runFindings.length > 0 && (
          <button
            type="button"
            className="badge bad as-button"
            data-testid="findings-toggle"
            onClick={() => setShowFindings(!showFindings)}
          >
            {runFindings.length} finding{runFindings.length === 1 ? '' : 's'} {showFindings ? '▾' : '▸'}
          </button>
        )}
        <span className="spacer" />
        {readOnly ? (
          <span
            className="chip"
            data-testid="read-only"
            title={
              run?.source === 'bundle'
                ? 'opened from a bundle: nothing can be re-executed'
                : run?.format === 'otlp'
                  ? 'received over OpenTelemetry (OTLP): a record to read, not a ProofLoop run to re-execute'
                  : 'imported from an agent’s events.jsonl: a record to read, not a ProofLoop run to re-execute'
            }
          >
            read-only
          </span>
        ) : (
          <>
            <button
              type="button"
              className="btn small"
              data-testid="rerun-button"
              disabled={busy}
              title={
                real
                  ? 'Run the same task again with the same agent, model source and settings'
                  : 'Run the same task again with the same agent settings'
              }
              onClick={() => void rerun('rerun')}
            >
              ↻ Rerun
            </button>
            {run && <ResumeControl run={run} />}
            <button
              type="button"
              className="btn small"
              data-testid="replay-button"
              disabled={busy || running}
              title={
                running
                  ? 'The run is still going: its recording is not whole yet'
                  : real
                    ? 'Run it again with the model frozen to its recorded answers; workspace, configuration and policy live'
                    : 'Re-execute with the recorded model outputs'
              }
              onClick={() => void rerun('replay')}
            >
              ⟲ Replay
            </button>
          </>
        )}
        <button
          type="button"
          className="btn small"
          data-testid="export-bundle-button"
          title="Write a redacted audit bundle of this run (and others)"
          onClick={() => openExport(runId)}
        >
          ⇪ Export…
        </button>
        <CompareControl runId={runId} />
      </div>
      {actionError && (
        <div onClick={clear}>
          <ErrorBox error={actionError} what="Starting the run" />
        </div>
      )}
      {run && replayedRunOf(run) && <ReplayBanner run={run} />}
      {showFindings && <FindingList findings={runFindings} onSeq={(q) => useApp.getState().setSeq(q)} />}
    </div>
  );
}

/**
 * The tab the run view shows: the user's choice, else the conversation for session formats and the
 * span tree for runs received over OTLP. The span tree is only offered for OTLP runs.
 */
export function useRunTab(): RunTab {
  const chosen = useApp((s) => s.runTab);
  const fmt = useRunFormat();
  if (chosen === 'spans' && fmt !== 'otlp') return 'timeline';
  return chosen ?? (isSessionFormat(fmt) ? 'conversation' : fmt === 'otlp' ? 'spans' : 'timeline');
}

const TAB_LABEL: Record<RunTab, string> = {
  timeline: 'Timeline',
  conversation: 'Conversation',
  spans: 'Spans',
};

function Tabs() {
  const tab = useRunTab();
  const setTab = useApp((s) => s.setRunTab);
  const fmt = useRunFormat();
  const tabs: RunTab[] =
    fmt === 'otlp' ? ['spans', 'timeline', 'conversation'] : ['timeline', 'conversation'];
  return (
    <span className="tabs" role="tablist">
      {tabs.map((t) => (
        <button
          key={t}
          type="button"
          role="tab"
          className={`btn small tab${tab === t ? ' on' : ''}`}
          aria-selected={tab === t}
          data-testid={`tab-${t}`}
          onClick={() => setTab(t)}
        >
          {TAB_LABEL[t]}
        </button>
      ))}
    </span>
  );
}

function Toolbar() {
  const setOverlay = useApp((s) => s.setOverlay);
  const filter = useApp((s) => s.filter);
  const markers = useApp((s) => s.markers.length);
  return (
    <div className="tl-toolbar">
      <Tabs />
      <SeqIndicator />
      <FollowToggle />
      <span className="spacer" />
      <span className="dim">{markers > 0 ? `${markers} notable` : ''}</span>
      <button
        type="button"
        className={`btn small${filter ? ' on' : ''}`}
        onClick={() => setOverlay('filter')}
        data-testid="filter-button"
        title="Filter kinds (f)"
      >
        {filter
          ? `Filter: ${filter.kinds.length} kind${filter.kinds.length === 1 ? '' : 's'}${filter.capped ? ' (first 20,000)' : ''}`
          : 'Filter'}{' '}
        <kbd>f</kbd>
      </button>
      <button
        type="button"
        className="btn small"
        onClick={() => setOverlay('search')}
        title="Search payloads (/)"
      >
        Search <kbd>/</kbd>
      </button>
      <button type="button" className="btn small" onClick={() => setOverlay('goto')} title="Go to seq (g)">
        Go to <kbd>g</kbd>
      </button>
      <button
        type="button"
        className="btn small ghost"
        onClick={() => setOverlay('help')}
        title="Keyboard (?)"
      >
        ?
      </button>
    </div>
  );
}

export function RunView() {
  const tab = useRunTab();
  const overlay = useApp((s) => s.overlay);
  return (
    <div className="runview" data-testid="run-view">
      <RunHeader />
      <Scrubber />
      <div className="split">
        <div className="pane timeline-pane">
          <Toolbar />
          {tab === 'conversation' ? <ConversationView /> : tab === 'spans' ? <SpanTree /> : <Timeline />}
          {overlay === 'goto' && <GotoBox />}
          {overlay === 'search' && <SearchBox />}
          {overlay === 'filter' && <KindFilter />}
          {overlay === 'help' && <HelpBox />}
        </div>
        <div className="pane inspector-pane">
          <PayloadView />
          <StateView />
        </div>
      </div>
    </div>
  );
}
