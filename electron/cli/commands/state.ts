import type { Command } from 'commander';
import type { Ledger } from '../../ledger';
import { changesAt, stateAt } from '../../state';
import type { DivergenceExplained } from '../../runner/agent-diff';
import type { Change, RunState } from '../../../shared/state';
import type { DiffRow, RunDiff } from '../../../shared/diff';
import { intOption, oneLine, table } from '../format';
import { replayVerdict, type ReplayVerdict } from '../../state/replay-verdict';
import { teamChanges, teamDiff, teamSpec, teamState } from './team';

/** What these commands need from the CLI: the CliContext of electron/cli/context.ts fits. */
export interface StateCliContext {
  /** The ledger; `run`: the command is about that run only (its source alone is read, not the folder). */
  ledger(run?: string): Ledger | Promise<Ledger>;
  /** --json given (or read through opts() at action time). */
  json?: boolean;
  opts?: () => { json: boolean };
  out(s: string): void;
}

/** A value as JSON on one line (strings quoted), ∅ for none. */
const short = (v: unknown, max = 60): string =>
  v === undefined ? '∅' : oneLine(JSON.stringify(v) ?? String(v), max);

function capped(label: string, list: { total: number; dropped: number }): string {
  return list.dropped
    ? `${label} ${list.total} (last ${list.total - list.dropped} kept)`
    : `${label} ${list.total}`;
}

export function formatState(s: RunState, how: string): string {
  const lines: string[] = [];
  lines.push(`run ${s.run_id} at seq ${s.seq}: ${s.status}${s.why ? ` — ${s.why}` : ''}   (${how})`);
  if (s.task) lines.push(`task   ${s.task.task_id}: ${s.task.goal}${s.task.mode ? ` [${s.task.mode}]` : ''}`);
  if (s.agent)
    lines.push(
      `agent  ${s.agent.name}${s.agent.variant ? ` ${s.agent.variant}` : ''}${s.agent.seed !== null ? ` seed ${s.agent.seed}` : ''}`,
    );
  const lim = s.budget.limits;
  const use = (name: 'steps' | 'tokens' | 'wall_ms') =>
    `${s.budget.used[name]}${lim[name] !== undefined ? `/${lim[name]}` : ''}`;
  lines.push(
    `budget steps ${use('steps')}  tokens ${use('tokens')}  wall_ms ${use('wall_ms')}` +
      (s.budget.exhausted ? `  EXHAUSTED ${s.budget.exhausted.budget} at seq ${s.budget.exhausted.seq}` : ''),
  );
  lines.push(
    [
      capped('calls', s.calls) + ` (${s.calls.open} open)`,
      capped('files', s.files),
      capped('denials', s.denials),
      capped('errors', s.errors),
      `verdicts ${s.verdicts.passed} passed / ${s.verdicts.failed} failed`,
      capped('notes', s.notes),
    ].join(' · '),
  );
  lines.push(
    `counts ${
      Object.entries(s.counts)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ') || '(none)'
    }`,
  );
  if (s.unknown.total)
    lines.push(
      `unknown kinds ${Object.entries(s.unknown.kinds)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ')}`,
    );
  const calls = s.calls.items.slice(-10);
  if (calls.length) {
    lines.push('', `last ${calls.length} calls:`);
    lines.push(
      table(
        calls.map((c) => [
          `#${c.n}`,
          c.call_id,
          c.tool,
          c.status,
          c.decision ? `${c.decision.allowed ? 'allow' : 'deny'} ${c.decision.rule}` : '',
          c.result ? c.result.status : c.timed_out ? `timeout ${c.timed_out.timeout_ms}ms` : '',
          c.duration_ms !== null ? `${c.duration_ms}ms` : '',
          short(c.args, 40),
        ]),
        ['n', 'call', 'tool', 'status', 'decision', 'result', 'took', 'args'],
      ),
    );
  }
  if (s.files.items.length)
    lines.push('', `files: ${s.files.items.map((f) => `${f.path} (${f.changes}×)`).join(', ')}`);
  if (s.verdicts.last) {
    const v = s.verdicts.last;
    lines.push(
      `judge: ${v.passed ? 'PASSED' : 'FAILED'} at seq ${v.seq}${v.tests_failed !== null ? ` (${v.tests_passed ?? '?'} passed, ${v.tests_failed} failed)` : ''}`,
    );
  }
  for (const n of s.notes.items.slice(-10)) lines.push(`note seq ${n.seq} ${n.code}: ${n.message}`);
  return lines.join('\n');
}

