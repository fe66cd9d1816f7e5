import { spawn } from 'node:child_process';
import { cpSync, realpathSync, renameSync, rmSync } from 'node:fs';
import { confine as confinePath, mkdirConfined } from '../fs/confine';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { createTwoFilesPatch } from 'diff';
import { firstDivergence, type ReplayReport } from './divergence';
import { ProofloopError } from '../../shared/result';
import { sha256Hex } from '../crypto';
import type { Ledger, RunWriter, StoredEvent } from '../ledger';
import { boundedExcerpt, readArtifact, redactText, storeArtifact } from './artifacts';
import { loadTask, READ_ONLY_TOOLS, type LoadedTask } from './catalog';
import { childEntry, childEnv } from './children';
import { PolicyEngine, type Decision } from './policy';
import { ProcessAgent, RecordedAgent, type AgentDriver, type AgentReply } from './agents';
import type { Action, ModelTask, Observation, Variant } from './protocol';
import { isVariant, VARIANTS } from './protocol';
import { confine, executeTool } from './tools';
import type { Verdict } from './judge-process';

export type RunMode = 'live' | 'rerun' | 'replay' | 'resume';

export interface RunResult {
  run_id: string;
  /** completed or failed: how the run ended. */
  status: 'completed' | 'failed';
  /** passed, failed, budget_exhausted, incomplete (replay ran out of recorded actions), or the failure's error type. */
  outcome: string;
  passed: boolean;
  head_seq: number;
}

export interface RunMeta {
  task_id: string;
  variant: Variant;
  seed: number;
  mode: RunMode;
  of?: string;
}

/** A failed judge verdict is shown to the model this many times before the run ends as failed. */
const MAX_JUDGE_RUNS = 3;
const PATCH_BYTES = 4096;

export const timeoutText = (ms: number): string => `timed out after ${ms} ms; its process group was killed`;
export const interruptedText =
  'interrupted: the host died while this call ran; it was not run again because it may have had an effect';
const deniedText = (d: { rule: string; reason: string }) => `denied by ${d.rule}: ${d.reason}`;

export function newRunId(taskId: string, variant: string): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '');
  return `${taskId}-${variant}-${stamp}-${randomBytes(3).toString('hex')}`;
}

function modelTask(t: LoadedTask): ModelTask {
  return { id: t.task.id, goal: t.task.goal, judge_command: t.task.judge.command, hints: t.task.sim ?? null };
}

/** Runs the judge process on a workspace and returns its verdict. It never sees the ledger. */
export function runJudge(workspace: string, command: string, timeoutMs: number): Promise<Verdict> {
  const { command: exe, args } = childEntry('judge');
  return new Promise((resolve, reject) => {
    const child = spawn(exe, [...args, JSON.stringify({ workspace, command, timeout_ms: timeoutMs })], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: childEnv(),
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString('utf8')));
    child.stderr.on('data', (b: Buffer) => (err += b.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs + 15_000);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const line = out.trim().split('\n').at(-1) ?? '';
      try {
        resolve(JSON.parse(line) as Verdict);
      } catch {
        reject(
          Object.assign(new Error(`judge process ended (${signal ?? `code ${code}`}) without a verdict`), {
            stderr: err,
          }),
        );
      }
    });
  });
}

/** What the state of a run's calls is, rebuilt from its events. */
interface CallRecord {
  call_id: string;
  tool: string;
  args: Record<string, unknown>;
  decision?: StoredEvent;
  invoked?: StoredEvent;
  result?: StoredEvent;
}

type StepRecord =
  { kind: 'call'; call: CallRecord } | { kind: 'final'; responded: StoredEvent; verdict?: StoredEvent };

export interface Reconstructed {
  started: StoredEvent | undefined;
  steps: StepRecord[];
  last: StoredEvent | undefined;
  /** Wall time used by earlier segments (run_started / run_resumed to their last event). */
  wallUsed: number;
  tokens: number;
  proposals: number;
  judgeRuns: number;
}

