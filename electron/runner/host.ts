import { cpSync, realpathSync, renameSync, rmSync } from 'node:fs';
import { confine as confinePath, mkdirConfined } from '../fs/confine';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { replayDivergence, type Divergence, type ReplayReport } from './divergence';
import { ProofloopError } from '../../shared/result';
import { sha256Hex } from '../crypto';
import { Ledger } from '../ledger';
import type { LedgerEngine } from '../ledger/engine';
import { SqliteEngine } from '../ledger/sqlite-engine';
import { shareRunArtifacts } from './share-artifacts';
import { loadTask, READ_ONLY_TOOLS, type LoadedTask } from './catalog';
import { ProcessAgent, RecordedAgent } from './agents/sim';
import type { Action, ModelTask, Observation, Variant } from './protocol';
import { isVariant, VARIANTS } from './protocol';
import {
  interruptedText,
  observationOf,
  reconstruct,
  recordedActions,
  verdictObservation,
} from './reconstruct';
import { RunEnded, Session, type HostWriter } from './session';
import { realAgent } from './agents/registry';
import { RealRun, type ModelFrom, type RealRunMeta } from './real-run';
import { recordedRun } from './gateway/replay-source';

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

export function newRunId(taskId: string, variant: string): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '');
  return `${taskId}-${variant}-${stamp}-${randomBytes(3).toString('hex')}`;
}

function modelTask(t: LoadedTask): ModelTask {
  return { id: t.task.id, goal: t.task.goal, judge_command: t.task.judge.command, hints: t.task.sim ?? null };
}

export interface HostOptions {
  /** Task catalog directory. */
  tasksDir: string;
  /**
   * Where each run's folder goes (workspace, artifacts): a runs folder's own root by default; for a
   * team ledger, this process's local folder.
   */
  runsRoot?: string;
}

/**
 * Starts, resumes and replays runs, on either engine: a runs folder's SQLite ledger (given as the
 * Ledger, whose writer the host keeps using as before) or any LedgerEngine (a team's PostgreSQL
 * server: the run holds its lease while it runs). The run's folder (workspace, artifacts) is local.
 */
export class RunHost {
  private readonly engine: LedgerEngine;
  /** The runs folder's ledger, when the engine is one: its synchronous writer, and real agents' runs. */
  private readonly ledger: Ledger | null;
  private readonly runsRoot: string;

  constructor(
    ledgerOrEngine: Ledger | LedgerEngine,
    private readonly opts: HostOptions,
  ) {
    if (ledgerOrEngine instanceof Ledger) {
      this.ledger = ledgerOrEngine;
      this.engine = new SqliteEngine(ledgerOrEngine);
    } else {
      this.engine = ledgerOrEngine;
      this.ledger = ledgerOrEngine instanceof SqliteEngine ? ledgerOrEngine.ledger : null;
    }
    const root = opts.runsRoot ?? this.ledger?.runsRoot;
    if (!root)
      throw new ProofloopError('bad_args', 'a runner on a team ledger needs a local folder for its runs');
    this.runsRoot = root;
  }

  /**
   * The run's one writer: a runs folder's own (at once, so a refusal is thrown where the run is
   * asked for, as before), or the engine's.
   */
  private acquire(
    runId: string,
    opts: { label: string; create: Record<string, unknown> | false; resume?: boolean },
  ): HostWriter | Promise<HostWriter> {
    const create = opts.create === false ? false : { source: 'executed' as const, meta: opts.create };
    if (this.ledger) return this.ledger.writer(runId, { label: opts.label, create, resume: opts.resume });
    return this.engine.writer(runId, { label: opts.label, create });
  }

  private runDir(runId: string): string {
    return path.join(this.runsRoot, runId);
  }

  /** `<run>/workspace`, refused when it or the run folder is a link (fs/confine.ts). */
  private workspaceDir(runId: string): string {
    return confinePath(this.runsRoot, [runId, 'workspace'], 'workspace');
  }

