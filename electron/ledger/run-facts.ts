import { interpret, isSessionFormat, type SourceRef } from '../../shared/formats';
import type { ImportedEvent } from './ledger';

/**
 * What the runs table learns from a batch of events: the latest status, and task and variant from
 * run_started. Appended events are protocol v1 as they are; imported ones read through their
 * format's view (shared/formats), and a session format's run has no outcome of its own.
 */
export interface RunFacts {
  status: string | null;
  task_id: string | null;
  variant: string | null;
}

// A Map, not an object literal: a run may carry any snake_case kind, `constructor` among them.
const STATUS_OF = new Map<string, string>([
  ['run_started', 'running'],
  ['run_resumed', 'running'],
  ['run_completed', 'completed'],
  ['run_failed', 'failed'],
]);

export function runFacts(items: readonly { kind: string; payload: Record<string, unknown> }[]): RunFacts {
  let status: string | null = null;
  let taskId: string | null = null;
  let variant: string | null = null;
  for (const p of items) {
    status = STATUS_OF.get(p.kind) ?? status;
    if (p.kind === 'run_started') {
      taskId = typeof p.payload.task_id === 'string' ? p.payload.task_id : null;
      const agent = p.payload.agent as { variant?: unknown } | undefined;
      variant = typeof agent?.variant === 'string' ? agent.variant : null;
    }
  }
  return { status, task_id: taskId, variant };
}

/** The facts of imported events of format `fmt`: only the status kinds are parsed. */
export function importedFacts(fmt: string, runId: string, events: readonly ImportedEvent[]): RunFacts {
  const facts = runFacts(
    events
      .filter((e) => STATUS_OF.has(e.kind))
      .map((e) => ({ kind: e.kind, payload: e.kind === 'run_started' ? startedAsV1(fmt, runId, e) : {} })),
  );
  // A session (Claude Code, Codex) has no outcome of its own: it is a recorded session. A recorded
  // trajectory of a session format (SWE-agent, OpenHands, ATIF) may say how it ended: that stays.
  if (isSessionFormat(fmt) && facts.status !== 'completed' && facts.status !== 'failed')
    facts.status = 'session';
  return facts;
}

/** A run_started as protocol v1 reads it: an imported format's view may infer its task id. */
function startedAsV1(fmt: string, runId: string, e: ImportedEvent): Record<string, unknown> {
  const parsed: unknown = JSON.parse(e.payloadJson);
  const p =
    parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  const source = e.source ? (JSON.parse(e.source) as SourceRef) : null;
  return interpret(fmt, e.kind, p, { seq: e.seq, run_id: runId, source })?.payload ?? p;
}