/** Folds a run's events into the host's view: steps, counts, wall time used. */
export function reconstruct(events: readonly StoredEvent[]): Reconstructed {
  const r: Reconstructed = {
    started: undefined,
    steps: [],
    last: events.at(-1),
    wallUsed: 0,
    tokens: 0,
    proposals: 0,
    judgeRuns: 0,
  };
  const calls = new Map<string, CallRecord>();
  let segStart: number | null = null;
  let segLast: number | null = null;
  const closeSeg = () => {
    if (segStart !== null && segLast !== null) r.wallUsed += Math.max(0, segLast - segStart);
  };
  for (const e of events) {
    const p = e.payload as Record<string, unknown>;
    const t = Date.parse(e.at);
    if (e.kind === 'run_started' || e.kind === 'run_resumed') {
      closeSeg();
      segStart = t;
    }
    segLast = t;
    switch (e.kind) {
      case 'run_started':
        r.started = e;
        break;
      case 'model_proposed': {
        const c: CallRecord = {
          call_id: String(p.call_id),
          tool: String(p.tool),
          args: (p.args ?? {}) as Record<string, unknown>,
        };
        calls.set(c.call_id, c);
        r.steps.push({ kind: 'call', call: c });
        r.proposals += 1;
        r.tokens += Number(p.tokens ?? 0);
        break;
      }
      case 'action_allowed':
      case 'action_denied': {
        const c = calls.get(String(p.call_id));
        if (c) c.decision = e;
        break;
      }
      case 'tool_invoked': {
        const c = calls.get(String(p.call_id));
        if (c) c.invoked = e;
        break;
      }
      case 'tool_returned':
      case 'tool_timed_out': {
        const c = calls.get(String(p.call_id));
        if (c) c.result = e;
        break;
      }
      case 'model_responded':
        r.steps.push({ kind: 'final', responded: e });
        r.tokens += Number(p.tokens ?? 0);
        break;
      case 'judge_verdict': {
        const last = r.steps.at(-1);
        if (last?.kind === 'final') last.verdict = e;
        r.judgeRuns += 1;
        break;
      }
    }
  }
  closeSeg();
  return r;
}

/** The action a recorded step came from (replay uses these instead of the model). */
export function recordedActions(events: readonly StoredEvent[]): Action[] {
  const out: Action[] = [];
  for (const e of events) {
    const p = e.payload as Record<string, unknown>;
    if (e.kind === 'model_proposed') {
      out.push({
        kind: 'call',
        tool: String(p.tool),
        args: (p.args ?? {}) as Record<string, unknown>,
        tokens: Number(p.tokens ?? 0),
      });
    } else if (e.kind === 'model_responded') {
      out.push({
        kind: 'final',
        content: String(p.content),
        tokens: Number(p.tokens ?? 0),
        give_up: p.give_up === true,
      });
    }
  }
  return out;
}

/** The observation the model got for a finished call, rebuilt from the ledger (and artifacts). */
function observationOf(runDir: string, c: CallRecord): Observation | null {
  const base = { kind: 'tool' as const, call_id: c.call_id, tool: c.tool };
  if (c.decision?.kind === 'action_denied') {
    const d = c.decision.payload as { rule: string; reason: string };
    return { ...base, status: 'denied', output: deniedText(d) };
  }
  if (!c.result) return null;
  const p = c.result.payload as Record<string, unknown>;
  if (c.result.kind === 'tool_timed_out')
    return { ...base, status: 'timeout', output: timeoutText(Number(p.timeout_ms)) };
  const art = (p.artifact as { digest?: string } | undefined)?.digest;
  const output = (art && readArtifact(runDir, art)) ?? String(p.excerpt ?? '');
  const status = String(p.status);
  return {
    ...base,
    status: status === 'interrupted' ? 'interrupted' : status === 'ok' ? 'ok' : 'error',
    output,
  };
}

function verdictObservation(runDir: string, verdict: StoredEvent): Observation {
  const p = verdict.payload as Record<string, unknown>;
  const art = (p.artifact as { digest?: string } | undefined)?.digest;
  return {
    kind: 'verdict',
    passed: p.passed === true,
    tests_passed: Number(p.tests_passed ?? 0),
    tests_failed: Number(p.tests_failed ?? 0),
    output: (art && readArtifact(runDir, art)) ?? String(p.excerpt ?? ''),
  };
}

