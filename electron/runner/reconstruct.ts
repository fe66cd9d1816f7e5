import type { StoredEvent } from '../ledger';
import { readArtifact } from '../ledger/artifact-store';
import type { Action, Observation } from './protocol';

/**
 * A run's events read back as the host's state: its steps, counts and wall time (resume, replay),
 * and the observations the model was given. The texts below are what the model sees for a denied,
 * timed-out or interrupted call, live and when a run is resumed: one definition for both.
 */
export const timeoutText = (ms: number): string => `timed out after ${ms} ms; its process group was killed`;
export const interruptedText =
  'interrupted: the host died while this call ran; it was not run again because it may have had an effect';
export const deniedText = (d: { rule: string; reason: string }) => `denied by ${d.rule}: ${d.reason}`;

/** What the state of a run's calls is, rebuilt from its events. */
export interface CallRecord {
  call_id: string;
  tool: string;
  args: Record<string, unknown>;
  decision?: StoredEvent;
  invoked?: StoredEvent;
  result?: StoredEvent;
}

export type StepRecord =
  { kind: 'call'; call: CallRecord } | { kind: 'final'; responded: StoredEvent; verdict?: StoredEvent };

export interface Reconstructed {
  started: StoredEvent | undefined;
  steps: StepRecord[];
  last: StoredEvent | undefined;
  /** Wall time used by earlier segments (run_started / run_resumed to their last event). */
  wallUsed: number;
  tokens: number;
  proposals: number;
  judgeRuns: number;
}

/** Folds a run's events into the host's view: steps, counts, wall time used. */
export function reconstruct(events: readonly StoredEvent[]): Reconstructed {
  const r: Reconstructed = {
    started: undefined,
    steps: [],
    last: events.at(-1),
    wallUsed: 0,
    tokens: 0,
    proposals: 0,
    judgeRuns: 0,
  };
  const calls = new Map<string, CallRecord>();
  let segStart: number | null = null;
  let segLast: number | null = null;
  const closeSeg = () => {
    if (segStart !== null && segLast !== null) r.wallUsed += Math.max(0, segLast - segStart);
  };
  for (const e of events) {
    const p = e.payload as Record<string, unknown>;
    const t = Date.parse(e.at);
    if (e.kind === 'run_started' || e.kind === 'run_resumed') {
      closeSeg();
      segStart = t;
    }
    segLast = t;
    switch (e.kind) {
      case 'run_started':
        r.started = e;
        break;
      case 'model_proposed': {
        const c: CallRecord = {
          call_id: String(p.call_id),
          tool: String(p.tool),
          args: (p.args ?? {}) as Record<string, unknown>,
        };
        calls.set(c.call_id, c);
        r.steps.push({ kind: 'call', call: c });
        r.proposals += 1;
        r.tokens += Number(p.tokens ?? 0);
        break;
      }
      case 'action_allowed':
      case 'action_denied': {
        const c = calls.get(String(p.call_id));
        if (c) c.decision = e;
        break;
      }
      case 'tool_invoked': {
        const c = calls.get(String(p.call_id));
        if (c) c.invoked = e;
        break;
      }
      case 'tool_returned':
      case 'tool_timed_out': {
        const c = calls.get(String(p.call_id));
        if (c) c.result = e;
        break;
      }
      case 'model_responded':
        r.steps.push({ kind: 'final', responded: e });
        r.tokens += Number(p.tokens ?? 0);
        break;
      case 'judge_verdict': {
        const last = r.steps.at(-1);
        if (last?.kind === 'final') last.verdict = e;
        r.judgeRuns += 1;
        break;
      }
    }
  }
  closeSeg();
  return r;
}

/** The action a recorded step came from (replay uses these instead of the model). */
export function recordedActions(events: readonly StoredEvent[]): Action[] {
  const out: Action[] = [];
  for (const e of events) {
    const p = e.payload as Record<string, unknown>;
    if (e.kind === 'model_proposed') {
      out.push({
        kind: 'call',
        tool: String(p.tool),
        args: (p.args ?? {}) as Record<string, unknown>,
        tokens: Number(p.tokens ?? 0),
      });
    } else if (e.kind === 'model_responded') {
      out.push({
        kind: 'final',
        content: String(p.content),
        tokens: Number(p.tokens ?? 0),
        give_up: p.give_up === true,
      });
    }
  }
  return out;
}

/** The observation the model got for a finished call, rebuilt from the ledger (and artifacts). */
export function observationOf(runDir: string, c: CallRecord): Observation | null {
  const base = { kind: 'tool' as const, call_id: c.call_id, tool: c.tool };
  if (c.decision?.kind === 'action_denied') {
    const d = c.decision.payload as { rule: string; reason: string };
    return { ...base, status: 'denied', output: deniedText(d) };
  }
  if (!c.result) return null;
  const p = c.result.payload as Record<string, unknown>;
  if (c.result.kind === 'tool_timed_out')
    return { ...base, status: 'timeout', output: timeoutText(Number(p.timeout_ms)) };
  const art = (p.artifact as { digest?: string } | undefined)?.digest;
  const output = (art && readArtifact(runDir, art)) ?? String(p.excerpt ?? '');
  const status = String(p.status);
  return {
    ...base,
    status: status === 'interrupted' ? 'interrupted' : status === 'ok' ? 'ok' : 'error',
    output,
  };
}

export function verdictObservation(runDir: string, verdict: StoredEvent): Observation {
  const p = verdict.payload as Record<string, unknown>;
  const art = (p.artifact as { digest?: string } | undefined)?.digest;
  return {
    kind: 'verdict',
    passed: p.passed === true,
    tests_passed: Number(p.tests_passed ?? 0),
    tests_failed: Number(p.tests_failed ?? 0),
    output: (art && readArtifact(runDir, art)) ?? String(p.excerpt ?? ''),
  };
}
