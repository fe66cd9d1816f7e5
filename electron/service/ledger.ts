import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { ProofloopError } from '../../shared/result';
import { digestRunIdOf, statedLinksOf, verifyEvents, withRecorded } from '../ledger';
import { ID_RANGE, idRange } from '../ledger/event-ids';
import type { ServiceContext } from './context';
import type { Handler as H } from './handler';
import type { Finding } from '../ledger/types';
import { summaryHandlers, withGlances } from './summary';
import { spanHandlers } from './spans';
import { outcomeOfRunAsync, withOutcome } from '../ledger/outcome';
import { decisionConflictFindings, withConflictCounts } from '../state/cross-check';
import type { LedgerEngine } from '../ledger/engine';
import type { RunRow } from '../ledger/types';

/** The run, or a not_found error naming the open folder (a runs folder's ledger only). */
export function requireRun(ctx: ServiceContext, runId: string) {
  const run = ctx.ledger().run(runId);
  if (!run) throw new ProofloopError('not_found', `no run "${runId}" in ${ctx.folder()}`);
  return run;
}

/** The run through the engine interface, or a not_found error naming the open ledger. */
export async function requireRunOf(engine: LedgerEngine, runId: string): Promise<RunRow> {
  const run = await engine.run(runId);
  if (!run) throw new ProofloopError('not_found', `no run "${runId}" in ${engine.location}`);
  return run;
}

/**
 * Payload search on a team ledger: the run read a page at a time from `from` on (or back), each
 * event's kind and payload text matched as the embedded SQL does (case-insensitive substring).
 */
async function searchEngine(
  engine: LedgerEngine,
  run: RunRow,
  text: string,
  from: number | undefined,
  backward: boolean,
  limit: number,
): Promise<number[]> {
  const needle = text.toLowerCase();
  const seqs: number[] = [];
  const PAGE = 2000;
  const hit = (e: { kind: string; payload: unknown }) =>
    e.kind.toLowerCase().includes(needle) || JSON.stringify(e.payload).toLowerCase().includes(needle);
  if (backward) {
    for (let hi = Math.min((from ?? Number.MAX_SAFE_INTEGER) - 1, run.head_seq); hi >= 1; hi -= PAGE) {
      const page = await engine.read(run.run_id, { from: Math.max(1, hi - PAGE + 1), to: hi });
      for (let i = page.length - 1; i >= 0; i--) {
        if (hit(page[i]!)) seqs.push(page[i]!.seq);
        if (seqs.length >= limit) return seqs;
      }
    }
    return seqs;
  }
  for (let lo = (from ?? 0) + 1; lo <= run.head_seq; lo += PAGE) {
    for (const e of await engine.read(run.run_id, { from: lo, to: lo + PAGE - 1 })) {
      if (hit(e)) seqs.push(e.seq);
      if (seqs.length >= limit) return seqs;
    }
  }
  return seqs;
}

