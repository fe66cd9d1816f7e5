import { useEffect, useRef } from 'react';
import { callOptional } from '../../api/api';
import type { RunSummary } from '../../api/types';
import { useApp } from '../../store';
import type { RunDetails } from '../../store/runsSlice';

/** Rows asked for at once: the list shows ~20; scrolling fast should not queue a thousand. */
const IN_FLIGHT = 3;

const queue: RunSummary[] = [];
const asked = new Map<string, number>(); // run_id → head_seq asked for
let running = 0;

async function load(run: RunSummary): Promise<void> {
  const [sum, at] = await Promise.all([
    callOptional('run.summary', { run_id: run.run_id }),
    run.head_seq > 0
      ? callOptional('state.at', { run_id: run.run_id, seq: run.head_seq })
      : Promise.resolve(null),
  ]);
  const st = at?.ok ? at.value.state : null;
  const s = sum.ok ? sum.value : null;
  const details: RunDetails = {
    head_seq: run.head_seq,
    project: s?.project ?? null,
    model: s?.model ?? null,
    title: s?.title ?? null,
    tokens: s?.tokens ?? (st && st.budget.used.tokens > 0 ? st.budget.used.tokens : null),
    calls: st ? st.calls.total : null,
    errors: st ? st.errors.total : null,
  };
  useApp.getState().setRunDetails(run.run_id, details);
}

function pump(): void {
  while (running < IN_FLIGHT && queue.length > 0) {
    const run = queue.pop()!; // newest request first: the rows on screen now
    running++;
    void load(run).finally(() => {
      running--;
      pump();
    });
  }
}

function request(run: RunSummary): void {
  if (asked.get(run.run_id) === run.head_seq) return;
  asked.set(run.run_id, run.head_seq);
  queue.push(run);
  pump();
}

/** Asks for a run's details once its row is on screen (and again when the run has grown). */
export function useRunDetailsOnScreen(run: RunSummary) {
  const ref = useRef<HTMLLIElement>(null);
  const details = useApp((s) => s.runDetails[run.run_id]);
  const stale = details?.head_seq !== run.head_seq;
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