export function formatChanges(seq: number, kind: string, changes: readonly Change[]): string {
  if (changes.length === 0) return `seq ${seq} ${kind}: no change to the state`;
  return [
    `seq ${seq} ${kind}: ${changes.length} change${changes.length === 1 ? '' : 's'}`,
    ...changes.map((c) => `  ${c.path}: ${short(c.old)} → ${short(c.new)}`),
  ].join('\n');
}

function rowSummary(r: DiffRow): string {
  if (r.type === 'same') return r.count > 1 ? `${r.count} events alike` : 'alike';
  const call = r.left_call ?? r.right_call;
  if (r.type === 'changed') {
    const ch = r.changes ?? [];
    const shown = ch.slice(0, 2).map((c) => `${c.path}: ${short(c.old, 30)} → ${short(c.new, 30)}`);
    return (call ? `${call} ` : '') + shown.join('; ') + (ch.length > 2 ? `; +${ch.length - 2} more` : '');
  }
  return call ? `call ${call}` : '';
}

export function formatDiff(
  d: RunDiff & { cause?: DivergenceExplained | null; replay?: ReplayVerdict | null },
  limit: number,
): string {
  const lines: string[] = [];
  const f = d.first_divergence;
  lines.push(
    f
      ? `first divergence: ${f.type} at left seq ${f.left_seq ?? '(end)'} (${f.left_kind ?? '—'}) / right seq ${f.right_seq ?? '(end)'} (${f.right_kind ?? '—'})`
      : `no divergence: ${d.left.run_id} and ${d.right.run_id} are alike event by event`,
  );
  if (d.cause) {
    lines.push(`cause: ${d.cause.cause}: ${d.cause.reason}${d.cause.part ? ` [${d.cause.part}]` : ''}`);
    if (d.cause.setup.length) lines.push(`agents set up differently: ${d.cause.setup.join('; ')}`);
  }
  lines.push(
    `${d.left.run_id} (${d.left.events} events) vs ${d.right.run_id} (${d.right.events} events): ` +
      `${d.counts.same} same, ${d.counts.changed} changed, ${d.counts.only_left} only left, ${d.counts.only_right} only right`,
  );
  if (d.replay) {
    const v = d.replay;
    const fd = v.first_divergence;
    lines.push(
      `replay: ${v.replay} replays ${v.source}${v.ended ? '' : ' (still running)'}: ` +
        (fd
          ? `diverges at seq ${fd.seq} of ${v.source}${fd.cause ? `: cause ${fd.cause}` : ''}${fd.reason ? ` (${fd.reason})` : ''}`
          : 'no divergence'),
    );
  }
  if (d.settings?.length) {
    lines.push(
      `set up differently: ${d.settings.map((c) => `${c.path} ${short(c.old, 24)} → ${short(c.new, 24)}`).join('; ')}`,
    );
  }
  if (d.truncated) lines.push(`cut: ${d.truncated.reason}`);
  const rows = d.rows.slice(0, limit);
  lines.push(
    '',
    table(
      rows.map((r) => [
        r.type === 'same' && r.count > 1 ? `same ×${r.count}` : r.type,
        r.left_seq,
        r.right_seq,
        !r.left_kind || !r.right_kind || r.left_kind === r.right_kind
          ? (r.left_kind ?? r.right_kind)
          : `${r.left_kind}/${r.right_kind}`,
        rowSummary(r),
      ]),
      ['row', 'left', 'right', 'kind', 'summary'],
    ),
  );
  if (d.rows.length > rows.length)
    lines.push(`… ${d.rows.length - rows.length} more rows (--limit, or --json for all)`);
  if (d.state_changes.length) {
    lines.push(
      '',
      `final state: ${d.state_changes.length}${d.state_changes_left_off ? '+' : ''} differences`,
    );
    for (const c of d.state_changes.slice(0, 20))
      lines.push(`  ${c.path}: ${short(c.old, 40)} → ${short(c.new, 40)}`);
    if (d.state_changes.length > 20) lines.push(`  … ${d.state_changes.length - 20} more (--json)`);
  } else lines.push('', 'final state: alike');
  return lines.join('\n');
}

