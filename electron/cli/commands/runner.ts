import { InvalidArgumentError, type Command } from 'commander';
import type { CliContext } from '../context';
import { EXIT } from '../context';
import { oneLine, table } from '../format';
import { isVariant, VARIANTS, type Variant } from '../../runner/protocol';
import type { ProofloopService } from '../../service/service';
import { AGENT_NAMES, isAgentName } from '../../runner/agents/names';
import path from 'node:path';

const variantArg = (v: string): Variant => {
  if (!isVariant(v)) throw new InvalidArgumentError(`--variant must be one of ${VARIANTS.join(', ')}`);
  return v;
};
const agentArg = (v: string): string => {
  if (!isAgentName(v)) throw new InvalidArgumentError(`--agent must be one of ${AGENT_NAMES.join(', ')}`);
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
  // A runs folder's appends are pushed in this process; a team ledger's are not followed here.
  const ledger = svc.ctx.sqlite();
  if (!ctx.tty || ctx.opts().json || !ledger) return () => {};
  return svc.onPush((channel, payload) => {
    if (channel !== 'events.appended') return;
    const p = payload as { run_id: string; from_seq: number; to_seq: number };
    const id = runId();
    if (id !== null && p.run_id !== id) return;
    for (const e of ledger.read(p.run_id, { from: p.from_seq, to: p.to_seq })) {
      process.stderr.write(progressLine(e) + '\n');
    }
  });
}