  /** Copies the task's workspace into the run (atomically: a crash leaves no half-copied workspace). */
  private prepareWorkspace(runId: string, loaded: LoadedTask): string {
    // Confined: with <run> or <run>/workspace a link, the removal and copy would happen outside.
    const folder = this.runsRoot;
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
  private async startSession(writer: HostWriter, loaded: LoadedTask, meta: RunMeta): Promise<Session> {
    const ws = this.prepareWorkspace(writer.runId, loaded);
    await writer.append('run_started', this.runStartedPayload(loaded, meta));
    return new Session(writer, this.runDir(writer.runId), ws, loaded);
  }

  /** Starts a run; returns its id at once and a promise of how it ended. */
  start(
    meta: RunMeta,
    recorded?: Action[],
  ): { run_id: string; done: Promise<RunResult>; ready: Promise<void> } {
    if (!isVariant(meta.variant))
      throw new ProofloopError(
        'bad_args',
        `unknown variant "${meta.variant}" (one of ${VARIANTS.join(', ')})`,
      );
    if (!Number.isSafeInteger(meta.seed)) throw new ProofloopError('bad_args', 'seed must be an integer');
    const loaded = loadTask(this.opts.tasksDir, meta.task_id);
    const runId = newRunId(meta.task_id, meta.variant);
    const writer = this.acquire(runId, {
      label: `runner ${meta.mode}`,
      create: { ...meta, tasks_dir: this.opts.tasksDir },
    });
    const done = Promise.resolve(writer).then((w) => this.execute(w, loaded, meta, recorded));
    // On an engine the run is made when its writer is: `ready` says so (or why not), `done` follows.
    const ready = Promise.resolve(writer).then(() => undefined);
    done.catch(() => undefined);
    return { run_id: runId, done, ready };
  }

  private async execute(
    writer: HostWriter,
    loaded: LoadedTask,
    meta: RunMeta,
    recorded?: Action[],
  ): Promise<RunResult> {
    let session: Session | null = null;
    return this.guard(
      writer,
      () => session,
      async () => {
        session = await this.startSession(writer, loaded, meta);
        const agent = recorded
          ? new RecordedAgent(recorded)
          : new ProcessAgent(modelTask(loaded), meta.variant, meta.seed);
        await session.loop(agent, agent.first([], false));
      },
    );
  }

  /** Runs `body` until the run ends; any unexpected error becomes run_failed. Always closes the writer. */
  private async guard(
    writer: HostWriter,
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
          await writer.append('run_failed', {
            reason: err.message,
            error_type: e instanceof ProofloopError ? `host_${e.code}` : 'host_error',
            stack_digest: sha256Hex(err.stack ?? err.message),
          });
        } catch {
          // The writer itself failed (lock lost, disk, server gone): the run stays open for resume.
        }
        ended = { status: 'failed', outcome: 'host_error', passed: false };
      }
    } finally {
      session()?.stopAgent();
      // A team ledger does not read this host's run folders: the run's artifacts go to it.
      if (!this.ledger || this.ledger.runsRoot !== this.runsRoot)
        await shareRunArtifacts(this.engine, this.runDir(writer.runId), writer);
      await writer.close();
    }
    return { run_id: runId, head_seq: (await this.engine.run(runId))?.head_seq ?? 0, ...ended };
  }

  /**
   * Starts a run of a real agent (agents/registry.ts) on a task: its own loop and tools, the
   * host's policy through its hooks, the model through the run's gateway (sim, replay:<run>, upstream).
   */
  startReal(meta: RealRunMeta): { run_id: string; done: Promise<RunResult> } {
    const ledger = this.ledger;
    if (!ledger) {
      throw new ProofloopError(
        'bad_args',
        `a real agent's run is written to a runs folder's ledger (its hooks and transcripts are read there): ` +
          `run it with --folder, then \`proofloop push <run> --to ${this.engine.location}\``,
      );
    }
    const agent = realAgent(meta.agent);
    if (!isVariant(meta.variant))
      throw new ProofloopError(
        'bad_args',
        `unknown variant "${meta.variant}" (one of ${VARIANTS.join(', ')})`,
      );
    const from = meta.model_from;
    if (from !== 'sim' && from !== 'upstream' && !from.startsWith('replay:'))
      throw new ProofloopError(
        'bad_args',
        `--model-from must be sim, upstream or replay:<run> (got "${from}")`,
      );
    for (const [k, v] of Object.entries(meta.budget ?? {}))
      if (!['steps', 'tokens', 'wall_ms'].includes(k) || !Number.isSafeInteger(v) || v <= 0)
        throw new ProofloopError(
          'bad_args',
          `budget.${k} must be steps, tokens or wall_ms, a positive integer`,
        );
    const recorded = from.startsWith('replay:') ? this.recording(from.slice(7)) : null;
    const loaded = loadTask(this.opts.tasksDir, meta.task_id);
    const runId = newRunId(meta.task_id, agent.name);
    const writer = ledger.writer(runId, {
      label: `runner ${meta.mode} ${agent.name}`,
      create: { source: 'executed', meta: { ...meta, tasks_dir: this.opts.tasksDir } },
    });
    const done = (async (): Promise<RunResult> => {
      let end: Omit<RunResult, 'run_id' | 'head_seq'>;
      try {
        const ws = this.prepareWorkspace(runId, loaded);
        const run = new RealRun(writer, ledger, this.runDir(runId), ws, loaded, agent, meta);
        end = await run.run(recorded);
      } catch (e) {
        const err = e as Error;
        try {
          writer.append('run_failed', {
            reason: err.message,
            error_type: e instanceof ProofloopError ? `host_${e.code}` : 'host_error',
            stack_digest: sha256Hex(err.stack ?? err.message),
          });
        } catch {
          // the writer itself failed
        }
        end = { status: 'failed', outcome: 'host_error', passed: false };
      } finally {
        writer.close();
      }
      return { run_id: runId, head_seq: ledger.run(runId)?.head_seq ?? 0, ...end };
    })();
    return { run_id: runId, done };
  }

  private recording(runId: string) {
    const ledger = this.ledger!;
    if (!ledger.run(runId)) throw new ProofloopError('not_found', `no run "${runId}" to replay`);
    return recordedRun(runId, ledger.read(runId));
  }

  /** A real agent's run settings, from its run_started (null for a sim run). */
  async realSettingsOf(runId: string): Promise<RealRunMeta | null> {
    const started = (await this.engine.read(runId, { kinds: ['run_started'], limit: 1 }))[0];
    const p = started?.payload as
      | {
          task_id: string;
          agent?: { name?: string; variant?: string; seed?: number; model?: string; model_from?: string };
          config_dir?: { path?: string };
          budget_override?: RealRunMeta['budget'];
        }
      | undefined;
    const a = p?.agent;
    if (!p || !a?.name || a.name === 'sim') return null;
    return {
      task_id: p.task_id,
      agent: a.name,
      model_from: (a.model_from ?? 'sim') as ModelFrom,
      variant: (a.variant && isVariant(a.variant) ? a.variant : 'careful') as Variant,
      seed: a.seed ?? 1,
      mode: 'live',
      model: a.model,
      // The same --config folder, read again (a replay names its changed files: real-run.ts).
      ...(p.config_dir?.path ? { config_dir: p.config_dir.path } : {}),
      ...(p.budget_override ? { budget: p.budget_override } : {}),
    };
  }

  /**
   * Starts a replay of a run and returns its id at once (the app follows it live): a real agent's
   * with the model frozen to the recorded answers (everything else live: workspace, configuration,
   * policy), the simulated agent's driven by its recorded proposals. `verdict` compares the two
   * once `done` settles.
   */
  async startReplay(runId: string): Promise<{ run_id: string; done: Promise<RunResult> }> {
    const real = await this.realSettingsOf(runId);
    if (real) return this.startReal({ ...real, model_from: `replay:${runId}`, mode: 'replay', of: runId });
    const settings = await this.settingsOf(runId);
    const r = this.start(
      {
        task_id: settings.task_id,
        variant: settings.variant,
        seed: settings.seed,
        mode: 'replay',
        of: runId,
      },
      recordedActions(await this.engine.read(runId)),
    );
    await r.ready;
    return r;
  }

  /**
   * A replay against its source: the first divergence, with its cause for a real agent's run
   * (realDivergence: the replay's own `replay_diverged`, else a different ending), else the first
   * decision or result that differs (firstDivergence).
   */
  async verdict(sourceId: string, replayId: string): Promise<Divergence | null> {
    return replayDivergence(await this.engine.read(sourceId), await this.engine.read(replayId));
  }

  /** The recorded agent settings of a run (its run_started, else the meta it was created with). */
  async settingsOf(runId: string): Promise<RunMeta> {
    const run = await this.engine.run(runId);
    if (!run) throw new ProofloopError('not_found', `no run "${runId}" in ${this.engine.location}`);
    const started = (await this.engine.read(runId, { kinds: ['run_started'], limit: 1 }))[0];
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

  async rerun(runId: string): Promise<{ run_id: string; done: Promise<RunResult> }> {
    const real = await this.realSettingsOf(runId);
    if (real) return this.startReal({ ...real, mode: 'rerun', of: runId });
    const s = await this.settingsOf(runId);
    const r = this.start({ task_id: s.task_id, variant: s.variant, seed: s.seed, mode: 'rerun', of: runId });
    await r.ready;
    return r;
  }

  /**
   * Continues a run whose writer died (or whose model crashed): state is rebuilt from its events,
   * the model is not asked again for recorded steps, run_resumed {from_seq} is appended, an
   * interrupted call is re-run only if it is a read, and the run goes on to its end.
   */
  async resume(runId: string): Promise<{ run_id: string; done: Promise<RunResult> }> {
    // The simulated agent's state is the ledger; a real agent's died with its process.
    const real = await this.realSettingsOf(runId);
    if (real)
      throw new ProofloopError(
        'conflict',
        `run ${runId} is a real agent's run (${real.agent}): resume continues the simulated agent only; rerun it instead`,
      );
    const settings = await this.settingsOf(runId);
    const events = await this.engine.read(runId);
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
    const writer = await this.acquire(runId, { label: 'runner resume', create: false, resume: true });
    let session: Session | null = null;
    const done = this.guard(
      writer,
      () => session,
      async () => {
        if (!r.started) {
          // Died before run_started: nothing was asked of the model yet; start over cleanly.
          session = await this.startSession(writer, loaded, settings);
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
        await writer.append('run_resumed', {
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
          else
            obs = await s.recordResult(c.call_id, c.tool, 'interrupted', interruptedText, 0, {
              rerun: false,
            });
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
   * Replays a run: a new run (mode replay) on a fresh copy of the task (startReplay), awaited, and
   * the first seq of the source run whose decision or tool result differs.
   */
  async replay(runId: string): Promise<ReplayReport> {
    const { run_id, done } = await this.startReplay(runId);
    const result = await done;
    const first_divergence = await this.verdict(runId, run_id);
    return { ok: first_divergence === null, first_divergence, run_id, result };
  }
}