class RunEnded extends Error {
  constructor(readonly result: Omit<RunResult, 'run_id' | 'head_seq'>) {
    super('run ended');
  }
}

/** One run being executed: the host's loop over the agent's actions. Only the host appends. */
class Session {
  private proposals = 0;
  private tokens = 0;
  private judgeRuns = 0;
  private readonly segmentStart = performance.now();
  readonly history: Observation[] = [];
  readonly engine: PolicyEngine;
  private agent: AgentDriver | null = null;

  constructor(
    readonly writer: RunWriter,
    readonly runDir: string,
    readonly workspace: string,
    readonly loaded: LoadedTask,
    private readonly wallBefore = 0,
  ) {
    this.engine = new PolicyEngine(loaded.policy);
  }

  restore(r: Reconstructed): void {
    this.proposals = r.proposals;
    this.tokens = r.tokens;
    this.judgeRuns = r.judgeRuns;
  }

  private get budget() {
    return this.loaded.policy.budget;
  }

  private wallUsed(): number {
    return this.wallBefore + Math.round(performance.now() - this.segmentStart);
  }

  private append(kind: string, payload: Record<string, unknown>): StoredEvent {
    return this.writer.append(kind, payload);
  }

  private exhausted(
    budget: 'steps' | 'tokens' | 'wall_ms',
    limit: number,
    used: number,
    first: { kind: string; payload: Record<string, unknown> }[] = [],
  ): never {
    this.writer.appendBatch([
      ...first,
      { kind: 'budget_exhausted', payload: { budget, limit, used } },
      { kind: 'run_completed', payload: { outcome: 'budget_exhausted', budget } },
    ]);
    throw new RunEnded({ status: 'completed', outcome: 'budget_exhausted', passed: false });
  }

  /** Waits for the agent, but never beyond the wall-time budget. */
  private async ask(p: Promise<AgentReply>): Promise<AgentReply> {
    const left = this.budget.wall_ms - this.wallUsed();
    if (left <= 0) this.exhausted('wall_ms', this.budget.wall_ms, this.wallUsed());
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'wall'>((resolve) => (timer = setTimeout(() => resolve('wall'), left)));
    const r = await Promise.race([p, deadline]);
    clearTimeout(timer);
    if (r === 'wall') this.exhausted('wall_ms', this.budget.wall_ms, this.wallUsed());
    return r;
  }

  /** A new proposal: recorded with its decision in one transaction (or with the budget that stops it). */
  async propose(action: Extract<Action, { kind: 'call' }>): Promise<Observation> {
    this.proposals += 1;
    this.tokens += action.tokens;
    const call_id = `c${this.proposals}`;
    const proposed = {
      kind: 'model_proposed',
      payload: { call_id, tool: action.tool, args: action.args, tokens: action.tokens },
    };
    if (this.proposals > this.budget.steps)
      this.exhausted('steps', this.budget.steps, this.proposals - 1, [proposed]);
    if (this.tokens > this.budget.tokens)
      this.exhausted('tokens', this.budget.tokens, this.tokens, [proposed]);
    if (this.wallUsed() > this.budget.wall_ms)
      this.exhausted('wall_ms', this.budget.wall_ms, this.wallUsed(), [proposed]);
    let d: Decision = this.engine.decide({ tool: action.tool, args: action.args });
    if (d.allowed) d = confine(this.workspace, action.tool, action.args) ?? d;
    this.writer.appendBatch([
      proposed,
      {
        kind: d.allowed ? 'action_allowed' : 'action_denied',
        payload: { call_id, rule: d.rule, reason: d.reason },
      },
    ]);
    if (!d.allowed)
      return { kind: 'tool', call_id, tool: action.tool, status: 'denied', output: deniedText(d) };
    return this.execute(call_id, action.tool, action.args);
  }

