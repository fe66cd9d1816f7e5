import { useEffect, useRef, useState } from 'react';
import { call, type UiError } from '../../api/api';
import { useApp } from '../../store';
import { ErrorBox } from '../../ui/ErrorBox';
import { ALL_KINDS, SESSION_KINDS, toneOf } from '../../ui/kinds';
import { useRunFormat } from '../formats/useRunFormat';
import { isSessionFormat } from '../../../shared/formats';
import { KindIcon } from '../../ui/icons';
import { count } from '../../ui/numbers';

function useAutofocus() {
  const ref = useRef<HTMLInputElement>(null);
  useEffect(() => ref.current?.focus(), []);
  return ref;
}

function Popover({ title, children, testId }: { title: string; children: React.ReactNode; testId: string }) {
  const close = useApp((s) => s.setOverlay);
  return (
    <div
      className="popover"
      data-testid={testId}
      onKeyDown={(e) => {
        if (e.key === 'Escape') {
          e.stopPropagation();
          close(null);
        }
      }}
    >
      <div className="popover-title">
        {title}
        <button type="button" className="btn ghost small" onClick={() => close(null)} aria-label="Close">
          ✕
        </button>
      </div>
      {children}
    </div>
  );
}

export function GotoBox() {
  const head = useApp((s) => s.head);
  const setSeq = useApp((s) => s.setSeq);
  const close = useApp((s) => s.setOverlay);
  const [text, setText] = useState('');
  const ref = useAutofocus();
  const n = Number(text);
  const valid = Number.isInteger(n) && n >= 1 && n <= head;
  return (
    <Popover title="Go to seq" testId="goto-box">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (!valid) return;
          setSeq(n);
          close(null);
        }}
      >
        <input
          ref={ref}
          className="input mono"
          inputMode="numeric"
          value={text}
          onChange={(e) => setText(e.target.value.trim())}
          placeholder={`1 – ${head}`}
          data-testid="goto-input"
        />
        {text && !valid && <div className="hint bad-text">seq must be a whole number from 1 to {head}</div>}
      </form>
    </Popover>
  );
}

/** Hits read at most for one search (their seqs only); more are counted as "+". */
const SEARCH_LIMIT = 10_000;

/** The hit after (or before) `seq`, wrapping around the run; and whether it wrapped. */
export function stepHit(
  seqs: readonly number[],
  seq: number,
  dir: 1 | -1,
): { seq: number; wrapped: boolean } | null {
  if (seqs.length === 0) return null;
  if (dir === 1) {
    const next = seqs.find((s) => s > seq);
    return next !== undefined ? { seq: next, wrapped: false } : { seq: seqs[0]!, wrapped: true };
  }
  const prev = seqs.findLast((s) => s < seq);
  return prev !== undefined ? { seq: prev, wrapped: false } : { seq: seqs.at(-1)!, wrapped: true };
}

