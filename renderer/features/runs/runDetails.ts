import { useEffect, useRef } from 'react';
import { call } from '../../api/api';
import type { RunSummary } from '../../api/types';
import { useApp } from '../../store';
import { runDetailsOf, type RunDetails } from '../../store/runsQuery';
import { RUNS_DETAILS_MAX } from '../../../shared/api/limits';
import { dict } from '../../../shared/dict';

/**
 * The rows that came into view, asked for in one `runs.details` call per batch, one batch in
 * flight: a row per request (twice: its summary and its state) took several round trips before a
 * small folder's titles showed, each costing the page's busy first moments (bench/peer.ts).
 */
const waiting = new Map<string, RunSummary>(); // run_id → the row as it was when it came into view
const asked = new Map<string, number>(); // run_id → head_seq asked for
let inFlight = false;
let timer: ReturnType<typeof setTimeout> | null = null;

async function flush(): Promise<void> {
  timer = null;
  if (inFlight || waiting.size === 0) return;
  // The rows that came into view last are the ones on screen now.
  const batch = [...waiting.values()].slice(-RUNS_DETAILS_MAX);
  for (const r of batch) waiting.delete(r.run_id);
  inFlight = true;
  try {
    const r = await call('runs.details', { run_ids: batch.map((x) => x.run_id) });
    if (!r.ok) {
      // Asked again when the row next comes into view.
      for (const x of batch) asked.delete(x.run_id);
      return;
    }
    const got = dict<RunDetails>();
    for (const d of r.value) got[d.run_id] = runDetailsOf(d, d);
    useApp.getState().setRunsDetails(got);
  } finally {
    inFlight = false;
    if (waiting.size > 0) schedule();
  }
}

/** Rows that come into view in the same frame (each row has its own observer) make one call. */
function schedule(): void {
  timer ??= setTimeout(() => void flush(), 0);
}

function request(run: RunSummary): void {
  if (asked.get(run.run_id) === run.head_seq) return;
  asked.set(run.run_id, run.head_seq);
  waiting.delete(run.run_id);
  waiting.set(run.run_id, run);
  schedule();
}

/** Asks for a run's details once its row is on screen (and again when the run has grown). */
export function useRunDetailsOnScreen(run: RunSummary) {
  const ref = useRef<HTMLLIElement>(null);
  const details = useApp((s) => s.runDetails[run.run_id]);
  // A glance from the list has no counts yet (calls === null): the row asks for them.
  const stale = details?.head_seq !== run.head_seq || details.calls === null;
  useEffect(() => {
    const el = ref.current;
    if (!el || !stale) return;
    const io = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) {
        io.disconnect();
        request(run);
      }
    });
    io.observe(el);
    return () => io.disconnect();
  }, [run, stale]);
  return { ref, details };
}