  /** Executes an allowed call: tool_invoked, then its result (and file change) in one transaction. */
  async execute(
    call_id: string,
    tool: string,
    args: Record<string, unknown>,
    extra: Record<string, unknown> = {},
  ): Promise<Observation> {
    this.append('tool_invoked', { call_id, tool, args });
    const t0 = performance.now();
    const r = await executeTool(this.workspace, this.engine, tool, args);
    const duration_ms = Math.round(performance.now() - t0);
    if (r.status === 'timeout') {
      const ms = r.timeout_ms ?? this.engine.timeoutOf(tool);
      this.append('tool_timed_out', {
        call_id,
        timeout_ms: ms,
        killed: 'process_group',
        duration_ms,
        ...extra,
      });
      return { kind: 'tool', call_id, tool, status: 'timeout', output: timeoutText(ms) };
    }
    return this.recordResult(call_id, tool, r.status, r.output, duration_ms, extra, r.change, r.exit_code);
  }

  recordResult(
    call_id: string,
    tool: string,
    status: 'ok' | 'error' | 'interrupted',
    output: string,
    duration_ms: number,
    extra: Record<string, unknown>,
    change?: Awaited<ReturnType<typeof executeTool>>['change'],
    exit_code?: number | null,
  ): Observation {
    // Redact the whole output before cutting the excerpt: a cut could split a secret past a detector.
    const art = storeArtifact(this.runDir, output);
    const items: { kind: string; payload: Record<string, unknown> }[] = [
      {
        kind: 'tool_returned',
        payload: {
          call_id,
          status,
          duration_ms,
          excerpt: boundedExcerpt(art.text, this.loaded.policy.limits.excerpt_bytes),
          digest: art.digest,
          bytes: art.bytes,
          artifact: { digest: art.digest, redacted: art.redacted },
          ...(exit_code !== undefined ? { exit_code } : {}),
          ...extra,
        },
      },
    ];
    if (change && change.before !== change.after) {
      const patch = redactText(
        createTwoFilesPatch(`a/${change.path}`, `b/${change.path}`, change.beforeText, change.afterText),
      ).text;
      items.push({
        kind: 'file_changed',
        payload: {
          call_id,
          path: change.path,
          before: change.before,
          after: change.after,
          patch: boundedExcerpt(patch, PATCH_BYTES),
        },
      });
    }
    this.writer.appendBatch(items);
    return { kind: 'tool', call_id, tool, status, output: art.text };
  }

  /** A final answer: recorded, judged; the verdict ends the run or goes back to the model. */
  async final(action: Extract<Action, { kind: 'final' }>, alreadyResponded = false): Promise<Observation> {
    if (!alreadyResponded) {
      this.tokens += action.tokens;
      this.append('model_responded', {
        content: action.content,
        tokens: action.tokens,
        final: true,
        give_up: action.give_up,
      });
    }
    return this.judge(action.give_up);
  }

  async judge(gaveUp: boolean): Promise<Observation> {
    const j = this.loaded.task.judge;
    let v: Verdict;
    try {
      v = await runJudge(this.workspace, j.command, j.timeout_ms);
    } catch (e) {
      const stderr = (e as { stderr?: string }).stderr ?? (e as Error).stack ?? '';
      this.append('run_failed', {
        reason: (e as Error).message,
        error_type: 'judge_error',
        stack_digest: sha256Hex(stderr),
      });
      throw new RunEnded({ status: 'failed', outcome: 'judge_error', passed: false });
    }
    this.judgeRuns += 1;
    const art = storeArtifact(this.runDir, v.output);
    const verdict = {
      kind: 'judge_verdict',
      payload: {
        passed: v.passed,
        tests_passed: v.tests_passed,
        tests_failed: v.tests_failed,
        command: v.command,
        exit_code: v.exit_code,
        timed_out: v.timed_out,
        output_digest: art.digest,
        excerpt: boundedExcerpt(art.text, this.loaded.policy.limits.excerpt_bytes),
        artifact: { digest: art.digest, redacted: art.redacted },
      },
    };
    if (v.passed || gaveUp || this.judgeRuns >= MAX_JUDGE_RUNS) {
      const outcome = v.passed ? 'passed' : 'failed';
      this.writer.appendBatch([
        verdict,
        { kind: 'run_completed', payload: { outcome, judge_runs: this.judgeRuns } },
      ]);
      throw new RunEnded({ status: 'completed', outcome, passed: v.passed });
    }
    this.writer.append(verdict.kind, verdict.payload);
    return {
      kind: 'verdict',
      passed: false,
      tests_passed: v.tests_passed,
      tests_failed: v.tests_failed,
      output: art.text,
    };
  }

