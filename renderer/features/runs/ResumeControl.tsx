import { useEffect, useState } from 'react';
import { callOptional } from '../../api/api';
import type { RunSummary } from '../../api/types';
import { useApp } from '../../store';
import { resumability, type Resumability } from '../../../shared/resume';
import { OUTCOME_TEXT } from '../../../shared/outcome';

/**
 * Resume for a run ProofLoop executed that stopped before its end (a crashed model, a failed host,
 * a writer that died): continues it from its ledger. Where resume cannot help (a verdict, a spent
 * budget, a tool's failure, a real agent's run) the button is off and says why.
 */
export function ResumeControl({ run }: { run: RunSummary }) {
  const busy = useApp((s) => s.actionBusy);
  const resume = useApp((s) => s.resume);
  const [r, setR] = useState<Resumability | null>(null);
  // Offered on every run that did not pass: one that stopped (failed, or a writer that died) may
  // be resumable; one the judge failed or whose budget ran out says why it is not.
  const stopped =
    run.status === 'failed' ||
    (run.status === 'running' && run.writer === null) ||
    (run.outcome != null && OUTCOME_TEXT[run.outcome].failed);
  const { run_id, head_seq, status, source, writer } = run;
  useEffect(() => {
    setR(null);
    if (!stopped) return;
    let cancelled = false;
    void callOptional('events.read', {
      run_id,
      kinds: ['run_started', 'run_completed', 'run_failed'],
      limit: 100_000,
    }).then((res) => {
      if (cancelled || !res.ok) return;
      const evs = res.value.events;
      const start = evs.find((e) => e.kind === 'run_started');
      const agent = (start?.payload as { agent?: { name?: unknown } } | undefined)?.agent?.name;
      const end = [...evs].reverse().find((e) => e.kind === 'run_completed' || e.kind === 'run_failed');
      setR(
        resumability({
          source,
          status,
          writing: writer !== null,
          agent: typeof agent === 'string' ? agent : null,
          end: end ? { kind: end.kind, payload: end.payload as Record<string, unknown> } : null,
        }),
      );
    });
    return () => {
      cancelled = true;
    };
  }, [run_id, head_seq, status, source, writer, stopped]);
  if (!stopped || !r) return null;
  return (
    <>
      <button
        type="button"
        className="btn small"
        data-testid="resume-button"
        disabled={busy || !r.ok}
        aria-disabled={!r.ok}
        title={r.ok ? `Resume: ${r.why}` : `Cannot resume: ${r.why}`}
        onClick={() => void resume()}
      >
        ⏵ Resume
      </button>
      {!r.ok && (
        <span className="dim small-note" data-testid="resume-why" title={r.why}>
          {r.short}
        </span>
      )}
    </>
  );
}
