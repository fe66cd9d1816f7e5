import { useEffect, useMemo, useRef, useState } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useApp } from '../../store';
import { callOptional, type UiError } from '../../api/api';
import { ErrorBox } from '../../ui/ErrorBox';
import { buildSpanTree, formatMs, type SpanIn } from './spanTree';
import { count } from '../../ui/numbers';

const ROW_HEIGHT = 24;
/** Indentation a level, in px, up to this many levels (deeper rows say their depth instead). */
const INDENT = 14;
const MAX_INDENT_LEVELS = 24;
/** A live run's spans are read again at most this often as it grows. */
const REFRESH_MS = 1000;

interface Loaded {
  runId: string;
  spans: SpanIn[];
  truncated: boolean;
}

/** The spans of the selected run, read again (throttled) as its head moves. */
function useSpans(runId: string, head: number): { data: Loaded | null; error: UiError | null } {
  const [data, setData] = useState<Loaded | null>(null);
  const [error, setError] = useState<UiError | null>(null);
  const last = useRef({ runId: '', at: 0 });
  useEffect(() => {
    let cancelled = false;
    const fresh = last.current.runId !== runId;
    const wait = fresh ? 0 : Math.max(0, last.current.at + REFRESH_MS - Date.now());
    const timer = setTimeout(() => {
      last.current = { runId, at: Date.now() };
      void callOptional('run.spans', { run_id: runId }).then((r) => {
        if (cancelled) return;
        if (r.ok) {
          setData({ runId, spans: r.value.spans, truncated: r.value.truncated });
          setError(null);
        } else setError(r.error);
      });
    }, wait);
    return () => {
      cancelled = true;
      clearTimeout(timer);
    };
  }, [runId, head]);
  return { data: data?.runId === runId ? data : null, error };
}

/**
 * The span tree of a run received over OTLP: spans nested by parent span id, each with its
 * duration and a bar on one time axis (a waterfall). Only the rows in view are drawn. A click
 * selects the span's first event (payload and state follow).
 */
export function SpanTree() {
  const runId = useApp((s) => s.runId)!;
  const head = useApp((s) => s.head);
  const viewSeq = useApp((s) => s.viewSeq);
  const { data, error } = useSpans(runId, head);
  const tree = useMemo(() => (data ? buildSpanTree(data.spans) : null), [data]);
  const parentRef = useRef<HTMLDivElement>(null);
  const rows = tree?.rows ?? [];
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => parentRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 12,
  });

  if (error) return <ErrorBox error={error} what="Reading the spans" />;
  if (!tree) return <div className="loading">Reading the spans…</div>;
  if (rows.length === 0)
    return (
      <div className="loading" data-testid="span-tree-empty">
        No spans in this run{head > 0 ? ' (its records are logs or metrics only)' : ' yet'}.
      </div>
    );
  const total = tree.total_ms || 1;
  return (
    <div className="span-tree" data-testid="span-tree" data-spans={rows.length}>
      <div className="span-head dim">
        <span>
          {count(rows.length)} span{rows.length === 1 ? '' : 's'}
          {data?.truncated ? ' (the first ones only)' : ''}
        </span>
        <span className="mono">{formatMs(tree.total_ms)}</span>
      </div>
      <div ref={parentRef} className="span-scroll" role="tree">
        <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
          {virtualizer.getVirtualItems().map((item) => {
            const r = rows[item.index]!;
            const s = r.span;
            const left = (r.offset_ms / total) * 100;
            const width = Math.max((r.duration_ms / total) * 100, 0.3);
            const indent = Math.min(r.depth, MAX_INDENT_LEVELS) * INDENT;
            return (
              <div
                key={s.span_id}
                role="treeitem"
                aria-level={r.depth + 1}
                aria-selected={viewSeq === s.seq}
                className={`span-row${viewSeq === s.seq ? ' selected' : ''}${s.status === 2 ? ' is-error' : ''}`}
                style={{ top: item.start, height: ROW_HEIGHT }}
                data-testid="span-row"
                data-span-id={s.span_id}
                data-parent-span-id={s.parent_span_id ?? ''}
                data-depth={r.depth}
                data-seq={s.seq}
                data-duration-ms={r.duration_ms}
                title={`${s.name} · ${s.kind} · seq ${s.seq}${r.orphan ? ' · its parent span has not been received' : ''}`}
                onClick={() => useApp.getState().setSeq(s.seq)}
              >
                <span className="span-name" style={{ paddingLeft: indent }}>
                  {r.depth > MAX_INDENT_LEVELS && <span className="dim mono">{r.depth}›</span>}
                  {r.orphan && (
                    <span className="dim" aria-label="parent not received">
                      ⤷{' '}
                    </span>
                  )}
                  <span className="mono" data-testid="span-name">
                    {s.name}
                  </span>
                  {s.status === 2 && <span className="badge bad">error</span>}
                </span>
                <span className="span-dur mono" data-testid="span-duration">
                  {formatMs(r.duration_ms)}
                </span>
                <span className="span-track">
                  <span className="span-bar" style={{ left: `${left}%`, width: `${width}%` }} />
                </span>
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}