  /** The loop: the agent's replies until the run ends. */
  async loop(agent: AgentDriver, first: Promise<AgentReply>): Promise<never> {
    this.agent = agent;
    let reply = await this.ask(first);
    for (;;) {
      if (reply.type === 'crash') {
        this.append('run_failed', {
          reason: reply.reason,
          error_type: reply.error_type,
          stack_digest: sha256Hex(reply.stderr),
          at_step: this.proposals,
        });
        throw new RunEnded({ status: 'failed', outcome: reply.error_type, passed: false });
      }
      if (reply.type === 'exhausted') {
        this.append('run_completed', { outcome: 'incomplete', reason: 'the recording has no more actions' });
        throw new RunEnded({ status: 'completed', outcome: 'incomplete', passed: false });
      }
      const a = reply.action;
      const obs = a.kind === 'call' ? await this.propose(a) : await this.final(a);
      this.history.push(obs);
      reply = await this.ask(agent.observe(obs));
    }
  }

  stopAgent(): void {
    this.agent?.close();
  }
}

export interface HostOptions {
  /** Task catalog directory. */
  tasksDir: string;
}

/** Starts, resumes and replays runs of a ledger's folder. */
export class RunHost {
  constructor(
    private readonly ledger: Ledger,
    private readonly opts: HostOptions,
  ) {}

  private runDir(runId: string): string {
    return path.join(this.ledger.folder, runId);
  }

  /** `<run>/workspace`, refused when it or the run folder is a link (fs/confine.ts). */
  private workspaceDir(runId: string): string {
    return confinePath(this.ledger.folder, [runId, 'workspace'], 'workspace');
  }

  /** Copies the task's workspace into the run (atomically: a crash leaves no half-copied workspace). */
  private prepareWorkspace(runId: string, loaded: LoadedTask): string {
    // Confined: with <run> or <run>/workspace a link, the removal and copy would happen outside.
    const folder = this.ledger.folder;
    mkdirConfined(folder, runId, 'run folder');
    const ws = this.workspaceDir(runId);
    const tmp = confinePath(folder, [runId, 'workspace.partial'], 'workspace');
    rmSync(tmp, { recursive: true, force: true });
    rmSync(ws, { recursive: true, force: true });
    cpSync(loaded.workspace, tmp, { recursive: true, verbatimSymlinks: true });
    renameSync(tmp, ws);
    return realpathSync(ws);
  }

  private runStartedPayload(loaded: LoadedTask, meta: RunMeta): Record<string, unknown> {
    return {
      task_id: loaded.task.id,
      title: loaded.task.title,
      goal: loaded.task.goal,
      agent: { name: 'sim', variant: meta.variant, seed: meta.seed },
      policy_digest: loaded.policy_digest,
      budget: { ...loaded.policy.budget },
      mode: meta.mode,
      ...(meta.of ? { of: meta.of } : {}),
    };
  }

  /** A fresh workspace and run_started: the session of a run from its first step. */
  private startSession(writer: RunWriter, loaded: LoadedTask, meta: RunMeta): Session {
    const ws = this.prepareWorkspace(writer.runId, loaded);
    writer.append('run_started', this.runStartedPayload(loaded, meta));
    return new Session(writer, this.runDir(writer.runId), ws, loaded);
  }

  /** Starts a run; returns its id at once and a promise of how it ended. */
  start(meta: RunMeta, recorded?: Action[]): { run_id: string; done: Promise<RunResult> } {
    if (!isVariant(meta.variant))
      throw new ProofloopError(
        'bad_args',
        `unknown variant "${meta.variant}" (one of ${VARIANTS.join(', ')})`,
      );
    if (!Number.isSafeInteger(meta.seed)) throw new ProofloopError('bad_args', 'seed must be an integer');
    const loaded = loadTask(this.opts.tasksDir, meta.task_id);
    const runId = newRunId(meta.task_id, meta.variant);
    const writer = this.ledger.writer(runId, {
      label: `runner ${meta.mode}`,
      create: { source: 'executed', meta: { ...meta, tasks_dir: this.opts.tasksDir } },
    });
    const done = this.execute(writer, loaded, meta, recorded);
    return { run_id: runId, done };
  }

