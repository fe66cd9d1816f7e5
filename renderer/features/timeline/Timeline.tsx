import { useLayoutEffect, useMemo, useRef } from 'react';
import { observeElementOffset, useVirtualizer } from '@tanstack/react-virtual';
import { sizesAfterLayout } from '../../ui/virtual';
import { useApp } from '../../store';
import { runSummaryOf } from '../../store/runsSlice';
import { lowerBound } from '../../store/timelineSlice';
import { ErrorBox } from '../../ui/ErrorBox';
import { eventCache } from './eventCache';
import { TimelineRow } from './TimelineRow';
import { useRunFormat } from '../formats/useRunFormat';

export const ROW_HEIGHT = 22;
const OVERSCAN = 15;
/**
 * The scroll offset the list is rendered for moves in steps of this many pixels: a keyboard step
 * that scrolls the list by one row then changes no rendered row (the overscan below the view
 * still covers it), so it costs no second render and no second frame. Less than the overscan.
 */
const OFFSET_STEP = Math.floor(OVERSCAN / 2) * ROW_HEIGHT;

/** The run's events, virtualised: only the rows on screen exist, their pages fetched on demand. */
export function Timeline() {
  const runId = useApp((s) => s.runId)!;
  const head = useApp((s) => s.head);
  const filter = useApp((s) => s.filter);
  const firstAt = useApp((s) => runSummaryOf(s, s.runId)?.first_at ?? null);
  const timelineError = useApp((s) => s.timelineError);
  const fmt = useRunFormat();
  const setFollow = useApp((s) => s.setFollow);
  const cache = useMemo(() => eventCache(runId, head), [runId, head]);
  const runStart = firstAt ? Date.parse(firstAt) : null;
  const parentRef = useRef<HTMLDivElement>(null);
  const seqs = filter ? filter.seqs : null;
  const count = seqs ? seqs.length : head;

  const virtualizer = useVirtualizer({
    count,
    getScrollElement: () => parentRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: OVERSCAN,
    observeElementOffset: (instance, cb) =>
      observeElementOffset(instance, (offset, isScrolling) =>
        cb(Math.floor(offset / OFFSET_STEP) * OFFSET_STEP, isScrolling),
      ),
    // A scroll re-renders the rows in a task of its own, not inside the scroll event of the frame
    // that paints a step: the overscan rows cover the few pixels a step scrolls.
    useFlushSync: false,
    ...sizesAfterLayout<HTMLDivElement, Element>(),
  });

  // Keep the shown row in view without re-rendering the list on every step. Rows have one height,
  // so the row's offset is known without measuring; the scroll is written once, before React
  // commits the step, while the layout is still clean (no forced layout after a DOM write).
  useLayoutEffect(() => {
    const scrollTo = (seq: number) => {
      const el = parentRef.current;
      if (!el || seq < 1) return;
      const st = useApp.getState();
      const index = st.filter ? lowerBound(st.filter.seqs, seq) : seq - 1;
      if (index < 0 || index >= (st.filter ? st.filter.seqs.length : st.head)) return;
      const top = index * ROW_HEIGHT;
      const { scrollTop, clientHeight } = el;
      if (top < scrollTop) el.scrollTop = top;
      else if (top + ROW_HEIGHT > scrollTop + clientHeight) el.scrollTop = top + ROW_HEIGHT - clientHeight;
    };
    scrollTo(useApp.getState().viewSeq);
    return useApp.subscribe((s, prev) => {
      if (s.viewSeq !== prev.viewSeq) scrollTo(s.viewSeq);
    });
  }, [runId, count, seqs]);

  if (timelineError) return <ErrorBox error={timelineError} what="Reading the run" />;
  if (head === 0)
    return (
      <div className="loading" data-testid="timeline-empty">
        No events yet{useApp.getState().follow ? ' — waiting for the run to start…' : '.'}
      </div>
    );

  return (
    <div
      ref={parentRef}
      className="timeline"
      data-testid="timeline"
      role="grid"
      aria-rowcount={count}
      onWheel={() => {
        if (useApp.getState().follow) setFollow(false);
      }}
    >
      {filter?.loading && <div className="loading">Filtering…</div>}
      {filter?.error && <ErrorBox error={filter.error} what="Filtering" />}
      <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
        {virtualizer.getVirtualItems().map((item) => {
          const seq = seqs ? seqs[item.index]! : item.index + 1;
          return (
            <TimelineRow
              key={seq}
              seq={seq}
              cache={cache}
              fmt={fmt}
              runStart={runStart}
              top={item.start}
              height={ROW_HEIGHT}
            />
          );
        })}
      </div>
    </div>
  );
}
