import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { ProofloopError } from '../../shared/result';
import { digestRunIdOf, statedLinksOf, verifyEvents } from '../ledger';
import { ID_RANGE, idRange } from '../ledger/event-ids';
import type { ServiceContext } from './context';
import type { Handler as H } from './handler';
import type { Finding } from '../ledger/types';
import { summaryHandlers } from './summary';
import { spanHandlers } from './spans';
import { withOutcome } from '../ledger/outcome';
import { decisionConflictFindings } from '../state/cross-check';

/** The run, or a not_found error naming the open folder. */
export function requireRun(ctx: ServiceContext, runId: string) {
  const run = ctx.ledger().run(runId);
  if (!run) throw new ProofloopError('not_found', `no run "${runId}" in ${ctx.folder()}`);
  return run;
}

export function ledgerHandlers(ctx: ServiceContext) {
  const list: H<'runs.list'> = () => {
    const ledger = ctx.ledger();
    return ledger.runs().map((r) => withOutcome(ledger, r));
  };
  const get: H<'run.get'> = ({ run_id }) => withOutcome(ctx.ledger(), requireRun(ctx, run_id));
  const read: H<'events.read'> = ({ run_id, from, to, kinds, limit }) => {
    const run = requireRun(ctx, run_id);
    const events = ctx.ledger().read(run_id, { from, to, kinds, limit: limit ?? 10_000 });
    return { events, head_seq: run.head_seq };
  };
  const search: H<'events.search'> = ({ run_id, text, from, direction, limit }) => {
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
  const append: H<'events.append'> = ({ run_id, kind, payload, v }) => {
    const w = ctx.ledger().writer(run_id, { label: 'append' });
    try {
      return w.append(kind, payload, { v });
    } finally {
      w.close();
    }
  };
  const verify: H<'run.verify'> = ({ run_id }) => {
    const run = requireRun(ctx, run_id);
    const ledger = ctx.ledger();
    const report = verifyEvents(run_id, ledger.iterate(run_id), {
      expectedHead: { seq: run.head_seq, hash: run.head_hash },
      digestRunId: digestRunIdOf(run),
      statedLinks: statedLinksOf(run),
    });
    // Problems found when the run was imported are part of its verdict too.
    const recorded = ledger.findings(run_id);
    // An imported gap or broken link shows up again when the stored events are checked: say it once.
    const known = new Set(recorded.map((f) => `${f.code}@${f.seq}`));
    const findings = [...recorded, ...report.findings.filter((f) => !known.has(`${f.code}@${f.seq}`))];
    return { ...report, chained: run.chained, ok: findings.length === 0, findings };
  };
  const findings: H<'run.findings'> = ({ run_id }) => {
    requireRun(ctx, run_id);
    const ledger = ctx.ledger();
    // Recorded ones, then where another run of the session (its telemetry, its transcript) decides
    // one of its calls otherwise: derived each time, never stored (state/cross-check.ts).
    return [...ledger.findings(run_id), ...decisionConflictFindings(ledger, run_id)];
  };
  const folderFindings: H<'folder.findings'> = ({ limit }) => {
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
  return ({ run_id, kind, payload, v }) => {
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
