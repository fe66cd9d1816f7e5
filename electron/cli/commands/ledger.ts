import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import type { CliContext } from '../context';
import { EXIT } from '../context';
import { intOption, oneLine, table } from '../format';
import { verifyFile } from '../../ingest';
import { checkRunSource, type SourceVerdict } from '../../ingest/seal-check';
import { openBundleCommand } from './bundle';
import { importToTeam, teamArtifact, teamEvents, teamRuns, teamSpec, teamVerify } from './team';
import { appendLines } from '../append-lines';
import { readArtifact } from '../../ledger/artifact-store';
import { artifactsHomeOf } from '../../ledger/artifacts';
import type { StoredEvent } from '../../ledger';
import { ProofloopError } from '../../../shared/result';
import type * as z from '../../../shared/zod';
import type { VerifyReportSchema } from '../../../shared/api/ledger';

type VerifyReport = z.output<typeof VerifyReportSchema>;

function printFindings(ctx: CliContext, reports: VerifyReport[], source?: SourceVerdict | null): void {
  const findings = reports.flatMap((r) => r.findings);
  const ok = findings.length === 0;
  const out = { ok, runs: reports.map(({ findings: _f, ...r }) => r), findings };
  ctx.print(source ? { ...out, source } : out, () => {
    const lines = reports.map(
      (r) =>
        `${r.findings.length === 0 ? 'ok  ' : 'FAIL'} ${r.run_id}: ${r.events} events, head seq ${r.head_seq} ${r.head_hash.slice(0, 16)}…${r.chained ? '' : ' (unchained)'}`,
    );
    if (source) lines.push(`  ${source.message}`);
    for (const f of findings) {
      lines.push(
        `  ${f.code}${f.seq !== null ? ` seq ${f.seq}` : ''}${f.file ? ` ${f.file}${f.line ? `:${f.line}` : ''}` : ''}: ${f.message}`,
      );
    }
    return lines.join('\n');
  });
  if (!ok) ctx.setExit(EXIT.findings);
}

