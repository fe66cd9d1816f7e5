import type { Command } from 'commander';
import { ProofloopError } from '../../../shared/result';
import { EXIT, type CliContext } from '../context';
import { oneLine, table } from '../format';
import { formatState } from './state';
import { openEngine, ledgerSpec, isPostgresUrl } from '../../ledger/open-engine';
import { SqliteEngine } from '../../ledger/sqlite-engine';
import { pushRuns, type PushResult } from '../../ledger/push';
import type { LedgerEngine } from '../../ledger/engine';
import type { VerifyReport } from '../../ledger/verify';
import { engineChangesAt, engineDiff } from '../../state/engine-state';
import { importIntoEngine } from '../../ingest/team';

/**
 * The CLI on a team ledger: `--ledger postgres://…` (or PROOFLOOP_LEDGER) points the read commands
 * (runs, events, verify, state) at a PostgreSQL server instead of the runs folder, and `push` /
 * `pull` move runs between the folder's ledger and a server with their digests.
 */

/** The team ledger the command line names, or null: the command acts on the runs folder as before. */
export function teamSpec(program: Command): string | null {
  const spec = ledgerSpec(program.opts<{ ledger?: string }>().ledger);
  return isPostgresUrl(spec) ? spec : null;
}

async function withEngine<T>(spec: string, fn: (e: LedgerEngine) => Promise<T>): Promise<T> {
  const e = await openEngine(spec);
  try {
    return await fn(e);
  } finally {
    await e.close();
  }
}

/** A run's artifact on a team ledger (what a push moved there), or null when it holds none of that digest. */
export function teamArtifact(spec: string, run: string, digest: string): Promise<string | null> {
  return withEngine(spec, async (e) => {
    if (!(await e.run(run))) throw new ProofloopError('not_found', `no run ${run} in ${e.location}`);
    return e.artifact(run, digest);
  });
}

export async function teamRuns(ctx: CliContext, spec: string): Promise<void> {
  const runs = await withEngine(spec, (e) => e.runs());
  ctx.print(runs, () =>
    runs.length === 0
      ? `no runs yet in ${spec.replace(/:[^:@/]*@/, ':***@')}`
      : table(
          runs.map((r) => [
            r.run_id,
            r.status,
            r.source,
            r.task_id,
            r.variant,
            r.event_count,
            r.chained ? 'chained' : 'unchained',
            r.findings,
            r.last_at,
          ]),
          ['RUN', 'STATUS', 'SOURCE', 'TASK', 'VARIANT', 'EVENTS', 'CHAIN', 'FINDINGS', 'LAST EVENT'],
        ),
  );
}

export async function teamEvents(
  ctx: CliContext,
  spec: string,
  run: string,
  o: { from?: number; to?: number; kinds?: string[] },
): Promise<void> {
  await withEngine(spec, async (e) => {
    const page = 5000;
    const to = o.to ?? Number.MAX_SAFE_INTEGER;
    for (let from = o.from ?? 1; from <= to; from += page) {
      const events = await e.read(run, { from, to: Math.min(to, from + page - 1), kinds: o.kinds });
      for (const ev of events) {
        process.stdout.write(
          ctx.opts().json
            ? JSON.stringify(ev) + '\n'
            : `${String(ev.seq).padStart(6)}  ${ev.at}  ${ev.kind.padEnd(16)} ${oneLine(ev.payload, 110)}\n`,
        );
      }
      const run0 = await e.run(run);
      if (!run0 || from + page - 1 >= run0.head_seq) break;
    }
  });
}

export async function teamVerify(ctx: CliContext, spec: string, run: string): Promise<void> {
  const r = await withEngine(spec, (e) => e.verify(run));
  printReports(ctx, [r]);
}

function printReports(ctx: CliContext, reports: VerifyReport[]): void {
  const findings = reports.flatMap((r) => r.findings);
  ctx.print({ ok: findings.length === 0, runs: reports.map(({ findings: _f, ...r }) => r), findings }, () =>
    [
      ...reports.map(
        (r) =>
          `${r.findings.length === 0 ? 'ok  ' : 'FAIL'} ${r.run_id}: ${r.events} events, head seq ${r.head_seq} ${r.head_hash.slice(0, 16)}…`,
      ),
      ...findings.map((f) => `  ${f.code}${f.seq !== null ? ` seq ${f.seq}` : ''}: ${f.message}`),
    ].join('\n'),
  );
  if (findings.length > 0) ctx.setExit(EXIT.findings);
}

