import { memo, useEffect, useRef, useState } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import { call } from '../../api/api';
import type { DiffRow, StoredEvent } from '../../api/types';
import { useApp } from '../../store';
import { firstDivergenceRow } from '../../store/diffSlice';
import { ErrorBox } from '../../ui/ErrorBox';
import { JsonTree } from '../../ui/JsonTree';
import { ChangeList, GroupedChanges } from '../inspector/StateView';
import { KindIcon } from '../../ui/icons';
import { toneOf } from '../../ui/kinds';
import { useSummary } from './diffEvents';
import { CAUSE_TEXT, ReplayVerdictLine } from './ReplayVerdict';
import { runAgentOf } from '../runs/runAgent';

const ROW_H = 22;

/** CSS name of a row type (`only_left` → `only-left`). */
const typeClass = (t: DiffRow['type']) => t.replace('_', '-');

function Side({
  runId,
  seq,
  kind,
  count,
}: {
  runId: string | null;
  seq: number | null;
  kind: string | null;
  count: number;
}) {
  // What the event is about, so a changed row says what differs (`search(percent)`), not only its kind.
  const summary = useSummary(count > 1 ? null : runId, seq);
  if (seq == null) return <span className="d-side empty" />;
  return (
    <span className="d-side">
      <span className="mono d-seq">{count > 1 ? `${seq}–${seq + count - 1}` : seq}</span>
      {kind && (
        <span className={`tl-kind tone-${toneOf(kind)}`}>
          <KindIcon tone={toneOf(kind)} />
          <span className="mono">{kind}</span>
        </span>
      )}
      {count > 1 && <span className="dim">+{count - 1} more</span>}
      {summary && (
        <span className="mono d-summary" data-testid="diff-summary" title={summary}>
          {summary}
        </span>
      )}
    </span>
  );
}

const Row = memo(function Row({
  row,
  index,
  top,
  first,
}: {
  row: DiffRow;
  index: number;
  top: number;
  first: boolean;
}) {
  const selected = useApp((s) => s.diffRow === index);
  const select = useApp((s) => s.selectDiffRow);
  const left = useApp((s) => s.diffLeft);
  const right = useApp((s) => s.diffRight);
  return (
    <div
      className={`d-row d-${typeClass(row.type)}${selected ? ' selected' : ''}${first ? ' first-divergence' : ''}`}
      style={{ transform: `translateY(${top}px)`, height: ROW_H }}
      data-testid="diff-row"
      data-type={row.type}
      data-index={index}
      data-first-divergence={first ? 'true' : undefined}
      aria-selected={selected}
      onClick={() => select(index)}
    >
      <span className="d-mark">
        {row.type === 'same' ? '' : row.type === 'changed' ? '≠' : row.type === 'only_left' ? '−' : '+'}
      </span>
      <Side runId={left} seq={row.left_seq} kind={row.left_kind} count={row.count} />
      <Side runId={right} seq={row.right_seq} kind={row.right_kind} count={row.count} />
    </div>
  );
});

function useEventAt(runId: string | null, seq: number | null): StoredEvent | null | undefined {
  const [ev, setEv] = useState<{ key: string; ev: StoredEvent | null } | null>(null);
  const key = `${runId}/${seq}`;
  useEffect(() => {
    if (!runId || seq == null) return;
    let live = true;
    void call('events.read', { run_id: runId, from: seq, to: seq, limit: 1 }).then((r) => {
      if (live) setEv({ key, ev: r.ok ? (r.value.events[0] ?? null) : null });
    });
    return () => {
      live = false;
    };
  }, [runId, seq, key]);
  if (!runId || seq == null) return null;
  return ev?.key === key ? ev.ev : undefined;
}

function RowDetail({ row }: { row: DiffRow }) {
  const left = useApp((s) => s.diffLeft);
  const right = useApp((s) => s.diffRight);
  const l = useEventAt(left, row.left_seq);
  const r = useEventAt(right, row.right_seq);
  return (
    <div className="d-detail" data-testid="diff-detail">
      <div className="section-title">
        Row: {row.type}
        {row.left_call || row.right_call ? ` · call ${row.left_call ?? '—'} ⇄ ${row.right_call ?? '—'}` : ''}
      </div>
      {row.changes && row.changes.length > 0 && (
        <>
          <div className="section-title">Payload differences</div>
          <ChangeList changes={row.changes} testId="diff-payload" />
        </>
      )}
      <div className="d-pair">
        <div>
          <div className="section-title">Left {row.left_seq != null ? `#${row.left_seq}` : '(none)'}</div>
          {l === undefined ? (
            <div className="loading">…</div>
          ) : l ? (
            <JsonTree value={l.payload} openDepth={2} />
          ) : (
            <div className="dim">—</div>
          )}
        </div>
        <div>
          <div className="section-title">Right {row.right_seq != null ? `#${row.right_seq}` : '(none)'}</div>
          {r === undefined ? (
            <div className="loading">…</div>
          ) : r ? (
            <JsonTree value={r.payload} openDepth={2} />
          ) : (
            <div className="dim">—</div>
          )}
        </div>
      </div>
    </div>
  );
}

