import { memo, useCallback, useRef } from 'react';
import { useApp } from '../../store';
import type { Marker } from '../../store/timelineSlice';
import { toneOf } from '../../ui/kinds';

const pos = (seq: number, head: number) => (head <= 1 ? 0 : ((seq - 1) / (head - 1)) * 100);

const Markers = memo(function Markers({ markers, head }: { markers: Marker[]; head: number }) {
  return (
    <>
      {markers.map((m) => (
        <span
          key={m.seq}
          className={`scrub-marker tone-${toneOf(m.kind)}`}
          style={{ left: `${pos(m.seq, head)}%` }}
          data-testid="scrub-marker"
          data-seq={m.seq}
          data-kind={m.kind}
          title={`seq ${m.seq} ${m.kind}`}
        />
      ))}
    </>
  );
});

/** The payload search's hits: thin marks under the ticks (at most one per pixel column matters). */
const Hits = memo(function Hits({ seqs, head }: { seqs: readonly number[]; head: number }) {
  const shown = seqs.length > 2000 ? seqs.filter((_, i) => i % Math.ceil(seqs.length / 2000) === 0) : seqs;
  return (
    <>
      {shown.map((s) => (
        <span
          key={s}
          className="scrub-hit"
          style={{ left: `${pos(s, head)}%` }}
          data-testid="scrub-hit"
          data-seq={s}
        />
      ))}
    </>
  );
});

function Thumb({ head, seq }: { head: number; seq: number }) {
  return <span className="scrub-thumb" style={{ left: `${pos(seq, head)}%` }} />;
}

/** A bar over the whole run: drag or click to scrub; ticks mark denials, errors, timeouts, budget and verdicts. */
export function Scrubber() {
  const head = useApp((s) => s.head);
  const markers = useApp((s) => s.markers);
  const setSeq = useApp((s) => s.setSeq);
  const setFollow = useApp((s) => s.setFollow);
  const seq = useApp((s) => s.viewSeq);
  const hits = useApp((s) => (s.searchHits?.run_id === s.runId ? s.searchHits.seqs : null));
  const ref = useRef<HTMLDivElement>(null);
  const seqAtX = useCallback(
    (clientX: number) => {
      const r = ref.current!.getBoundingClientRect();
      const f = Math.max(0, Math.min(1, (clientX - r.left) / Math.max(1, r.width)));
      return Math.round(f * (head - 1)) + 1;
    },
    [head],
  );
  return (
    <div
      ref={ref}
      className="scrubber"
      data-testid="scrubber"
      role="slider"
      aria-label="Scrub through the run"
      aria-valuemin={head > 0 ? 1 : 0}
      aria-valuemax={head}
      aria-valuenow={seq}
      tabIndex={-1}
      onPointerDown={(e) => {
        if (head === 0) return;
        (e.target as Element).setPointerCapture?.(e.pointerId);
        setFollow(false);
        setSeq(seqAtX(e.clientX));
      }}
      onPointerMove={(e) => {
        if (e.buttons & 1 && head > 0) setSeq(seqAtX(e.clientX));
      }}
    >
      <div className="scrub-track" />
      <Markers markers={markers} head={head} />
      {hits && <Hits seqs={hits} head={head} />}
      <Thumb head={head} seq={seq} />
    </div>
  );
}