export async function teamState(
  spec: string,
  run: string,
  at: number,
  print: (value: unknown, human: () => string) => void,
): Promise<void> {
  const t0 = performance.now();
  const r = await withEngine(spec, (e) => e.stateAt(run, at));
  const ms = performance.now() - t0;
  print({ seq: r.seq, state: r.state, via: r.via }, () =>
    formatState(r.state, `${r.via}, ${ms.toFixed(1)} ms`),
  );
}

/**
 * `proofloop open <folder> --ledger postgres://…`: the folder imported (its own ledger keeps the
 * import's offsets and seals) and every imported run sent to the team ledger with its digests.
 */
export async function importToTeam(ctx: CliContext, folder: string, spec: string): Promise<void> {
  const r = await withEngine(spec, (e) => importIntoEngine(folder, e));
  const count = (a: PushResult['action']) => r.pushed.filter((p) => p.action === a).length;
  const where = spec.replace(/:[^:@/]*@/, ':***@');
  ctx.print({ folder, ledger: where, ...r }, () =>
    [
      `imported ${r.imported.events} new events from ${r.imported.files} files of ${folder}` +
        (r.imported.findings ? `, ${r.imported.findings} findings` : ''),
      `into ${where}: ${count('copied')} runs copied, ${count('extended')} extended, ${count('same') + count('ahead')} unchanged`,
      ...r.refused.map((x) => `refused ${x.run_id}: ${x.error}`),
    ].join('\n'),
  );
  if (r.refused.length > 0) ctx.setExit(EXIT.findings);
}

export function teamChanges(spec: string, run: string, at: number) {
  return withEngine(spec, (e) => engineChangesAt(e, run, at));
}

export function teamDiff(spec: string, a: string, b: string) {
  return withEngine(spec, (e) => engineDiff(e, a, b));
}

export function registerTeamCommands(program: Command, ctx: CliContext): void {
  const move = async (runs: string[], from: LedgerEngine, to: LedgerEngine) => {
    const results = await pushRuns(from, to, runs);
    ctx.print(results, () => results.map((r) => describe(r, to.location)).join('\n'));
  };
  /** The local side: --ledger's engine when it names one, else the runs folder's ledger. */
  const local = async (): Promise<LedgerEngine> => {
    const spec = teamSpec(program);
    if (spec) return openEngine(spec);
    return new SqliteEngine(await ctx.ledger());
  };

  program
    .command('push <runs...>')
    .description(
      'copy runs of this folder (or --ledger) to a team ledger with their digests: the same seqs, bytes and ' +
        'hashes; a run already there is continued only if it is a prefix (pushing twice does nothing), and a ' +
        'run whose chain differs is refused by name',
    )
    .requiredOption('--to <url>', 'the team ledger: postgres://user@host/db')
    .action(async (runs: string[], o: { to: string }) => {
      const from = await local();
      const to = await openEngine(o.to);
      try {
        await move(runs, from, to);
      } finally {
        await to.close();
        await from.close();
      }
    });

  program
    .command('pull <runs...>')
    .description('copy runs from a team ledger into this folder (or --ledger), as push does the other way')
    .requiredOption('--from <url>', 'the team ledger: postgres://user@host/db')
    .action(async (runs: string[], o: { from: string }) => {
      const from = await openEngine(o.from);
      const to = await local();
      try {
        await move(runs, from, to);
      } finally {
        await to.close();
        await from.close();
      }
    });
}

function describe(r: PushResult, where: string): string {
  const record = [
    r.findings > 0 ? `${r.findings} finding${r.findings === 1 ? '' : 's'} added` : '',
    r.meta ? 'meta updated' : '',
    r.artifacts > 0 ? `${r.artifacts} artifact${r.artifacts === 1 ? '' : 's'} copied` : '',
    r.artifacts_missing > 0
      ? `${r.artifacts_missing} artifact${r.artifacts_missing === 1 ? '' : 's'} missing here, not copied`
      : '',
  ].filter(Boolean);
  const head = `head seq ${r.head_seq} ${r.head_hash.slice(0, 16)}…${record.length > 0 ? ` (${record.join(', ')})` : ''}`;
  switch (r.action) {
    case 'copied':
      return `copied ${r.run_id}: ${r.events} events to ${where}, ${head}`;
    case 'extended':
      return `extended ${r.run_id}: ${r.events} new events to ${where}, ${head}`;
    case 'same':
      return `unchanged ${r.run_id}: already at ${where}, ${head}`;
    case 'ahead':
      return `unchanged ${r.run_id}: ${where} has it further, to ${head}`;
  }
}
