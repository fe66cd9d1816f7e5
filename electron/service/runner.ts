import { ProofloopError } from '../../shared/result';
import { loadCatalog } from '../runner/catalog';
import type { RunHost, RunResult } from '../runner/host';
import type { ModelFrom } from '../runner/real-run';
import type { ServiceContext } from './context';
import { readArtifact } from '../ledger/artifact-store';
import { confine } from '../fs/confine';
import type { Handler as H } from './handler';
import { requireRunOf } from './ledger';

/** What the inspector shows of one artifact at most; the file itself stays whole. */
const ARTIFACT_VIEW_LIMIT = 1 << 20;

/**
 * Runner handlers: runs execute in the background of this process (the host), with the model and
 * the judge in child processes; every append is pushed as `events.appended` by the ledger.
 */
export function runnerHandlers(ctx: ServiceContext) {
  const jobs = new Map<string, Promise<RunResult>>();
  // The runner (host, agents, policy, gateway) is loaded on the first run: a `serve` that only
  // shows runs never compiles it. On a team ledger the runs' folders (workspace, artifacts) are
  // in this process's local folder.
  const host = async (): Promise<RunHost> => {
    const { RunHost } = await import('../runner/host');
    return new RunHost(ctx.sqlite() ?? ctx.engine(), {
      tasksDir: ctx.tasksDir(),
      ...(ctx.sqlite() ? {} : { runsRoot: ctx.folder() }),
    });
  };
  const track = ({ run_id, done }: { run_id: string; done: Promise<RunResult> }) => {
    jobs.set(run_id, done);
    void done.finally(() => setTimeout(() => jobs.delete(run_id), 60_000).unref());
    return { run_id };
  };

  /** A run exists once this returns, on either engine (a team ledger makes it with its writer). */
  const startSim = async (meta: Parameters<RunHost['start']>[0]) => {
    const s = (await host()).start(meta);
    await s.ready;
    return track(s);
  };

  const tasks: H<'tasks.list'> = () => {
    const dir = ctx.tasksDir();
    const { tasks: loaded, errors } = loadCatalog(dir);
    return {
      dir,
      errors,
      tasks: loaded.map((t) => ({
        id: t.task.id,
        title: t.task.title,
        goal: t.task.goal,
        judge_command: t.task.judge.command,
        tools: t.policy.tools,
        commands: t.policy.commands,
        budget: t.policy.budget,
        policy_digest: t.policy_digest,
        simulated: Boolean(t.task.sim),
      })),
    };
  };
  const start: H<'run.start'> = async ({ task_id, variant, seed, agent, model_from, model, config_dir }) =>
    agent && agent !== 'sim'
      ? track(
          (await host()).startReal({
            task_id,
            agent,
            model_from: (model_from ?? 'sim') as ModelFrom,
            variant: variant ?? 'careful',
            seed: seed ?? 1,
            mode: 'live',
            ...(model ? { model } : {}),
            ...(config_dir ? { config_dir } : {}),
          }),
        )
      : startSim({ task_id, variant: variant ?? 'careful', seed: seed ?? 1, mode: 'live' });
  const rerun: H<'run.rerun'> = async ({ run_id, replay }) => {
    const h = await host();
    return track(await (replay ? h.startReplay(run_id) : h.rerun(run_id)));
  };
  const agents: H<'agents.list'> = async () => {
    const { installedAgents } = await import('../runner/installed');
    return { agents: installedAgents() };
  };
  const resume: H<'run.resume'> = async ({ run_id }) => track(await (await host()).resume(run_id));
  const replay: H<'run.replay'> = async ({ run_id }) => {
    const r = await (await host()).replay(run_id);
    return {
      ok: r.ok,
      first_divergence: r.first_divergence,
      run_id: r.run_id,
      of: run_id,
      outcome: r.result.outcome,
    };
  };
  const wait: H<'run.wait'> = async ({ run_id }) => {
    const job = jobs.get(run_id);
    if (job) return await job;
    const engine = ctx.engine();
    const run = await requireRunOf(engine, run_id);
    const last = run.head_seq ? await engine.event(run_id, run.head_seq) : undefined;
    const p = (last?.payload ?? {}) as { outcome?: string; error_type?: string };
    if (last?.kind === 'run_completed') {
      return {
        run_id,
        status: 'completed' as const,
        outcome: p.outcome ?? null,
        passed: p.outcome === 'passed',
        head_seq: run.head_seq,
      };
    }
    if (last?.kind === 'run_failed') {
      return {
        run_id,
        status: 'failed' as const,
        outcome: p.error_type ?? 'failed',
        passed: false,
        head_seq: run.head_seq,
      };
    }
    return { run_id, status: 'running' as const, outcome: null, passed: false, head_seq: run.head_seq };
  };

  const artifact: H<'artifact.read'> = async ({ run_id, digest }) => {
    const engine = ctx.engine();
    await requireRunOf(engine, run_id);
    const hex = digest.replace(/^sha256:/, '');
    // A team ledger holds what was pushed to it; a run this process executed on it keeps its
    // artifacts in its local folder too (they go to the ledger with a push).
    const text =
      (await engine.artifact(run_id, hex)) ??
      (ctx.sqlite() ? null : readArtifact(confine(ctx.folder(), run_id, 'run folder'), hex));
    if (text === null)
      throw new ProofloopError(
        'not_found',
        `artifact ${hex.slice(0, 16)}… of run ${run_id} is missing or does not match its digest`,
      );
    const truncated = text.length > ARTIFACT_VIEW_LIMIT;
    return {
      digest: hex,
      bytes: Buffer.byteLength(text),
      text: truncated ? text.slice(0, ARTIFACT_VIEW_LIMIT) : text,
      truncated,
    };
  };

  return {
    'artifact.read': artifact,
    'tasks.list': tasks,
    'agents.list': agents,
    'run.start': start,
    'run.rerun': rerun,
    'run.resume': resume,
    'run.replay': replay,
    'run.wait': wait,
  };
}
