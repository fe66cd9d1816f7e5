import { canonicalJson } from '../../shared/protocol';
import type { StoredEvent } from '../ledger';
import type { RunResult } from './host';

/**
 * Replay's check: a replayed run against its source, event by event, on the kinds that carry
 * decisions and results, with ids, times and durations set aside.
 */
export interface Divergence {
  seq: number;
  expected: { seq: number; kind: string; payload: unknown } | null;
  actual: { seq: number; kind: string; payload: unknown } | null;
}

export interface ReplayReport {
  ok: boolean;
  first_divergence: Divergence | null;
  run_id: string;
  result: RunResult;
}

/** Kinds that carry decisions and results; lifecycle events (start, crash, resume) are not compared. */
const COMPARED = new Set([
  'model_proposed',
  'action_allowed',
  'action_denied',
  'tool_invoked',
  'tool_returned',
  'tool_timed_out',
  'file_changed',
  'model_responded',
  'judge_verdict',
  'budget_exhausted',
]);

/** An event with ids, times and durations set aside: what must be equal between equivalent runs. */
export function comparable(e: StoredEvent): { kind: string; payload: Record<string, unknown> } {
  const { duration_ms: _d, rerun: _r, ...payload } = e.payload as Record<string, unknown>;
  if (e.kind === 'budget_exhausted' && payload.budget === 'wall_ms') delete payload.used;
  if (e.kind === 'run_started') {
    delete payload.mode;
    delete payload.of;
  }
  return { kind: e.kind, payload };
}

export function firstDivergence(
  source: readonly StoredEvent[],
  replayed: readonly StoredEvent[],
): Divergence | null {
  const a = source.filter((e) => COMPARED.has(e.kind));
  const b = replayed.filter((e) => COMPARED.has(e.kind));
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[i];
    const y = b[i];
    const cx = x ? comparable(x) : null;
    const cy = y ? comparable(y) : null;
    if (canonicalJson(cx) !== canonicalJson(cy)) {
      return {
        seq: x?.seq ?? (source.at(-1)?.seq ?? 0) + 1,
        expected: x && cx ? { seq: x.seq, ...cx } : null,
        actual: y && cy ? { seq: y.seq, ...cy } : null,
      };
    }
  }
  return null;
}