export function registerLedgerCommands(program: Command, ctx: CliContext): void {
  program
    .command('open [folder]')
    .description(
      'open a runs folder: create its ledger, repair mirrors, import JSONL runs written by other agents; ' +
        'or open a bundle .zip read-only into --folder; with --ledger postgres://… import the folder into that team ledger',
    )
    .action(async (folder: string | undefined) => {
      // A bundle opens read-only into the --folder ledger (electron/bundle/open.ts).
      if (folder && /\.zip$/i.test(folder) && existsSync(folder) && statSync(folder).isFile()) {
        return openBundleCommand(ctx, folder);
      }
      if (folder) program.setOptionValue('folder', path.resolve(folder));
      const team = teamSpec(program);
      if (team) return importToTeam(ctx, path.resolve(folder ?? ctx.opts().folder), team);
      const svc = await ctx.service({ create: true });
      const info = await svc.invoke('folder.current', {});
      ctx.print(info, () =>
        [
          `opened ${info?.folder}`,
          `${info?.runs} runs; imported ${info?.imported.events} new events from ${info?.imported.files} files` +
            (info?.imported.findings ? `, ${info.imported.findings} findings` : ''),
          info?.mirrors_repaired.length ? `repaired mirrors: ${info.mirrors_repaired.join(', ')}` : '',
        ]
          .filter(Boolean)
          .join('\n'),
      );
    });

  program
    .command('runs')
    .description('list the runs of the folder')
    .action(async () => {
      const team = teamSpec(program);
      if (team) return teamRuns(ctx, team);
      const runs = await (await ctx.service()).invoke('runs.list', {});
      ctx.print(runs, () =>
        runs.length === 0
          ? 'no runs yet: `proofloop run <task>` makes one, or put events.jsonl files in this folder'
          : table(
              runs.map((r) => [
                r.run_id,
                r.status,
                r.source,
                r.task_id,
                r.variant,
                r.event_count,
                r.chained ? 'chained' : r.meta.seal ? 'sealed' : 'unchained',
                r.findings,
                r.last_at,
              ]),
              ['RUN', 'STATUS', 'SOURCE', 'TASK', 'VARIANT', 'EVENTS', 'CHAIN', 'FINDINGS', 'LAST EVENT'],
            ),
      );
    });

  program
    .command('events <run>')
    .description('print the events of a run')
    .option('--from <seq>', 'first seq', intOption('--from', 1))
    .option('--to <seq>', 'last seq', intOption('--to', 1))
    .option('--kind <kinds>', 'only these kinds (comma-separated)')
    .action(async (run: string, o: { from?: number; to?: number; kind?: string }) => {
      const kinds = o.kind
        ? o.kind
            .split(',')
            .map((k) => k.trim())
            .filter(Boolean)
        : undefined;
      const team = teamSpec(program);
      if (team) return teamEvents(ctx, team, run, { from: o.from, to: o.to, kinds });
      const svc = await ctx.service({ run });
      const ledger = svc.ctx.ledger();
      const info = await svc.invoke('run.get', { run_id: run });
      if (ctx.opts().json) {
        // JSONL, streamed: a million events never sit in memory at once. An imported event says
        // where it came from: its run's source file, the line, the source's own ids.
        for (const e of ledger.iterate(run, { from: o.from, to: o.to, kinds })) {
          const out = e.source && info.origin ? { ...e, source: { file: info.origin, ...e.source } } : e;
          process.stdout.write(JSON.stringify(out) + '\n');
        }
        return;
      }
      for (const e of ledger.iterate(run, { from: o.from, to: o.to, kinds })) {
        process.stdout.write(
          `${String(e.seq).padStart(6)}  ${e.at}  ${e.kind.padEnd(16)} ${oneLine(e.payload, 110)}\n`,
        );
      }
    });

  program
    .command('artifact <run> <digest>')
    .description(
      "print an artifact a run's events reference, whole (a tool output, or a value of an imported line " +
        'too large for its event: the event names it in source.artifacts); checked against its digest',
    )
    .action(async (run: string, digest: string) => {
      if (!/^(sha256:)?[0-9a-f]{64}$/.test(digest))
        throw new InvalidArgumentError(`digest must be 64 hex digits (sha256), not "${oneLine(digest, 80)}"`);
      const hex = digest.replace(/^sha256:/, '');
      const team = teamSpec(program);
      let text: string | null;
      if (team) text = await teamArtifact(team, run, hex);
      else {
        const svc = await ctx.service({ run });
        const info = await svc.invoke('run.get', { run_id: run });
        text = readArtifact(artifactsHomeOf(svc.ctx.ledger(), info), hex);
      }
      if (text === null) {
        process.stderr.write(
          `proofloop: artifact ${hex} of run ${run} is missing or does not match its digest\n`,
        );
        ctx.setExit(EXIT.usage);
        return;
      }
      process.stdout.write(text);
    });

  program
    .command('verify <target>')
    .description('verify a run of the ledger (by id) or a JSONL file: seq continuity and hash chain')
    .action(async (target: string) => {
      const team = teamSpec(program);
      if (team) return teamVerify(ctx, team, target);
      const asFile = path.resolve(target);
      if (existsSync(asFile) && statSync(asFile).isFile()) {
        printFindings(ctx, await verifyFile(asFile));
        return;
      }
      const svc = await ctx.service();
      const ledger = svc.ctx.ledger();
      // A target shaped as a file that is not there is named as the file it was meant to be:
      // "no run \"logs/events.jsonl\"" sent a reader looking for a run.
      if (!ledger.run(target) && looksLikePath(target)) {
        throw new ProofloopError(
          'not_found',
          `${target}: no such file (${asFile}), and no run of that id in ${ledger.folder}`,
        );
      }
      const report = await svc.invoke('run.verify', { run_id: target });
      // A sealed run: its seal checked against its source file, when that is still there.
      const source = checkRunSource(ledger.db, ledger.folder, ledger.run(target)!);
      const known = (l: number | null) =>
        report.findings.some((f) => f.code === 'file_rewritten' && f.line === l);
      if (source?.state === 'changed' && !known(source.line)) {
        report.findings.push({
          code: 'file_rewritten',
          file: source.file,
          line: source.line,
          seq: null,
          message: `${source.message}: the run holds what was imported before the change`,
        });
        report.ok = false;
      }
      printFindings(ctx, [report], source);
    });

  program
    .command('append <run> [kind] [payload-json]')
    .description(
      'append an event to a run (created if new): how agents in any language write to the ledger; ' +
        'with --stdin, one event per line of standard input as it arrives',
    )
    .option(
      '--stdin',
      'read events as JSON lines {"kind", "payload"[, "v"][, "at"]} from standard input, each appended as it ' +
        'arrives (the lines one read brings are one transaction); a bad line stops there, naming its line',
    )
    .addHelpText(
      'after',
      `
Examples:
  proofloop --folder ./runs append my-run model_responded '{"content":"done"}'
  my-agent | proofloop --folder ./runs --json append my-run --stdin    prints each stored event as a JSON line`,
    )
    .action(
      async (
        run: string,
        kind: string | undefined,
        payloadJson: string | undefined,
        o: { stdin?: boolean },
      ) => {
        if (o.stdin) {
          if (kind !== undefined)
            throw new InvalidArgumentError('with --stdin, events come from standard input: give only <run>');
          await appendStdin(ctx, run);
          return;
        }
        if (kind === undefined || payloadJson === undefined) {
          throw new InvalidArgumentError('append needs <kind> and <payload-json>, or --stdin');
        }
        let payload: unknown;
        try {
          payload = JSON.parse(payloadJson);
        } catch (e) {
          throw new InvalidArgumentError(`payload-json is not JSON: ${(e as Error).message}`);
        }
        const event = await (
          await ctx.service({ create: true })
        ).invoke('events.append', {
          run_id: run,
          kind,
          payload: payload as Record<string, unknown>,
        });
        ctx.print(event, () => appendedLine(event));
      },
    );
}

const appendedLine = (e: StoredEvent) =>
  `appended ${e.run_id} seq ${e.seq} ${e.kind} ${e.hash.slice(0, 16)}…`;

/** `append <run> --stdin`: one writer for the whole stream (a second writer of the run is refused). */
async function appendStdin(ctx: CliContext, run: string): Promise<void> {
  await ctx.service({ create: true });
  const writer = (await ctx.ledger()).writer(run, { label: 'append --stdin' });
  const json = ctx.opts().json;
  try {
    await appendLines(writer, process.stdin, (events) => {
      for (const e of events) process.stdout.write((json ? JSON.stringify(e) : appendedLine(e)) + '\n');
    });
  } finally {
    writer.close();
  }
}

/** A verify target written as a path (a folder in it, or a JSONL/JSON file's extension). */
function looksLikePath(target: string): boolean {
  return /[\\/]/.test(target) || /\.jsonl?$/i.test(target);
}
