import type { Ledger } from '../ledger';
import { replayDivergence } from '../runner/divergence';

/**
 * Runs longer than this are not compared for a replay verdict in the diff (both are read whole);
 * the runner's replays are tens to thousands of events.
 */
const MAX_EVENTS = 200_000;

export interface ReplayVerdict {
  source: string;
  replay: string;
  ended: boolean;
  first_divergence: {
    seq: number;
    cause: string | null;
    reason: string | null;
    expected_kind: string | null;
    actual_kind: string | null;
  } | null;
}

/**
 * Whether `replay`'s run_started says it replays `source`: mode replay of it (Replay, `proofloop
 * replay`), or a real agent's model answering from its recording (`--model-from replay:<source>`,
 * the task panel's replay source).
 */
function isReplayOf(ledger: Ledger, replay: string, source: string): boolean {
  const started = ledger.read(replay, { kinds: ['run_started'], limit: 1 })[0];
  const p = started?.payload as
    { mode?: unknown; of?: unknown; agent?: { model_from?: unknown } } | undefined;
  return (p?.mode === 'replay' && p.of === source) || p?.agent?.model_from === `replay:${source}`;
}

/**
 * The verdict of a replay when one of two diffed runs is a replay of the other (either side), as
 * `proofloop replay` gives it: the first divergence and, for a real agent, its cause. Null for
 * any other pair.
 */
export function replayVerdict(ledger: Ledger, left: string, right: string): ReplayVerdict | null {
  const pair = isReplayOf(ledger, right, left)
    ? { source: left, replay: right }
    : isReplayOf(ledger, left, right)
      ? { source: right, replay: left }
      : null;
  if (!pair) return null;
  const s = ledger.run(pair.source);
  const r = ledger.run(pair.replay);
  if (!s || !r || s.head_seq > MAX_EVENTS || r.head_seq > MAX_EVENTS) return null;
  const d = replayDivergence(ledger.read(pair.source), ledger.read(pair.replay));
  return {
    ...pair,
    ended: r.status === 'completed' || r.status === 'failed',
    first_divergence: d && {
      seq: d.seq,
      cause: d.cause ?? null,
      reason: d.reason ?? null,
      expected_kind: d.expected?.kind ?? null,
      actual_kind: d.actual?.kind ?? null,
    },
  };
}
