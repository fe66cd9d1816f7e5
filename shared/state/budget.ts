import { usageOf } from '../formats';
import { STATE_CAPS, type FoldEvent, type RunState } from './types';

/**
 * The run's use of its budgets as the fold counts it (steps, tokens, wall time) and which budgets
 * that use has reached; evolve calls these on every event it folds, changing `s` in place (a draft
 * of the next state, see evolve.ts).
 */

/** Wall time since the run started (0 before it did). */
function wallMs(startedMs: number | null, at: string): number {
  if (startedMs === null) return 0;
  const d = Date.parse(at) - startedMs;
  // `at` is for people and durations, never for order: a clock that stepped back gives 0, not < 0.
  return Number.isFinite(d) && d > 0 ? d : 0;
}

export function overBudgets(limits: Record<string, number>, used: RunState['budget']['used']): string[] {
  const out: string[] = [];
  for (const [name, limit] of Object.entries(limits)) {
    const u = (used as Record<string, number>)[name];
    if (typeof u === 'number' && u >= limit) out.push(name);
  }
  return out;
}

function hasAny(o: Record<string, unknown>): boolean {
  for (const _k in o) return true;
  return false;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** Tokens an imported event reports in its format's own way (FormatView.usage), into budget.used. */
export function countUsage(s: RunState, event: FoldEvent): void {
  const p = event.payload as unknown;
  if (typeof p !== 'object' || p === null || Array.isArray(p)) return;
  const u = usageOf(event.fmt, event.kind, event.payload, {
    seq: event.seq,
    run_id: event.run_id,
    source: event.source,
  });
  if (u === null) return;
  if ('total' in u) {
    withUse(s, event.at, u.total - s.budget.used.tokens, 0);
    return;
  }
  const recent = s.usage_recent;
  const i = recent.findIndex((r) => r.key === u.key);
  const counted = i >= 0 ? recent[i]!.tokens : 0;
  const rest = i >= 0 ? [...recent.slice(0, i), ...recent.slice(i + 1)] : recent;
  s.usage_recent = [...rest, { key: u.key, tokens: u.tokens }].slice(-STATE_CAPS.usage_keys);
  withUse(s, event.at, u.tokens - counted, 0);
}

export function withUse(s: RunState, at: string, addTokens: number, addSteps: number): void {
  const prev = s.budget.used;
  const wall = wallMs(s.started_ms, at);
  if (addTokens === 0 && addSteps === 0 && wall === prev.wall_ms) return;
  const used = { steps: prev.steps + addSteps, tokens: prev.tokens + addTokens, wall_ms: wall };
  const over =
    s.budget.over.length === 0 && !hasAny(s.budget.limits)
      ? s.budget.over
      : overBudgets(s.budget.limits, used);
  s.step = used.steps;
  s.budget = { ...s.budget, used, over: sameList(over, s.budget.over) ? s.budget.over : over };
}