export function SearchBox() {
  const runId = useApp((s) => s.runId)!;
  const setSeq = useApp((s) => s.setSeq);
  const hits = useApp((s) => (s.searchHits?.run_id === s.runId ? s.searchHits : null));
  const setHits = useApp((s) => s.setSearchHits);
  const seq = useApp((s) => s.viewSeq);
  const [text, setText] = useState(hits?.text ?? '');
  const [wrapped, setWrapped] = useState(false);
  const [error, setError] = useState<UiError | null>(null);
  const [busy, setBusy] = useState(false);
  const ref = useAutofocus();

  async function find(direction: 'forward' | 'backward') {
    if (!text) return;
    let h = hits?.text === text ? hits : null;
    if (!h) {
      setBusy(true);
      // Every hit's seq at once (the text is searched in the ledger): counted, marked, stepped through.
      const r = await call('events.search', {
        run_id: runId,
        text,
        from: 0,
        direction: 'forward',
        limit: SEARCH_LIMIT,
      });
      setBusy(false);
      if (!r.ok) return setError(r.error);
      setError(null);
      h = { run_id: runId, text, seqs: r.value.seqs, capped: r.value.seqs.length >= SEARCH_LIMIT };
      setHits(h);
    }
    const next = stepHit(h.seqs, useApp.getState().seq, direction === 'forward' ? 1 : -1);
    setWrapped(next?.wrapped ?? false);
    if (next) setSeq(next.seq);
  }

  const at = hits ? hits.seqs.indexOf(seq) : -1;
  const hitCount = hits ? `${count(hits.seqs.length)}${hits.capped ? '+' : ''}` : '';
  return (
    <Popover title="Search payloads" testId="search-box">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void find('forward');
        }}
      >
        <input
          ref={ref}
          className="input mono"
          value={text}
          onChange={(e) => {
            setText(e.target.value);
            setWrapped(false);
            if (hits) setHits(null);
          }}
          placeholder="text in kind or payload"
          data-testid="search-input"
          onKeyDown={(e) => {
            if (e.key === 'Enter' && e.shiftKey) {
              e.preventDefault();
              void find('backward');
            }
          }}
        />
        <div className="row-gap">
          <button
            type="button"
            className="btn small"
            onClick={() => void find('backward')}
            disabled={busy || !text}
          >
            ↑ Previous
          </button>
          <button type="submit" className="btn small" disabled={busy || !text}>
            ↓ Next
          </button>
          <span className="dim" data-testid="search-status">
            {busy
              ? 'searching…'
              : hits
                ? hits.seqs.length === 0
                  ? `no match for "${hits.text}"`
                  : `${at >= 0 ? `${at + 1} of ${hitCount}` : `${hitCount} match${hits.seqs.length === 1 ? '' : 'es'}`}${
                      wrapped ? ' · wrapped' : ''
                    }`
                : 'Enter: next · Shift+Enter: previous'}
          </span>
          {hits && hits.seqs.length > 0 && (
            <button
              type="button"
              className="btn small ghost"
              data-testid="search-clear"
              onClick={() => setHits(null)}
            >
              Clear marks
            </button>
          )}
        </div>
        {error && <ErrorBox error={error} what="Search" />}
      </form>
    </Popover>
  );
}

export function KindFilter() {
  const filter = useApp((s) => s.filter);
  const setKindFilter = useApp((s) => s.setKindFilter);
  const close = useApp((s) => s.setOverlay);
  const [picked, setPicked] = useState<Set<string>>(new Set(filter?.kinds ?? []));
  // Sessions of other programs have kinds of their own (prompts, reasoning) beside v1's.
  const session = isSessionFormat(useRunFormat());
  const kinds = session ? [...ALL_KINDS, ...SESSION_KINDS] : ALL_KINDS;
  const toggle = (k: string) => {
    const next = new Set(picked);
    if (next.has(k)) next.delete(k);
    else next.add(k);
    setPicked(next);
  };
  return (
    <Popover title="Show only these kinds" testId="kind-filter">
      <div className="kind-grid">
        {kinds.map((k) => (
          <label key={k} className={`kind-check tone-${toneOf(k)}`}>
            <input type="checkbox" checked={picked.has(k)} onChange={() => toggle(k)} data-kind={k} />
            <KindIcon tone={toneOf(k)} />
            <span className="mono">{k}</span>
          </label>
        ))}
      </div>
      <div className="row-gap">
        <button
          type="button"
          className="btn small primary"
          data-testid="kind-filter-apply"
          onClick={() => {
            void setKindFilter([...picked]);
            close(null);
          }}
        >
          Apply
        </button>
        <button
          type="button"
          className="btn small"
          onClick={() => {
            void setKindFilter([]);
            close(null);
          }}
        >
          Show all
        </button>
      </div>
    </Popover>
  );
}

export function HelpBox() {
  const keys: [string, string][] = [
    ['← → / j k', 'previous / next event'],
    ['Shift + → / Shift + j', 'next denial, error, timeout, budget or verdict'],
    ['Shift + ←', 'previous notable event'],
    ['Home / End', 'first / last event'],
    ['PageUp / PageDown', '25 events back / ahead'],
    ['g', 'go to seq'],
    ['/', 'search payloads'],
    ['f', 'filter kinds'],
    ['Esc', 'close'],
  ];
  return (
    <Popover title="Keyboard" testId="help-box">
      <table className="keys">
        <tbody>
          {keys.map(([k, d]) => (
            <tr key={k}>
              <td className="mono">{k}</td>
              <td>{d}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Popover>
  );
}
