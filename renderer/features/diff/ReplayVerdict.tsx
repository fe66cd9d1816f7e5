import type { ReplayVerdict } from '../../api/types';

/** What each cause of a real agent's divergence means (electron/runner/divergence.ts names them). */
export const CAUSE_TEXT: Record<string, string> = {
  decision: 'the policy decided a call otherwise',
  environment: 'a tool’s result differs: the workspace or a command’s output changed',
  request: 'a request changed: system prompt, instructions, tool list or settings',
  structure: 'a turn more or fewer, or an early stop',
  agent_version: 'the agent’s version changed',
  config: 'the --config folder the run used changed',
  model: 'the same request was answered otherwise',
};

/**
 * A replay's verdict in one line: no divergence, or the source run's seq where the two part and
 * why. `onSeq` makes the seq a button (e.g. select that row of the diff).
 */
export function ReplayVerdictLine({
  verdict,
  real,
  onSeq,
}: {
  verdict: ReplayVerdict;
  /** A real agent's replay (the model frozen) rather than the simulated agent's (proposals replayed). */
  real: boolean;
  onSeq?: (seq: number) => void;
}) {
  const d = verdict.first_divergence;
  const sofar = verdict.ended ? '' : ' so far (the replay is still running)';
  if (!d)
    return (
      <span
        className="ok-text"
        data-testid="replay-verdict"
        data-divergence="none"
        data-ended={verdict.ended ? 'true' : 'false'}
      >
        No divergence{sofar}:{' '}
        {real
          ? 'every request matched the recording, and every decision and tool result is the source’s'
          : 'every decision and tool result matches the recording'}
        .
      </span>
    );
  const seq = onSeq ? (
    <button
      type="button"
      className="linklike mono"
      data-testid="replay-verdict-seq"
      onClick={() => onSeq(d.seq)}
    >
      {d.seq}
    </button>
  ) : (
    <span className="mono">{d.seq}</span>
  );
  return (
    <span
      className="bad-text"
      data-testid="replay-verdict"
      data-divergence={d.cause ?? 'event'}
      data-seq={d.seq}
      data-ended={verdict.ended ? 'true' : 'false'}
    >
      First divergence{sofar} at seq {seq} of the source
      {d.cause ? (
        <>
          {' '}
          — cause <b data-testid="replay-verdict-cause">{d.cause}</b>
          {CAUSE_TEXT[d.cause] ? ` (${CAUSE_TEXT[d.cause]})` : ''}
          {d.reason ? <span className="verdict-reason">: {d.reason}</span> : null}
        </>
      ) : (
        <>
          {' '}
          (expected {d.expected_kind ?? 'nothing'}, got {d.actual_kind ?? 'nothing'})
        </>
      )}
    </span>
  );
}