  private async execute(
    writer: RunWriter,
    loaded: LoadedTask,
    meta: RunMeta,
    recorded?: Action[],
  ): Promise<RunResult> {
    let session: Session | null = null;
    return this.guard(
      writer,
      () => session,
      async () => {
        session = this.startSession(writer, loaded, meta);
        const agent = recorded
          ? new RecordedAgent(recorded)
          : new ProcessAgent(modelTask(loaded), meta.variant, meta.seed);
        await session.loop(agent, agent.first([], false));
      },
    );
  }

  /** Runs `body` until the run ends; any unexpected error becomes run_failed. Always closes the writer. */
  private async guard(
    writer: RunWriter,
    session: () => Session | null,
    body: () => Promise<void>,
  ): Promise<RunResult> {
    const runId = writer.runId;
    let ended: Omit<RunResult, 'run_id' | 'head_seq'>;
    try {
      await body();
      ended = { status: 'failed', outcome: 'host_error', passed: false };
    } catch (e) {
      if (e instanceof RunEnded) {
        ended = e.result;
      } else {
        const err = e as Error;
        try {
          writer.append('run_failed', {
            reason: err.message,
            error_type: e instanceof ProofloopError ? `host_${e.code}` : 'host_error',
            stack_digest: sha256Hex(err.stack ?? err.message),
          });
        } catch {
          // The writer itself failed (lock lost, disk): the run stays open for resume.
        }
        ended = { status: 'failed', outcome: 'host_error', passed: false };
      }
    } finally {
      session()?.stopAgent();
      writer.close();
    }
    return { run_id: runId, head_seq: this.ledger.run(runId)?.head_seq ?? 0, ...ended };
  }

  /** The recorded agent settings of a run (its run_started, else the meta it was created with). */
  settingsOf(runId: string): RunMeta {
    const run = this.ledger.run(runId);
    if (!run) throw new ProofloopError('not_found', `no run "${runId}" in ${this.ledger.folder}`);
    const started = this.ledger.read(runId, { kinds: ['run_started'], limit: 1 })[0];
    if (started) {
      const p = started.payload as {
        task_id: string;
        agent: { variant?: string; seed?: number };
        mode?: RunMode;
        of?: string;
      };
      const variant = p.agent.variant ?? 'careful';
      if (!isVariant(variant))
        throw new ProofloopError(
          'invalid_input',
          `run ${runId} has variant "${variant}", which this runner does not know`,
        );
      return { task_id: p.task_id, variant, seed: p.agent.seed ?? 0, mode: p.mode ?? 'live', of: p.of };
    }
    const m = run.meta as Partial<RunMeta>;
    if (!m.task_id || !m.variant || !isVariant(m.variant)) {
      throw new ProofloopError(
        'invalid_input',
        `run ${runId} was not started by this runner: no task or variant recorded`,
      );
    }
    return { task_id: m.task_id, variant: m.variant, seed: m.seed ?? 0, mode: m.mode ?? 'live', of: m.of };
  }

  rerun(runId: string): { run_id: string; done: Promise<RunResult> } {
    const s = this.settingsOf(runId);
    return this.start({ task_id: s.task_id, variant: s.variant, seed: s.seed, mode: 'rerun', of: runId });
  }

