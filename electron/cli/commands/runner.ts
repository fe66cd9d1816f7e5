import { InvalidArgumentError, type Command } from 'commander';
import type { CliContext } from '../context';
import { EXIT } from '../context';
import { oneLine, table } from '../format';
import { isVariant, VARIANTS, type Variant } from '../../runner/protocol';
import type { ProofloopService } from '../../service/service';

const variantArg = (v: string): Variant => {
  if (!isVariant(v)) throw new InvalidArgumentError(`--variant must be one of ${VARIANTS.join(', ')}`);
  return v;
};
const seedArg = (v: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 2 ** 32 - 1)
    throw new InvalidArgumentError('--seed must be a whole number from 0 to 4294967295');
  return n;
};

/** A one-line summary of an event, for the progress lines on a terminal. */
function progressLine(e: { seq: number; kind: string; payload: Record<string, unknown> }): string {
  const p = e.payload;
  const id = typeof p.call_id === 'string' ? `${p.call_id} ` : '';
  let what = '';
  switch (e.kind) {
    case 'model_proposed':
    case 'tool_invoked':
      what = `${String(p.tool)} ${oneLine(p.args, 60)}`;
      break;
    case 'action_allowed':
    case 'action_denied':
      what = `${String(p.rule)}: ${oneLine(p.reason, 60)}`;
      break;
    case 'tool_returned':
      what = `${String(p.status)} ${String(p.bytes ?? '')}B ${String(p.duration_ms)}ms`;
      break;
    case 'judge_verdict':
      what = `${p.passed ? 'PASSED' : 'failed'} ${String(p.tests_passed)} passed, ${String(p.tests_failed)} failed`;
      break;
    default:
      what = oneLine(p, 70);
  }
  return `  ${String(e.seq).padStart(4)} ${e.kind.padEnd(16)} ${id}${what}`;
}

/** Prints a progress line per appended event of `runId` (terminal only), until the returned stop. */
function followProgress(ctx: CliContext, svc: ProofloopService, runId: () => string | null): () => void {
  if (!ctx.tty || ctx.opts().json) return () => {};
  return svc.onPush((channel, payload) => {
    if (channel !== 'events.appended') return;
    const p = payload as { run_id: string; from_seq: number; to_seq: number };
    const id = runId();
    if (id !== null && p.run_id !== id) return;
    for (const e of svc.ctx.ledger().read(p.run_id, { from: p.from_seq, to: p.to_seq })) {
      process.stderr.write(progressLine(e) + '\n');
    }
  });
}

async function startAndWait(
  ctx: CliContext,
  start: (svc: ProofloopService) => Promise<{ run_id: string }>,
): Promise<void> {
  const svc = await ctx.service({ create: true });
  let runId: string | null = null;
  // Events may append before run_id is known: follow any run until it is, then only that one.
  const stop = followProgress(ctx, svc, () => runId);
  try {
    const started = await start(svc);
    runId = started.run_id;
    if (ctx.tty && !ctx.opts().json) process.stderr.write(`run ${runId}\n`);
    const end = await svc.invoke('run.wait', { run_id: runId });
    ctx.print(
      end,
      () => `${end.run_id}: ${end.status}, ${end.outcome ?? 'no outcome'} (${end.head_seq} events)`,
    );
    ctx.setExit(end.passed ? EXIT.ok : EXIT.findings);
  } finally {
    stop();
  }
}

export function registerRunnerCommands(program: Command, ctx: CliContext): void {
  program
    .command('tasks')
    .description('list the task catalog (built-in, or --tasks <dir>); problems name the file and field')
    .action(async () => {
      const svc = await ctx.service();
      const r = await svc.invoke('tasks.list', {});
      ctx.print(r, () => {
        const lines = [
          table(
            r.tasks.map((t) => [t.id, t.title, `${t.budget.steps} steps`, t.tools.join(',')]),
            ['TASK', 'TITLE', 'BUDGET', 'TOOLS'],
          ),
        ];
        for (const e of r.errors) lines.push(`error: ${e.file}: ${e.field}: ${e.message}`);
        return lines.join('\n');
      });
      if (r.errors.length) ctx.setExit(EXIT.findings);
    });

  program
    .command('run <task>')
    .description('run a task with the simulated model; the host checks, executes and records every step')
    .option('--variant <variant>', `model behaviour: ${VARIANTS.join(', ')}`, variantArg, 'careful')
    .option('--seed <n>', 'seed of the model (same task, variant and seed: same proposals)', seedArg, 1)
    .action(async (task: string, o: { variant: Variant; seed: number }) => {
      await startAndWait(ctx, (svc) =>
        svc.invoke('run.start', { task_id: task, variant: o.variant, seed: o.seed }),
      );
    });

  program
    .command('rerun <run>')
    .description('a new run of the same task with the same agent settings (mode rerun)')
    .action(async (run: string) => {
      await startAndWait(ctx, (svc) => svc.invoke('run.rerun', { run_id: run }));
    });

  program
    .command('resume <run>')
    .description('continue a run whose writer died or whose model crashed, from its ledger')
    .action(async (run: string) => {
      await startAndWait(ctx, (svc) => svc.invoke('run.resume', { run_id: run }));
    });

  program
    .command('replay <run>')
    .description(
      're-execute a run from its recorded proposals, without the model; report the first divergence',
    )
    .action(async (run: string) => {
      const svc = await ctx.service();
      const r = await svc.invoke('run.replay', { run_id: run });
      ctx.print(r, () => {
        if (r.ok) return `ok: replay ${r.run_id} of ${r.of} matches (${r.outcome})`;
        const d = r.first_divergence!;
        return [
          `diverged at seq ${d.seq} of ${r.of} (replay ${r.run_id})`,
          `  expected: ${d.expected ? `${d.expected.kind} ${oneLine(d.expected.payload, 120)}` : '(nothing)'}`,
          `  actual:   ${d.actual ? `${d.actual.kind} ${oneLine(d.actual.payload, 120)}` : '(nothing)'}`,
        ].join('\n');
      });
      ctx.setExit(r.ok ? EXIT.ok : EXIT.findings);
    });
}
