import { memo, useMemo, useState } from 'react';
import { useApp } from '../../store';
import type { StateChange } from '../../api/types';
import { marksFor } from '../../ui/JsonTree';
import { VirtualJsonTree } from '../../ui/VirtualJsonTree';
import { ErrorBox } from '../../ui/ErrorBox';

function short(v: unknown): string {
  if (v === undefined) return '∅';
  const s = JSON.stringify(v);
  return s.length > 80 ? `${s.slice(0, 79)}…` : s;
}

/**
 * Paths every step changes (the seq, the clock): listed after the change that matters, which a
 * person reads first.
 */
const BOOKKEEPING =
  /^(seq|last_at|last_ms|started_at|started_ms|projection)$|(^|\.)(wall_ms|elapsed_ms|used\.wall_ms)$/;
export const isBookkeeping = (path: string): boolean => BOOKKEEPING.test(path);

/** The changes, bookkeeping last, the order otherwise kept. */
export function byWhatMatters(changes: readonly StateChange[]): StateChange[] {
  return [...changes.filter((c) => !isBookkeeping(c.path)), ...changes.filter((c) => isBookkeeping(c.path))];
}

/** The first segment of a change's path (`calls[call_id=c1].status` → `calls`). */
const groupOf = (path: string): string => /^[^.[]+/.exec(path)?.[0] ?? path;

/** Changes listed at most, whatever `shown` asks for (the rest are counted). */
const MAX_LISTED = 100;

export const ChangeList = memo(function ChangeList({
  changes,
  truncated = 0,
  testId = 'state-changes',
  shown = MAX_LISTED,
}: {
  changes: StateChange[];
  truncated?: number;
  testId?: string;
  /** How many are listed before "show them" lists the rest (up to MAX_LISTED). */
  shown?: number;
}) {
  const [all, setAll] = useState(false);
  const ordered = useMemo(() => byWhatMatters(changes), [changes]);
  if (changes.length === 0)
    return (
      <div className="dim changes-none" data-testid={testId} data-count="0">
        no change from the seq before
      </div>
    );
  const listable = Math.min(changes.length, MAX_LISTED);
  const listed = all ? listable : Math.min(listable, shown);
  const more = changes.length - listed + truncated;
  return (
    <ul className="changes mono" data-testid={testId} data-count={changes.length}>
      {/* Keyed by position: the next step's list reuses these items and only rewrites their text. */}
      {ordered.slice(0, listed).map((c, i) => (
        <li
          key={i}
          data-testid="state-change"
          data-path={c.path}
          className={isBookkeeping(c.path) ? 'c-bookkeeping' : undefined}
        >
          <span className="c-path">{c.path}</span>
          <span className="c-old">{short(c.old)}</span>
          <span className="c-arrow">→</span>
          <span className="c-new">{short(c.new)}</span>
        </li>
      ))}
      {more > 0 ? (
        <li className="dim">
          … {more} more
          {listed < listable && (
            <>
              {' '}
              <button type="button" className="j-more" onClick={() => setAll(true)}>
                show them
              </button>
            </>
          )}
        </li>
      ) : null}
    </ul>
  );
});

/** A long list of changes (two runs' final states) by the part of the state each is in, each part folded. */
export function GroupedChanges({ changes, testId }: { changes: StateChange[]; testId: string }) {
  const groups = useMemo(() => {
    const m = new Map<string, StateChange[]>();
    for (const c of byWhatMatters(changes)) {
      const g = groupOf(c.path);
      m.set(g, [...(m.get(g) ?? []), c]);
    }
    return [...m.entries()];
  }, [changes]);
  return (
    <div className="change-groups" data-testid={testId} data-count={changes.length}>
      {groups.map(([g, list]) => (
        <details
          key={g}
          className="change-group"
          data-testid="change-group"
          data-group={g}
          open={groups.length <= 3}
        >
          <summary className="mono">
            {g} <span className="dim">({list.length})</span>
          </summary>
          <ChangeList changes={list} testId={`${testId}-${g}`} />
        </details>
      ))}
    </div>
  );
}

/**
 * Changes the state panel lists before "show them" (its box shows about seven). Listed whole, a
 * step that changes ~40 paths (a new turn) laid out and painted them all: the slowest steps of a
 * session (~+15 ms of layout and paint).
 */
const SHOWN_CHANGES = 12;

/** The state reconstructed at the selected seq, and what changed from seq − 1. */
export function StateView() {
  const seq = useApp((s) => s.viewSeq);
  const stateAt = useApp((s) => s.stateAt);
  const stateError = useApp((s) => s.stateError);
  const changes = useApp((s) => s.changes);
  const changesError = useApp((s) => s.changesError);
  const fresh = changes && changes.seq === stateAt?.seq ? changes.changes : null;
  const marks = useMemo(() => (fresh ? marksFor(fresh.map((c) => c.path)) : undefined), [fresh]);

  if (seq < 1) return <div className="panel state-panel" data-testid="state-view" />;
  const stale = stateAt !== null && stateAt.seq !== seq;
  return (
    <div
      className="panel state-panel"
      data-testid="state-view"
      data-seq={stateAt?.seq ?? ''}
      data-state={stale ? 'updating' : stateAt ? 'ready' : 'loading'}
    >
      <div className="panel-head">
        <span className="panel-title">
          State at seq <span className="mono">{stateAt?.seq ?? seq}</span>
        </span>
        {stateAt?.via && (
          <span className="dim mono" title="how the state was computed">
            via {stateAt.via}
            {typeof stateAt.folded === 'number' ? ` + ${stateAt.folded} folds` : ''}
          </span>
        )}
        <span className="spacer" />
        {stale && <span className="dim">updating…</span>}
      </div>
      {stateError && <ErrorBox error={stateError} what="State at seq" />}
      {!stateError && !stateAt && <div className="loading">Computing state…</div>}
      {stateAt && (
        <>
          <div className="state-changes-box">
            <div className="section-title">Changed from seq {stateAt.seq - 1}</div>
            {changesError ? (
              <ErrorBox error={changesError} what="Changes" />
            ) : fresh ? (
              <ChangeList changes={fresh} shown={SHOWN_CHANGES} />
            ) : (
              <div className="dim">…</div>
            )}
          </div>
          <div className="section-title">State</div>
          {/* Scrolls by itself and keeps only the lines in view in the DOM: a step re-renders a few lines. */}
          <VirtualJsonTree value={stateAt.state} openDepth={1} marks={marks} testId="state-tree" />
        </>
      )}
    </div>
  );
}