/** `state`, `changes` and `diff`: the state at a seq, what changed at a seq, two runs side by side. */
export function registerStateCommands(program: Command, ctx: StateCliContext): void {
  const hasGlobalJson = program.options.some((o) => o.long === '--json');
  const json = (cmd: Command): boolean =>
    Boolean((cmd.optsWithGlobals() as { json?: boolean }).json) ||
    Boolean(ctx.json) ||
    Boolean(ctx.opts?.().json);
  const withJson = (cmd: Command): Command =>
    hasGlobalJson ? cmd : cmd.option('--json', 'print machine-readable JSON');
  const print = (cmd: Command, value: unknown, human: () => string): void =>
    ctx.out(json(cmd) ? JSON.stringify(value, null, 2) : human());

  withJson(
    program
      .command('state <run>')
      .description('the state of a run at a seq: status and why, task, budget, calls, files, verdicts, notes')
      .requiredOption('--at <seq>', 'the seq (0 = before the first event)', intOption('--at'))
      .option('--full', 'fold from seq 1, ignoring snapshots'),
  ).action(async (run: string, o: { at: number; full?: boolean }, cmd: Command) => {
    const team = teamSpec(program);
    if (team) return teamState(team, run, o.at, (value, human) => print(cmd, value, human));
    const ledger = await ctx.ledger(run);
    const t0 = performance.now();
    const r = stateAt(ledger, run, o.at, { full: o.full ?? false });
    const ms = performance.now() - t0;
    print(cmd, { seq: r.seq, state: r.state, via: r.via, folded: r.folded }, () =>
      formatState(
        r.state,
        `${r.via === 'snapshot' ? `snapshot at seq ${r.from_seq}` : 'from seq 1'} + ${r.folded} folds, ${ms.toFixed(1)} ms`,
      ),
    );
  });

  withJson(
    program
      .command('changes <run>')
      .description('what changed in the state at a seq (state at seq-1 against state at seq)')
      .requiredOption('--at <seq>', 'the seq (≥ 1)', intOption('--at')),
  ).action(async (run: string, o: { at: number }, cmd: Command) => {
    const team = teamSpec(program);
    const r = team ? await teamChanges(team, run, o.at) : changesAt(await ctx.ledger(run), run, o.at);
    print(cmd, r, () => formatChanges(r.seq, r.kind, r.changes));
  });

  withJson(
    program
      .command('diff <runA> <runB>')
      .description(
        'align two runs event by event: first divergence, changed/inserted/missing events, final states',
      )
      .option('--limit <rows>', 'rows shown in the table', intOption('--limit'), 60),
  ).action(async (a: string, b: string, o: { limit: number }, cmd: Command) => {
    const team = teamSpec(program);
    if (team) {
      const d = await teamDiff(team, a, b);
      return print(cmd, d, () => formatDiff(d, o.limit));
    }
    const ledger = await ctx.ledger();
    // As runs.diff gives it: with the verdict when one of the two replays the other.
    const { diffRunsExplained } = await import('../../runner/agent-diff');
    const d = { ...(await diffRunsExplained(ledger, a, b)), replay: replayVerdict(ledger, a, b) };
    print(cmd, d, () => formatDiff(d, o.limit));
  });
}
