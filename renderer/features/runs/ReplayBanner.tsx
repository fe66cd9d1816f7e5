import { useEffect, useState } from 'react';
import { callOptional } from '../../api/api';
import type { ReplayVerdict, RunSummary } from '../../api/types';
import { useApp } from '../../store';
import { ReplayVerdictLine } from '../diff/ReplayVerdict';
import { replayedRunOf, runAgentOf } from './runAgent';

/**
 * Over a replay's run: what it replays and how (the model frozen, or recorded proposals), while
 * it runs; once it has ended, its verdict (runs.diff's `replay`: the first divergence and its
 * cause) and the way to the diff of the two.
 */
export function ReplayBanner({ run }: { run: RunSummary }) {
  const of = replayedRunOf(run);
  const openDiff = useApp((s) => s.openDiff);
  const selectRun = useApp((s) => s.selectRun);
  const ended = run.status === 'completed' || run.status === 'failed';
  const [verdict, setVerdict] = useState<{ key: string; v: ReplayVerdict | null; error?: string } | null>(
    null,
  );
  const key = `${of}/${run.run_id}/${ended}`;
  useEffect(() => {
    if (!of || !ended) return;
    let live = true;
    void callOptional('runs.diff', { left: of, right: run.run_id }).then((r) => {
      if (live)
        setVerdict({
          key,
          v: r.ok ? (r.value.replay ?? null) : null,
          error: r.ok ? undefined : r.error.message,
        });
    });
    return () => {
      live = false;
    };
  }, [of, ended, run.run_id, key]);
  if (!of) return null;
  const real = (runAgentOf(run)?.agent ?? 'sim') !== 'sim';
  const v = verdict?.key === key ? verdict : null;
  const tone = !ended || !v?.v ? '' : v.v.first_divergence ? ' bad' : ' ok';
  return (
    <div className={`replay-banner${tone}`} data-testid="replay-banner">
      <span>
        ⟲ Replay of{' '}
        <button type="button" className="linklike mono" onClick={() => selectRun(of)}>
          {of}
        </button>
        {real
          ? ': the model frozen to its recorded answers; workspace, configuration and policy live. '
          : ': its recorded proposals, re-executed. '}
      </span>
      {!ended ? (
        <span className="dim" data-testid="replay-running">
          Replaying…
        </span>
      ) : v === null ? (
        <span className="dim">Comparing with the recording…</span>
      ) : v.v ? (
        <ReplayVerdictLine verdict={v.v} real={real} onSeq={(seq) => selectRun(of, seq)} />
      ) : (
        <span className="dim">{v.error ? `No verdict: ${v.error}` : 'No verdict for these two runs.'}</span>
      )}{' '}
      <button
        type="button"
        className="btn small"
        data-testid="replay-diff"
        title={`Diff ${of} (left) with this replay (right)`}
        onClick={() => void openDiff(of, run.run_id)}
      >
        Diff with the recording
      </button>
    </div>
  );
}
