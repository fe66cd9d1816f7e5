import { interpret, isSessionFormat } from '../../shared/formats';
import { OUTCOME_KINDS, outcomeOf, type Outcome } from '../../shared/outcome';
import { BoundedMap } from '../bounded-map';
import type { LedgerEngine } from './engine';
import type { LedgerReader } from './ledger';
import type { RunRow, StoredEvent } from './types';

/** Outcomes by folder, run and head: the list asks for all of them on every change of the folder. */
const memo = new BoundedMap<string, Outcome | null>(5000);
/** More lifecycle and verdict events than any run has; a source that repeats them is read this far. */
const MAX_EVENTS = 10_000;

/**
 * A run's outcome (shared/outcome.ts) from its lifecycle and verdict events, read through the
 * rare-kinds index (a few rows a run), as its format's view reads them. A session format's run
 * has none.
 */
export function outcomeOfRun(ledger: LedgerReader, run: RunRow): Outcome | null {
  if (isSessionFormat(run.format)) return null;
  const key = `${ledger.folder}\u0000${run.run_id}\u0000${run.head_seq}`;
  if (memo.has(key)) return memo.get(key)!;
  const out = outcomeOfEvents(run, ledger.read(run.run_id, { kinds: [...OUTCOME_KINDS], limit: MAX_EVENTS }));
  memo.set(key, out);
  return out;
}

function outcomeOfEvents(run: RunRow, events: readonly StoredEvent[]): Outcome | null {
  return outcomeOf(
    events.map((e) => ({
      kind: e.kind,
      payload: (interpret(run.format, e.kind, e.payload, {
        seq: e.seq,
        run_id: run.run_id,
        source: e.source ?? null,
      })?.payload ?? e.payload) as Record<string, unknown>,
    })),
  );
}

/** outcomeOfRun through the engine interface (a team ledger). */
export async function outcomeOfRunAsync(engine: LedgerEngine, run: RunRow): Promise<Outcome | null> {
  if (isSessionFormat(run.format)) return null;
  const key = `${engine.location}\u0000${run.run_id}\u0000${run.head_seq}`;
  if (memo.has(key)) return memo.get(key)!;
  const events = await engine.read(run.run_id, { kinds: [...OUTCOME_KINDS], limit: MAX_EVENTS });
  const out = outcomeOfEvents(run, events);
  memo.set(key, out);
  return out;
}

export function withOutcome<R extends RunRow>(ledger: LedgerReader, run: R): R & { outcome: Outcome | null } {
  return { ...run, outcome: outcomeOfRun(ledger, run) };
}