  /**
   * Continues a run whose writer died (or whose model crashed): state is rebuilt from its events,
   * the model is not asked again for recorded steps, run_resumed {from_seq} is appended, an
   * interrupted call is re-run only if it is a read, and the run goes on to its end.
   */
  resume(runId: string): { run_id: string; done: Promise<RunResult> } {
    const settings = this.settingsOf(runId);
    const events = this.ledger.read(runId);
    const r = reconstruct(events);
    const last = r.last;
    if (last?.kind === 'run_completed') {
      throw new ProofloopError(
        'conflict',
        `run ${runId} already completed (${String((last.payload as { outcome?: unknown }).outcome)}): nothing to resume`,
      );
    }
    if (last?.kind === 'run_failed') {
      const type = String((last.payload as { error_type?: unknown }).error_type ?? '');
      if (!['model_crash', 'model_error', 'host_error'].includes(type)) {
        throw new ProofloopError(
          'conflict',
          `run ${runId} failed with ${type || 'an error'}, which resume cannot repair`,
        );
      }
    }
    const loaded = loadTask(this.opts.tasksDir, settings.task_id);
    // Takes over a lock left by a dead process; a live writer makes this fail with `conflict`.
    const writer = this.ledger.writer(runId, { label: 'runner resume', create: false, resume: true });
    let session: Session | null = null;
    const done = this.guard(
      writer,
      () => session,
      async () => {
        if (!r.started) {
          // Died before run_started: nothing was asked of the model yet; start over cleanly.
          session = this.startSession(writer, loaded, settings);
          const agent = new ProcessAgent(modelTask(loaded), settings.variant, settings.seed);
          await session.loop(agent, agent.first([], false));
          return;
        }
        const runDir = this.runDir(runId);
        const ws = realpathSync(this.workspaceDir(runId));
        const s = new Session(writer, runDir, ws, loaded, r.wallUsed);
        session = s;
        s.restore(r);
        // Observations of the finished steps, in order: what the model saw, rebuilt from the ledger.
        for (const step of r.steps) {
          if (step.kind === 'call') {
            const o = observationOf(runDir, step.call);
            if (o) s.history.push(o);
          } else if (step.verdict && !(step.verdict.payload as { passed?: boolean }).passed) {
            s.history.push(verdictObservation(runDir, step.verdict));
          }
        }
        const tail = r.steps.at(-1);
        const pendingCall = tail?.kind === 'call' && !observationOf(runDir, tail.call) ? tail.call : null;
        const pendingJudge = tail?.kind === 'final' && !tail.verdict ? tail : null;
        const pending = pendingCall
          ? {
              call_id: pendingCall.call_id,
              tool: pendingCall.tool,
              state: pendingCall.invoked ? 'invoked' : 'allowed',
              rerun: !pendingCall.invoked || READ_ONLY_TOOLS.has(pendingCall.tool),
            }
          : pendingJudge
            ? { judge: true }
            : null;
        writer.append('run_resumed', {
          from_seq: last?.seq ?? 0,
          after: last?.kind ?? null,
          pending,
          steps_recorded: r.proposals,
        });
        if (pendingCall) {
          const c = pendingCall;
          let obs: Observation;
          if (!c.invoked) obs = await s.execute(c.call_id, c.tool, c.args);
          else if (READ_ONLY_TOOLS.has(c.tool))
            obs = await s.execute(c.call_id, c.tool, c.args, { rerun: true });
          else obs = s.recordResult(c.call_id, c.tool, 'interrupted', interruptedText, 0, { rerun: false });
          s.history.push(obs);
        } else if (pendingJudge) {
          const give = (pendingJudge.responded.payload as { give_up?: boolean }).give_up === true;
          s.history.push(await s.final({ kind: 'final', content: '', tokens: 0, give_up: give }, true));
        }
        const agent = new ProcessAgent(modelTask(loaded), settings.variant, settings.seed);
        await s.loop(agent, agent.first(s.history, true));
      },
    );
    return { run_id: runId, done };
  }

  /**
   * Replays a run: a new run (mode replay) on a fresh copy of the task, driven by the recorded
   * proposals instead of the model; reports the first seq of the source run whose decision or tool
   * result differs.
   */
  async replay(runId: string): Promise<ReplayReport> {
    const settings = this.settingsOf(runId);
    const source = this.ledger.read(runId);
    const { run_id, done } = this.start(
      {
        task_id: settings.task_id,
        variant: settings.variant,
        seed: settings.seed,
        mode: 'replay',
        of: runId,
      },
      recordedActions(source),
    );
    const result = await done;
    const replayed = this.ledger.read(run_id);
    const first_divergence = firstDivergence(source, replayed);
    return { ok: first_divergence === null, first_divergence, run_id, result };
  }
}
