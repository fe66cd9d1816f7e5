import { canonicalJson } from '../../shared/protocol';
import type { StoredEvent } from '../ledger';
import type { RunResult } from './host';

/**
 * Replay's check: a replayed run against its source, event by event, on the kinds that carry
 * decisions and results, with ids, times and durations set aside.
 */
export interface Divergence {
  seq: number;
  /** Real agents' replays: why the run first differs (decision, environment, request, structure, agent_version). */
  cause?: string;
  reason?: string;
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

interface DivergedPayload {
  cause?: string;
  reason?: string;
  source_seq?: number | null;
  call_id?: string;
  tool?: string;
  expected?: unknown;
  actual?: unknown;
}

/** What a replay_diverged the hooks wrote (no reason of its own) says, in words. */
function reasonOf(p: DivergedPayload): string {
  const call = `${p.tool ? `${p.tool} ` : ''}call ${p.call_id ?? '?'}`;
  if (p.cause === 'environment') return `the result of ${call} differs from the recorded one`;
  if (p.cause === 'decision') {
    const said = (x: unknown) => {
      const o = (x ?? {}) as { allowed?: boolean; rule?: string };
      return `${o.allowed ? 'allowed' : 'denied'}${o.rule ? ` (${o.rule})` : ''}`;
    };
    return `${call} was ${said(p.actual)}, recorded ${said(p.expected)}`;
  }
  return `${p.cause ?? 'unknown'} divergence`;
}

/**
 * A real agent's replay against its source: the first `replay_diverged` event the replay recorded
 * (the gateway, the hooks and the results name the cause as it happens), else a different ending
 * (a turn more or fewer, an early stop: structure), else none. `seq` is the source run's event
 * where the two part.
 */
export function realDivergence(
  source: readonly StoredEvent[],
  replayed: readonly StoredEvent[],
): Divergence | null {
  const d = replayed.find((e) => e.kind === 'replay_diverged');
  if (d) {
    const p = d.payload as DivergedPayload;
    const at = typeof p.source_seq === 'number' ? source.find((e) => e.seq === p.source_seq) : undefined;
    return {
      seq: p.source_seq ?? (source.at(-1)?.seq ?? 0) + 1,
      cause: p.cause,
      reason: p.reason ?? reasonOf(p),
      expected: at ? { seq: at.seq, ...comparable(at) } : null,
      actual: { seq: d.seq, kind: d.kind, payload: d.payload },
    };
  }
  const exchanges = (es: readonly StoredEvent[]) => es.filter((e) => e.kind === 'model_responded');
  const a = exchanges(source);
  const b = exchanges(replayed);
  const end = (es: readonly StoredEvent[]) =>
    es.find((e) => e.kind === 'judge_verdict' || e.kind === 'run_failed');
  const ea = end(source);
  const eb = end(replayed);
  const passed = (e: StoredEvent | undefined) => (e?.payload as { passed?: boolean } | undefined)?.passed;
  if (a.length !== b.length || ea?.kind !== eb?.kind || passed(ea) !== passed(eb)) {
    const k = Math.min(a.length, b.length);
    const x = a[k] ?? ea;
    return {
      seq: x?.seq ?? (source.at(-1)?.seq ?? 0) + 1,
      cause: 'structure',
      reason: `the replay made ${b.length} model calls (recorded: ${a.length}) and ended ${eb?.kind ?? 'without a verdict'}`,
      expected: x ? { seq: x.seq, ...comparable(x) } : null,
      actual: b[k] ? { seq: b[k].seq, ...comparable(b[k]) } : null,
    };
  }
  return null;
}

/**
 * A replay against its source, for either agent: a real agent's run (its run_started names an
 * agent other than sim) by realDivergence, the simulated agent's by firstDivergence.
 */
export function replayDivergence(
  source: readonly StoredEvent[],
  replayed: readonly StoredEvent[],
): Divergence | null {
  const started = source.find((e) => e.kind === 'run_started');
  const name = (started?.payload as { agent?: { name?: unknown } } | undefined)?.agent?.name;
  return typeof name === 'string' && name !== 'sim'
    ? realDivergence(source, replayed)
    : firstDivergence(source, replayed);
}
