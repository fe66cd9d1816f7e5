import type { Statement } from 'better-sqlite3';
import type { Finding, Ledger, RunRow } from '../ledger';
import { digestRunIdOf } from '../ledger';
import { conversationOfRun } from '../otlp/session';
import { interpret, sessionOf } from '../../shared/formats';
import type { CallRecord, DecisionSource, Note, RunState } from '../../shared/state';
import { STATE_CAPS } from '../../shared/state';
import { push } from '../../shared/state/draft';

/**
 * One session, several runs: a Claude Code or Codex session's transcript (and its subagents' files)
 * is imported as runs of its own, and the same session's telemetry, received over OTLP, is another
 * run. Each says what the harness decided on a call (shared/formats/decision.ts reads them alike),
 * keyed by the call id. Read together here, on read: where they agree, the call's decision lists
 * every source (`decision_sources`); where they disagree, that is a `decision_conflict`, a note in
 * the state and a finding of the run, naming both sources.
 *
 * Derived, never stored: either run may still grow (a live receiver, a session being written),
 * and a disagreement between two sources is no fault of either file, so `verify` stays about
 * integrity. Which runs are of one session is each format's rule: FormatView.sessionOf (Claude
 * Code, Codex), conversationOfRun (OTLP).
 */

export interface SessionDecisions {
  session: string;
  /** The session's runs, this one first. */
  runs: { run_id: string; format: string }[];
  /** call id → each run's decisions on it, in run then seq order. */
  calls: Map<string, DecisionSource[]>;
}

interface RunLite {
  run_no: number;
  run_id: string;
  format: string;
  head_seq: number;
  meta: Record<string, unknown>;
}

const KINDS = ['action_allowed', 'action_denied'] as const;

function sessionOfRun(r: Pick<RunRow, 'run_id' | 'format' | 'meta'>): string | null {
  if (r.format === 'otlp') return conversationOfRun(r.meta);
  return sessionOf(r.format, digestRunIdOf(r));
}