export function ledgerHandlers(ctx: ServiceContext) {
  const list: H<'runs.list'> = async () => {
    const ledger = ctx.sqlite();
    if (ledger)
      return withGlances(
        ctx,
        withConflictCounts(
          ledger,
          ledger.runs().map((r) => withOutcome(ledger, r)),
        ),
      );
    const engine = ctx.engine();
    const runs = await engine.runs();
    return withGlances(
      ctx,
      await Promise.all(runs.map(async (r) => ({ ...r, outcome: await outcomeOfRunAsync(engine, r) }))),
    );
  };
  const get: H<'run.get'> = async ({ run_id }) => {
    const ledger = ctx.sqlite();
    if (ledger) {
      const r = withOutcome(ledger, requireRun(ctx, run_id));
      // Counted as the list counts them (withConflictCounts).
      return { ...r, findings: r.findings + decisionConflictFindings(ledger, run_id).length };
    }
    const engine = ctx.engine();
    const run = await requireRunOf(engine, run_id);
    return { ...run, outcome: await outcomeOfRunAsync(engine, run) };
  };
  const read: H<'events.read'> = async ({ run_id, from, to, kinds, limit }) => {
    const engine = ctx.engine();
    const run = await requireRunOf(engine, run_id);
    const events = await engine.read(run_id, { from, to, kinds, limit: limit ?? 10_000 });
    return { events, head_seq: run.head_seq };
  };
  const search: H<'events.search'> = async ({ run_id, text, from, direction, limit }) => {
    if (!ctx.sqlite()) {
      const engine = ctx.engine();
      const run = await requireRunOf(engine, run_id);
      return { seqs: await searchEngine(engine, run, text, from, direction === 'backward', limit ?? 100) };
    }
    requireRun(ctx, run_id);
    const ledger = ctx.ledger();
    const db = ledger.db;
    const backward = direction === 'backward';
    const runNo = ledger.runNo(run_id)!;
    // Seqs after `from` going forward, before it going backward.
    const seqs = backward
      ? idRange(runNo, 1, (from ?? Number.MAX_SAFE_INTEGER) - 1)
      : idRange(runNo, (from ?? 0) + 1, Number.MAX_SAFE_INTEGER);
    const rows = db
      .prepare(
        `SELECT seq FROM events WHERE ${ID_RANGE}
           AND (instr(lower(kind), lower(?)) > 0 OR instr(lower(payload), lower(?)) > 0)
         ORDER BY id ${backward ? 'DESC' : 'ASC'} LIMIT ?`,
      )
      .all(...seqs, text, text, limit ?? 100) as {
      seq: number;
    }[];
    return { seqs: rows.map((r) => r.seq) };
  };
  const append: H<'events.append'> = async ({ run_id, kind, payload, v }) => {
    if (!ctx.sqlite()) {
      const w = await ctx.engine().writer(run_id, { label: 'append' });
      try {
        return await w.append(kind, payload, { v });
      } finally {
        await w.close();
      }
    }
    const w = ctx.ledger().writer(run_id, { label: 'append' });
    try {
      return w.append(kind, payload, { v });
    } finally {
      w.close();
    }
  };
  const verify: H<'run.verify'> = async ({ run_id }) => {
    if (!ctx.sqlite()) return ctx.engine().verify(run_id);
    const run = requireRun(ctx, run_id);
    const ledger = ctx.ledger();
    const report = verifyEvents(run_id, ledger.iterate(run_id), {
      expectedHead: { seq: run.head_seq, hash: run.head_hash },
      digestRunId: digestRunIdOf(run),
      statedLinks: statedLinksOf(run),
    });
    // Problems found when the run was imported are part of its verdict too, as on a team ledger.
    return withRecorded(report, ledger.findings(run_id), run.chained);
  };
  const findings: H<'run.findings'> = async ({ run_id }) => {
    // A team ledger keeps the findings recorded at import (push moves them with the run).
    if (!ctx.sqlite()) {
      const engine = ctx.engine();
      await requireRunOf(engine, run_id);
      return engine.findings(run_id);
    }
    requireRun(ctx, run_id);
    const ledger = ctx.ledger();
    // Recorded ones, then where another run of the session (its telemetry, its transcript) decides
    // one of its calls otherwise: derived each time, never stored (state/cross-check.ts).
    return [...ledger.findings(run_id), ...decisionConflictFindings(ledger, run_id)];
  };
  const folderFindings: H<'folder.findings'> = ({ limit }) => {
    if (!ctx.sqlite()) return { findings: [], total: 0 };
    const db = ctx.ledger().db;
    const total = (
      db.prepare('SELECT COUNT(*) AS n FROM findings WHERE run_id IS NULL').get() as { n: number }
    ).n;
    const rows = db
      .prepare('SELECT * FROM findings WHERE run_id IS NULL ORDER BY id LIMIT ?')
      .all(limit ?? 1000) as (Finding & { id: number })[];
    return { findings: rows.map(({ id: _id, ...f }) => f), total };
  };
  return {
    ...summaryHandlers(ctx),
    ...spanHandlers(ctx),
    'folder.findings': folderFindings,
    'runs.list': list,
    'run.get': get,
    'events.read': read,
    'events.search': search,
    'events.append': append,
    'run.verify': verify,
    'run.findings': findings,
  };
}

/**
 * events.append from the renderer: an annotation on a run that exists (never a new run), through
 * a writer the ledger lets append event_annotated only (ledger/terminal.ts).
 */
export function annotateHandler(ctx: ServiceContext): H<'events.append'> {
  return async ({ run_id, kind, payload, v }) => {
    if (!ctx.sqlite()) {
      // The service let only event_annotated through (service.ts); the run must exist already.
      const w = await ctx.engine().writer(run_id, { label: 'annotation', create: false });
      try {
        return await w.append(kind, payload, { v });
      } finally {
        await w.close();
      }
    }
    requireRun(ctx, run_id);
    const w = ctx.ledger().writer(run_id, { label: 'annotation', create: false, annotateOnly: true });
    try {
      return w.append(kind, payload, { v });
    } finally {
      w.close();
    }
  };
}

/** A folder argument must name an existing directory. */
export function checkFolder(folder: string): string {
  const abs = path.resolve(folder);
  if (!existsSync(abs)) throw new ProofloopError('not_found', `folder ${abs} does not exist`);
  if (!statSync(abs).isDirectory()) throw new ProofloopError('bad_args', `${abs} is not a folder`);
  return abs;
}