async function startAndWait(
  ctx: CliContext,
  start: (svc: ProofloopService) => Promise<{ run_id: string }>,
  repeat = 1,
): Promise<void> {
  if (repeat > 1) return repeatRuns(ctx, start, repeat);
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

/** How many of the first diverging pair's differences `--repeat` names. */
const PART_CHANGES = 8;
const side = (v: unknown): string => (v === undefined ? '(none)' : oneLine(v, 60));

/**
 * `--repeat N`: the same start N times, one after the other; prints each ending, the pass rate, and
 * where the runs part (the first divergence of each run from the first, with its cause).
 */
async function repeatRuns(
  ctx: CliContext,
  start: (svc: ProofloopService) => Promise<{ run_id: string }>,
  n: number,
): Promise<void> {
  const svc = await ctx.service({ create: true });
  const ends: { run_id: string; passed: boolean; outcome: string | null }[] = [];
  for (let i = 0; i < n; i++) {
    const { run_id } = await start(svc);
    const end = await svc.invoke('run.wait', { run_id });
    ends.push({ run_id, passed: end.passed, outcome: end.outcome });
    if (ctx.tty && !ctx.opts().json) process.stderr.write(`  ${i + 1}/${n} ${run_id}: ${end.outcome}\n`);
  }
  const first = ends[0]!.run_id;
  // Each run against the first: the run diff compares a real agent's events by their normalised
  // digests (what is run-specific replaced), so runs part only where they really differ.
  const parts: {
    run_id: string;
    seq: number | null;
    right_seq: number | null;
    kind: string | null;
    cause: string | null;
    reason: string | null;
    /** What differs in the first diverging pair (normalised payload paths), so a parting can be read. */
    changes: { path: string; old?: unknown; new?: unknown }[];
  }[] = [];
  for (const e of ends.slice(1)) {
    const d = await svc.invoke('runs.diff', { left: first, right: e.run_id });
    const fd = d.first_divergence;
    parts.push({
      run_id: e.run_id,
      seq: fd?.left_seq ?? null,
      right_seq: fd?.right_seq ?? null,
      kind: fd ? (fd.left_kind ?? fd.right_kind ?? null) : null,
      cause: fd ? (d.cause?.cause ?? null) : null,
      reason: fd ? (d.cause?.reason ?? null) : null,
      changes: fd
        ? (d.rows
            .find((r) => r.type === fd.type && r.left_seq === fd.left_seq && r.right_seq === fd.right_seq)
            ?.changes?.slice(0, PART_CHANGES) ?? [])
        : [],
    });
  }
  const passed = ends.filter((e) => e.passed).length;
  const alike = parts.filter((p) => p.kind === null).length;
  const result = {
    runs: ends,
    passed,
    total: n,
    pass_rate: passed / n,
    runs_like_first: alike,
    part_from_first: parts,
  };
  ctx.print(result, () =>
    [
      `pass rate ${passed}/${n} (${Math.round((100 * passed) / n)}%)`,
      n > 1
        ? alike === n - 1
          ? `the runs do not part: every run is alike ${first} event by event`
          : `${n - 1 - alike} of ${n - 1} runs part from ${first}`
        : '',
      ...ends.map((e) => `  ${e.run_id}: ${e.outcome}`),
      ...parts.map((p) =>
        p.kind === null
          ? `  ${p.run_id} runs like ${first}`
          : `  ${p.run_id} parts from ${first} at seq ${p.seq ?? '(end)'}${p.kind ? ` (${p.kind})` : ''}` +
            (p.cause ? `: ${p.cause}: ${p.reason}` : '') +
            p.changes.map((c) => `\n    ${c.path}: ${side(c.old)} → ${side(c.new)}`).join(''),
      ),
    ]
      .filter(Boolean)
      .join('\n'),
  );
  ctx.setExit(passed === n ? EXIT.ok : EXIT.findings);
}

const repeatArg = (v: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new InvalidArgumentError('--repeat must be 1 to 1000');
  return n;
};

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
    .description(
      'run a task with the simulated agent, or a real one (--agent claude-code|codex) refereed through its hooks; the host checks and records every step',
    )
    .option('--variant <variant>', `model behaviour: ${VARIANTS.join(', ')}`, variantArg, 'careful')
    .option('--seed <n>', 'seed of the model (same task, variant and seed: same proposals)', seedArg, 1)
    .option('--agent <agent>', `agent: ${AGENT_NAMES.join(', ')}`, agentArg, 'sim')
    .option(
      '--model-from <source>',
      "a real agent's model: sim (the variant answers, no key), replay:<run> (recorded answers), upstream (your key from the environment)",
      'sim',
    )
    .option('--model <name>', "the model a real agent is told to use (default: the agent's own)")
    .option(
      '--config <dir>',
      'a folder of settings.json / CLAUDE.md / .mcp.json for the agent (a configuration variant)',
    )
    .option(
      '--repeat <n>',
      'run the task n times; report the pass rate and where the runs part',
      repeatArg,
      1,
    )
    .action(
      async (
        task: string,
        o: {
          variant: Variant;
          seed: number;
          agent: string;
          modelFrom: string;
          model?: string;
          config?: string;
          repeat: number;
        },
      ) => {
        await startAndWait(
          ctx,
          (svc) =>
            svc.invoke('run.start', {
              task_id: task,
              variant: o.variant,
              seed: o.seed,
              ...(o.agent !== 'sim'
                ? {
                    agent: o.agent,
                    model_from: o.modelFrom,
                    ...(o.model ? { model: o.model } : {}),
                    ...(o.config ? { config_dir: path.resolve(o.config) } : {}),
                  }
                : {}),
            }),
          o.repeat,
        );
      },
    );

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
          `diverged at seq ${d.seq} of ${r.of} (replay ${r.run_id})${d.cause ? `: cause ${d.cause}` : ''}`,
          ...(d.reason ? [`  ${d.reason}`] : []),
          `  expected: ${d.expected ? `${d.expected.kind} ${oneLine(d.expected.payload, 120)}` : '(nothing)'}`,
          `  actual:   ${d.actual ? `${d.actual.kind} ${oneLine(d.actual.payload, 120)}` : '(nothing)'}`,
        ].join('\n');
      });
      ctx.setExit(r.ok ? EXIT.ok : EXIT.findings);
    });
}