/** `s` as a LIKE pattern matches it literally (ESCAPE '\\'). */
const like = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`);

function parseMeta(text: unknown): Record<string, unknown> {
  try {
    const m = JSON.parse(String(text)) as unknown;
    return typeof m === 'object' && m !== null && !Array.isArray(m) ? (m as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

interface Group {
  /** The ledger's highest run number when the group was found: a new run may join it. */
  maxRunNo: number;
  runs: RunLite[];
}
const groups = new WeakMap<Ledger, Map<string, Group>>();

/** The statements asked on every state read, prepared once per ledger (a step of the timeline asks). */
const prepared = new WeakMap<Ledger, { maxRunNo: Statement; head: Statement; row: Statement }>();
function statements(ledger: Ledger) {
  let st = prepared.get(ledger);
  if (!st) {
    st = {
      maxRunNo: ledger.db.prepare('SELECT MAX(run_no) FROM runs').pluck(),
      head: ledger.db.prepare('SELECT head_seq FROM runs WHERE run_no = ?').pluck(),
      // Only the meta fields the session rules read: a run's meta holds its seal, which can be long.
      row: ledger.db.prepare(
        `SELECT run_id, format, json_extract(meta, '$.source_run_id') AS source_run_id,
                json_extract(meta, '$.bundle.renamed_from') AS renamed_from,
                json_extract(meta, '$.otlp.conversation_id') AS conversation_id
           FROM runs WHERE run_id = ?`,
      ),
    };
    prepared.set(ledger, st);
  }
  return st;
}

/**
 * The runs of session `s`. Found by indexed id lookups and one pass over the runs table's meta
 * (renamed and OTLP runs), then kept until a run is added; their heads are read again each time.
 */
function runsOfSession(ledger: Ledger, s: string): RunLite[] {
  const st = statements(ledger);
  const maxRunNo = (st.maxRunNo.get() as number | null) ?? 0;
  let bySession = groups.get(ledger);
  if (!bySession) groups.set(ledger, (bySession = new Map()));
  const known = bySession.get(s);
  if (known && known.maxRunNo === maxRunNo) {
    return known.runs.map((r) => ({ ...r, head_seq: (st.head.get(r.run_no) as number | undefined) ?? 0 }));
  }
  const rows = ledger.db
    .prepare(
      `SELECT run_no, run_id, format, head_seq, meta FROM runs
        WHERE run_id = ? OR (run_id > ? AND run_id < ?) OR run_id LIKE ? ESCAPE '\\'
           OR json_extract(meta, '$.source_run_id') = ?
           OR json_extract(meta, '$.source_run_id') LIKE ? ESCAPE '\\'
           OR json_extract(meta, '$.otlp.conversation_id') = ?
        ORDER BY run_no`,
    )
    .all(s, `${s}:`, `${s};`, `%-${like(s)}%`, s, `${like(s)}:%`, s) as {
    run_no: number;
    run_id: string;
    format: string;
    head_seq: number;
    meta: string;
  }[];
  const out: RunLite[] = [];
  for (const r of rows) {
    const lite = { ...r, meta: parseMeta(r.meta) };
    // The format's own rule decides: the query only narrows.
    if (sessionOfRun(lite) === s) out.push(lite);
  }
  if (bySession.size > 1000) bySession.clear();
  bySession.set(s, { maxRunNo, runs: out });
  return out;
}

function decisionsOf(
  ledger: Ledger,
  r: Pick<RunLite, 'run_id' | 'format'>,
): DecisionSource[] & { ids: string[] } {
  const out = [] as unknown as DecisionSource[] & { ids: string[] };
  out.ids = [];
  for (const e of ledger.read(r.run_id, { kinds: KINDS })) {
    const p =
      interpret(r.format, e.kind, e.payload, { seq: e.seq, run_id: r.run_id, source: e.source ?? null })
        ?.payload ?? e.payload;
    const callId = typeof p.call_id === 'string' ? p.call_id : '';
    if (callId === '') continue;
    out.push({
      run_id: r.run_id,
      format: r.format,
      seq: e.seq,
      allowed: e.kind === 'action_allowed',
      rule: typeof p.rule === 'string' ? p.rule : '',
      by: typeof p.decided_by === 'string' ? p.decided_by : null,
    });
    out.ids.push(callId);
  }
  return out;
}

/** The decisions of `runs` (one session's, in this order) by call id. */
function decisionsByCall(
  ledger: Ledger,
  session: string,
  runs: readonly Pick<RunLite, 'run_id' | 'format'>[],
): SessionDecisions {
  const calls = new Map<string, DecisionSource[]>();
  for (const r of runs) {
    const ds = decisionsOf(ledger, r);
    ds.forEach((d, i) => {
      const id = ds.ids[i]!;
      const list = calls.get(id);
      if (list) list.push(d);
      else calls.set(id, [d]);
    });
  }
  return { session, runs: runs.map((r) => ({ run_id: r.run_id, format: r.format })), calls };
}

interface CacheEntry {
  key: string;
  value: SessionDecisions | null;
}
/** Per ledger and run: the last answer, valid while no run was added and no run of the session grew. */
const cache = new WeakMap<Ledger, Map<string, CacheEntry>>();

/**
 * The decisions of every run of `runId`'s session, by call id; null when the run is of no session
 * or its session has no other run.
 */
export function sessionDecisions(ledger: Ledger, runId: string): SessionDecisions | null {
  const raw = statements(ledger).row.get(runId) as
    | {
        run_id: string;
        format: string;
        source_run_id: unknown;
        renamed_from: unknown;
        conversation_id: unknown;
      }
    | undefined;
  if (!raw) return null;
  const meta: Record<string, unknown> = {
    source_run_id: raw.source_run_id ?? undefined,
    bundle: { renamed_from: raw.renamed_from ?? undefined },
    otlp: { conversation_id: raw.conversation_id ?? undefined },
  };
  const session = sessionOfRun({ run_id: raw.run_id, format: raw.format, meta });
  if (session === null) return null;
  const runs = runsOfSession(ledger, session);
  if (runs.length < 2 || !runs.some((r) => r.run_id === runId)) return null;
  const key = runs.map((r) => `${r.run_no}@${r.head_seq}`).join(',');
  let byRun = cache.get(ledger);
  if (!byRun) cache.set(ledger, (byRun = new Map()));
  const hit = byRun.get(runId);
  if (hit && hit.key === key) return hit.value;
  // This run first, then the others in the order they were made.
  const ordered = [runs.find((r) => r.run_id === runId)!, ...runs.filter((r) => r.run_id !== runId)];
  const value = decisionsByCall(ledger, session, ordered);
  if (byRun.size > 200) byRun.clear();
  byRun.set(runId, { key, value });
  return value;
}

const said = (d: DecisionSource): string =>
  `${d.allowed ? 'allowed' : 'denied'} by ${d.rule || 'an unnamed rule'}${d.by ? ` (${d.by})` : ''}`;
const where = (d: DecisionSource): string =>
  `${d.run_id} (${d.format === 'otlp' ? 'telemetry' : `${d.format} transcript`}) at seq ${d.seq}`;
const known = (by: string | null): boolean => by !== null && by !== 'unknown';

/** Whether two sources disagree: one allows what the other denies, or they name different deciders. */
function disagree(a: DecisionSource, b: DecisionSource): boolean {
  return a.allowed !== b.allowed || (known(a.by) && known(b.by) && a.by !== b.by);
}

/** Where two runs of the session disagree on a call of `runId`: one per call and other run. */
export function conflictsOf(
  sd: SessionDecisions,
  runId: string,
): { call_id: string; mine: DecisionSource; other: DecisionSource }[] {
  const out: { call_id: string; mine: DecisionSource; other: DecisionSource }[] = [];
  for (const [callId, list] of sd.calls) {
    const mine = list.find((d) => d.run_id === runId);
    if (!mine) continue;
    const seen = new Set<string>();
    for (const other of list) {
      if (other.run_id === runId || seen.has(other.run_id)) continue;
      if (!disagree(mine, other)) continue;
      seen.add(other.run_id);
      out.push({ call_id: callId, mine, other });
    }
  }
  return out;
}

const conflictMessage = (c: { call_id: string; mine: DecisionSource; other: DecisionSource }): string =>
  `call ${c.call_id} ${said(c.mine)} in ${where(c.mine)}, but ${said(c.other)} in ${where(c.other)}`;

/** The run's decision conflicts with the other runs of its session, as findings (derived, never stored). */
export function decisionConflictFindings(ledger: Ledger, runId: string): Finding[] {
  const sd = sessionDecisions(ledger, runId);
  if (!sd) return [];
  return conflictsOf(sd, runId).map((c) => ({
    code: 'decision_conflict',
    run_id: runId,
    file: null,
    line: null,
    seq: c.mine.seq,
    message: conflictMessage(c),
  }));
}

/**
 * The state with what the session's other runs say of its calls: each call that another run
 * decides lists every source (`decision_sources`), and each disagreement is a `decision_conflict`
 * note. Returns a new state; the one given (maybe a stored snapshot) is not changed.
 */
export function withSessionDecisions(ledger: Ledger, runId: string, state: RunState): RunState {
  const sd = sessionDecisions(ledger, runId);
  if (!sd) return state;
  let changed = false;
  const items = state.calls.items.map((c): CallRecord => {
    const list = sd.calls.get(c.call_id);
    // Only what this run has folded so far, and only where another run speaks of the call.
    const mine = list?.filter((d) => d.run_id !== runId || d.seq <= state.seq) ?? [];
    if (!mine.some((d) => d.run_id !== runId)) return c;
    changed = true;
    return { ...c, decision_sources: mine };
  });
  if (!changed) return state;
  let notes = state.notes;
  const conflicts = conflictsOf(sd, runId).filter((x) => x.mine.seq <= state.seq);
  for (const x of conflicts) {
    const note: Note = {
      seq: x.mine.seq,
      kind: x.mine.allowed ? 'action_allowed' : 'action_denied',
      code: 'decision_conflict',
      message: conflictMessage(x),
    };
    notes = push(notes, note, STATE_CAPS.notes);
  }
  return { ...state, calls: { ...state.calls, items }, notes };
}

/** Per ledger and session: the conflict counts of its runs, valid while its runs and heads are the same. */
const listCounts = new WeakMap<Ledger, Map<string, { key: string; counts: Map<string, number> }>>();

/**
 * A list of runs with their derived decision conflicts counted in `findings`, as run.findings
 * lists them, so that the runs list's count and its "with findings" filter agree with the run's
 * own list. Only a run that shares its session with another run of the list can have one: the
 * list is grouped by session itself (no query per session, as sessionDecisions makes), each
 * group's decisions read through the kind index, and its counts kept until a run of it grows. A
 * folder of sessions without telemetry beside them (no session of two runs) costs a string per run.
 */
export function withConflictCounts<
  R extends Pick<RunRow, 'run_id' | 'format' | 'meta' | 'head_seq'> & { findings: number },
>(ledger: Ledger, runs: R[]): R[] {
  const groups = new Map<string, R[]>();
  for (const r of runs) {
    const s = sessionOfRun(r);
    if (s === null) continue;
    const g = groups.get(s);
    if (g) g.push(r);
    else groups.set(s, [r]);
  }
  let memo = listCounts.get(ledger);
  if (!memo) listCounts.set(ledger, (memo = new Map()));
  const extra = new Map<string, number>();
  for (const [session, group] of groups) {
    if (group.length < 2) continue;
    const key = group.map((r) => `${r.run_id}@${r.head_seq}`).join(',');
    let hit = memo.get(session);
    if (!hit || hit.key !== key) {
      const sd = decisionsByCall(ledger, session, group);
      hit = { key, counts: new Map(group.map((r) => [r.run_id, conflictsOf(sd, r.run_id).length])) };
      memo.set(session, hit);
    }
    for (const [id, n] of hit.counts) if (n > 0) extra.set(id, n);
  }
  if (extra.size === 0) return runs;
  return runs.map((r) => (extra.has(r.run_id) ? { ...r, findings: r.findings + extra.get(r.run_id)! } : r));
}