export function DiffView() {
  const left = useApp((s) => s.diffLeft);
  const right = useApp((s) => s.diffRight);
  const diff = useApp((s) => s.diff);
  const error = useApp((s) => s.diffError);
  const loading = useApp((s) => s.diffLoading);
  const diffRow = useApp((s) => s.diffRow);
  const selectRun = useApp((s) => s.selectRun);
  const openDiff = useApp((s) => s.openDiff);
  const selectRow = useApp((s) => s.selectDiffRow);
  const realPair = useApp((s) => {
    const src = diff?.replay ? s.runs?.find((r) => r.run_id === diff.replay!.source) : undefined;
    return (runAgentOf(src)?.agent ?? 'sim') !== 'sim';
  });
  const parentRef = useRef<HTMLDivElement>(null);
  const rows = diff?.rows ?? [];
  const first = diff ? firstDivergenceRow(diff) : null;
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => parentRef.current,
    estimateSize: () => ROW_H,
    overscan: 10,
  });

  useEffect(() => {
    if (first !== null) virtualizer.scrollToIndex(first, { align: 'center' });
  }, [first, virtualizer]);

  const counts = diff?.counts;
  const selected = diffRow !== null ? rows[diffRow] : undefined;

  return (
    <div className="diffview" data-testid="diff-view">
      <div className="run-header">
        <div className="run-title">
          <h2 className="mono">
            <button type="button" className="linklike mono" onClick={() => left && selectRun(left)}>
              {left}
            </button>{' '}
            ⇄{' '}
            <button type="button" className="linklike mono" onClick={() => right && selectRun(right)}>
              {right}
            </button>
          </h2>
          <span className="spacer" />
          {counts && (
            <span className="d-counts mono" data-testid="diff-counts">
              <span className="d-same">{counts.same} same</span>{' '}
              <span className="d-changed">{counts.changed} changed</span>{' '}
              <span className="d-only-left">{counts.only_left} only left</span>{' '}
              <span className="d-only-right">{counts.only_right} only right</span>
            </span>
          )}
          <button
            type="button"
            className="btn small"
            onClick={() => left && right && void openDiff(right, left)}
          >
            Swap
          </button>
        </div>
        {diff?.replay && (
          <div className="d-replay" data-testid="diff-replay">
            <span className="dim">
              {diff.replay.replay === right ? 'Right' : 'Left'} replays{' '}
              {diff.replay.replay === right ? 'left' : 'right'}:
            </span>{' '}
            <ReplayVerdictLine
              verdict={diff.replay}
              real={realPair}
              onSeq={() => {
                if (first !== null) {
                  selectRow(first);
                  virtualizer.scrollToIndex(first, { align: 'center' });
                }
              }}
            />
          </div>
        )}
        {diff && (
          <div className={`d-first${diff.replay ? ' secondary' : ''}`} data-testid="first-divergence">
            {diff.replay && diff.first_divergence ? (
              <>
                Event by event, the first row that differs: left seq {diff.first_divergence.left_seq ?? '—'}{' '}
                {diff.first_divergence.left_kind ?? ''} ⇄ right seq {diff.first_divergence.right_seq ?? '—'}{' '}
                {diff.first_divergence.right_kind ?? ''}
              </>
            ) : !diff.first_divergence ? (
              <span className="ok-text">
                Identical: the runs match event for event (ignoring ids, times and durations).
              </span>
            ) : (
              <>
                First divergence ({diff.first_divergence.type.replace('_', ' ')}): left seq{' '}
                {diff.first_divergence.left_seq ?? '—'} {diff.first_divergence.left_kind ?? ''} ⇄ right seq{' '}
                {diff.first_divergence.right_seq ?? '—'} {diff.first_divergence.right_kind ?? ''}
              </>
            )}
            {!diff.replay && diff.cause && (
              <div className="d-cause" data-testid="diff-cause" data-cause={diff.cause.cause}>
                Cause <b>{diff.cause.cause}</b>
                {CAUSE_TEXT[diff.cause.cause] ? ` (${CAUSE_TEXT[diff.cause.cause]})` : ''}:{' '}
                {diff.cause.reason}
                {diff.cause.part ? <span className="mono"> [{diff.cause.part}]</span> : null}
                {diff.cause.setup.length > 0 && (
                  <span className="dim"> · set up differently: {diff.cause.setup.join('; ')}</span>
                )}
              </div>
            )}
            {diff.truncated && <span className="dim"> · {diff.truncated.reason}</span>}
            {diff.rows_left_off > 0 && <span className="dim"> · {diff.rows_left_off} rows left off</span>}
          </div>
        )}
      </div>
      {loading && <div className="loading">Diffing…</div>}
      {error && (
        <ErrorBox
          error={error}
          what="Diffing runs"
          onRetry={() => left && right && void openDiff(left, right)}
        />
      )}
      {diff && (
        <div className="split">
          <div className="pane timeline-pane">
            <div className="d-head">
              <span className="d-mark" />
              <span className="d-side">left · {left}</span>
              <span className="d-side">right · {right}</span>
            </div>
            <div className="timeline" ref={parentRef} data-testid="diff-rows">
              <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
                {virtualizer.getVirtualItems().map((it) => (
                  <Row
                    key={it.index}
                    row={rows[it.index]!}
                    index={it.index}
                    top={it.start}
                    first={it.index === first}
                  />
                ))}
              </div>
            </div>
          </div>
          <div className="pane inspector-pane">
            <div className="panel">
              {selected ? (
                <RowDetail row={selected} />
              ) : (
                <div className="dim">Select a row to see its payloads.</div>
              )}
            </div>
            <div className="panel" data-testid="final-state-diff">
              <div className="section-title">Final state differences</div>
              {diff.state_changes.length === 0 ? (
                <div className="dim">none: both runs end in the same state</div>
              ) : (
                <GroupedChanges changes={diff.state_changes} testId="final-state-changes" />
              )}
              {diff.state_changes_left_off > 0 && (
                <div className="dim">… {diff.state_changes_left_off} more</div>
              )}
            </div>
          </div>
        </div>
      )}
    </div>
  );
}
