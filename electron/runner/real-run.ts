/**
 * One run of a real agent (agents/registry.ts), refereed. The host owns the ledger; the agent owns
 * its loop and tools. What each part appends:
 *   run_started        agent {name, version, variant, seed, model, model_from}, config_digest and the
 *                      digest of each configuring file (paths of the run normalised), policy, budget
 *   gateway            model_responded per exchange (lane, request and answer artifacts, canonical
 *                      digest), model_proposed per tool call of the answer; model_unanswered when a
 *                      source has none (replay divergence, upstream error, budget)
 *   hooks              action_allowed / action_denied (+ tool_invoked) before the agent runs a call,
 *                      tool_returned and file_changed after; hook_failed when a hook could not decide
 *                      (the call is denied: the hook client exits 2)
 *   replay             replay_diverged {cause, …} where the live run first differs from the recording
 *                      agent_rejected: a call the agent refused itself before any hook ran
 *   end                agent_exited, transcript_linked per transcript file, judge_verdict,
 *                      budget_exhausted, run_completed / run_failed
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { canonicalJson } from '../../shared/protocol';
import { redactCredentials } from '../../shared/redact';
import { sha256Hex } from '../crypto';
import type { RunWriter, StoredEvent } from '../ledger';
import type { Ledger } from '../ledger';
import { ingestFile } from '../ingest';
import { fileRun, keyOf } from '../ingest/run-names';
import { HOOK_CLIENT_FILE, HOOK_CLIENT_SOURCE } from './agents/hook-client';
import type { HookCall, RealAgent } from './agents/types';
import { boundedExcerpt, redactText, storeArtifact } from '../ledger/artifact-store';
import { fileChanged, textOf } from './file-changed';
import type { LoadedTask } from './catalog';
import { nodeBinary } from './children';
import type { GatewayExchange, GatewayHost } from './gateway/server';
import type { RecordedRun } from './gateway/replay-source';
import { answerDigest, canonicalDigests, normaliseText } from './gateway/canonical';
import type { DivergenceCause, NormaliseContext, SourceRequest } from './gateway/types';
import { startGateway, type GatewayHandle } from './gateway/thread';
import { upstreamEnv, type SourceSpec } from './gateway/source-spec';
import { runJudge } from './judge';
import { PolicyEngine, type Decision } from './policy';
import type { Variant } from './protocol';
import { confine } from './tools';
import { deadline } from './deadline';
import { storeParts } from './request-parts';
import { commandTree, killAll, killUntilGone, runProcesses } from './proctree';
import {
  changedConfigFiles,
  configDirDigest,
  pruneHome,
  redactJsonLines,
  scrubWorkspace,
  type ConfigDirDigest,
} from './scrub';

export type ModelFrom = 'sim' | 'upstream' | `replay:${string}`;

export interface RealRunMeta {
  task_id: string;
  agent: string;
  model_from: ModelFrom;
  variant: Variant;
  seed: number;
  mode: 'live' | 'rerun' | 'replay';
  of?: string;
  model?: string;
  /** A folder of settings / CLAUDE.md / hooks overriding the defaults (a configuration variant). */
  config_dir?: string;
  /** Limits over the task's budget (tests, a quick try): recorded in run_started, kept by rerun and replay. */
  budget?: Partial<Budget>;
  /** How long the agent may take to exit on its own after its model died mid-run (default 20 s). */
  crash_grace_ms?: number;
}

type Budget = { steps: number; tokens: number; wall_ms: number };

export interface RealRunEnd {
  status: 'completed' | 'failed';
  outcome: string;
  passed: boolean;
}

type Item = { kind: string; payload: Record<string, unknown> };

/** Text with the run's own paths replaced, for comparing tool results across runs. */
const normPaths = (text: string, workspace: string, home: string) =>
  text.split(workspace).join('<workspace>').split(home).join('<home>');

export class RealRun implements GatewayHost {
  private readonly engine: PolicyEngine;
  private readonly token = randomBytes(24).toString('hex');
  private gateway: GatewayHandle | null = null;
  private proposals = 0;
  private tokens = 0;
  private ended: RealRunEnd | null = null;
  /** The run's terminal event, appended last (after the transcripts are linked). */
  private terminal: Item | null = null;
  private kill: (() => void) | null = null;
  private readonly decided = new Set<string>();
  private readonly proposed = new Set<string>();
  /** Allowed calls with no result yet: the policy's timeout of each, and its command line if it runs one. */
  private readonly awaiting = new Map<string, { timeout: number; command: string | null }>();
  private readonly pendingWrites = new Map<string, { path: string; before: string | null }>();
  private readonly t0 = performance.now();
  readonly home: string;
  private recorded: RecordedRun | null = null;
  private version = '';

  constructor(
    readonly writer: RunWriter,
    readonly ledger: Ledger,
    readonly runDir: string,
    readonly workspace: string,
    readonly loaded: LoadedTask,
    readonly agent: RealAgent,
    readonly meta: RealRunMeta,
  ) {
    this.engine = new PolicyEngine(loaded.policy);
    this.home = path.join(runDir, 'home');
  }

  /** The gateway's URL once it listens (run-specific: normalised in digests). */
  private gatewayUrl: string | undefined;

  /** What is run-specific in this run: replaced before any digest runs are compared by (canonical.ts). */
  private get normCtx(): NormaliseContext {
    return {
      workspace: this.workspace,
      home: this.home,
      runDir: this.runDir,
      runId: this.writer.runId,
      token: this.token,
      gateway: this.gatewayUrl,
    };
  }

  private get budget(): Budget {
    return { ...this.loaded.policy.budget, ...this.meta.budget };
  }

  /** Set by the host when it closes the writer: a late hook or request then records nothing. */
  closed = false;

  private append(kind: string, payload: Record<string, unknown>): StoredEvent | null {
    if (this.closed) return null;
    return this.writer.append(kind, payload);
  }

  private batch(items: Item[]): void {
    if (this.closed || items.length === 0) return;
    this.writer.appendBatch(items);
  }

  /** Where the gateway's answers come from, as data: the gateway's thread builds the source. */
  private source(): SourceSpec {
    const from = this.meta.model_from;
    if (from === 'sim') {
      return {
        kind: 'sim',
        options: {
          variant: this.meta.variant,
          seed: this.meta.seed,
          taskId: this.loaded.task.id,
          goal: this.loaded.task.goal,
          judgeCommand: this.loaded.task.judge.command,
          hints: this.loaded.task.sim ?? null,
          workspace: this.workspace,
        },
      };
    }
    if (from === 'upstream') return { kind: 'upstream', env: upstreamEnv(this.agent.dialect) };
    if (!this.recorded) throw new Error('replay source without a recording');
    return {
      kind: 'replay',
      recorded: this.recorded,
      artifacts: path.join(this.ledger.folder, this.recorded.run_id, 'artifacts'),
      version: this.version,
      workspace: this.workspace,
      home: this.home,
      ctx: this.normCtx,
    };
  }

  /** The whole run: returns how it ended; every path out appends its event. */
  async run(recorded: RecordedRun | null): Promise<RealRunEnd> {
    this.recorded = recorded;
    mkdirSync(this.home, { recursive: true, mode: 0o700 });
    const hookFile = path.join(this.home, HOOK_CLIENT_FILE);
    writeFileSync(hookFile, HOOK_CLIENT_SOURCE, { mode: 0o600 });
    const node = nodeBinary();
    // The user's folder as digests (never its content): replay reads the folder again and names
    // a changed file as the cause.
    let configDir: ConfigDirDigest | null = null;
    if (this.meta.config_dir) {
      try {
        configDir = configDirDigest(this.meta.config_dir);
      } catch (e) {
        // A replay whose folder is gone runs without it and says so (compareConfig); a run, not.
        if (!recorded) throw e;
      }
    }
    const prepared = this.agent.prepareHome({
      home: this.home,
      workspace: this.workspace,
      hookCommand: `'${node}' '${hookFile}'`,
      configDir: configDir?.path,
    });
    this.version = this.agent.version();
    const norm = (s: string) => normPaths(s, this.workspace, this.home).split(node).join('<node>');
    const config: Record<string, string> = { [norm(hookFile)]: sha256Hex(HOOK_CLIENT_SOURCE) };
    for (const [f, text] of Object.entries(prepared.files)) config[norm(f)] = sha256Hex(norm(text));
    const model = this.meta.model ?? this.agent.defaultModel;
    const started = this.append('run_started', {
      task_id: this.loaded.task.id,
      title: this.loaded.task.title,
      goal: this.loaded.task.goal,
      agent: {
        name: this.agent.name,
        version: this.version,
        variant: this.meta.variant,
        seed: this.meta.seed,
        model,
        model_from: this.meta.model_from,
      },
      config_digest: sha256Hex(canonicalJson(config)),
      config,
      ...(configDir ? { config_dir: configDir } : {}),
      policy_digest: this.loaded.policy_digest,
      budget: { ...this.budget },
      ...(this.meta.budget ? { budget_override: { ...this.meta.budget } } : {}),
      mode: this.meta.mode,
      paths: { workspace: this.workspace, home: this.home },
      ...(this.meta.of ? { of: this.meta.of } : {}),
    });
    if (recorded) this.compareConfig(recorded.run_id, configDir, started?.seq ?? 1);
    const gateway = startGateway({
      agent: this.agent.name,
      source: this.source(),
      token: this.token,
      host: this,
      prompt: this.loaded.task.goal,
      workspace: this.workspace,
      home: this.home,
    });
    this.gateway = gateway;
    const url = await gateway.listen();
    this.gatewayUrl = url;
    try {
      const launch = this.agent.launch({
        home: this.home,
        workspace: this.workspace,
        prepared,
        gatewayUrl: url,
        token: this.token,
        prompt: this.loaded.task.goal,
        model,
        hookEnv: { PROOFLOOP_HOOK_URL: `${url}/proofloop/hook`, PROOFLOOP_HOOK_TOKEN: this.token },
      });
      const exit = await this.runAgent(launch.command, launch.args, launch.env);
      await this.settle();
      // What the agent left running (a command it moved to the background, a server): killed,
      // and said so, before anything else is read from the run's folder.
      const left = await killUntilGone(() => runProcesses(this.runDir));
      if (left.length > 0)
        this.append('processes_killed', {
          pids: left,
          reason: `left running after ${this.agent.name} exited`,
        });
      await this.linkTranscripts();
      if (this.crashed) {
        const how = exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`;
        this.fail('model_crash', `${this.crashed}; ${this.agent.name} then exited (${how})`, {
          exit_code: exit.code,
          signal: exit.signal,
          killed_by_host: this.crashKilled,
        });
      } else if (!this.ended && exit.code !== 0) {
        this.fail(
          'agent_exit',
          `${this.agent.name} exited (${exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`})`,
          { exit_code: exit.code, signal: exit.signal, stack_digest: sha256Hex(exit.stderr) },
        );
      }
      if (this.ended) {
        this.scrub();
        if (this.terminal) this.batch([this.terminal]);
        return this.ended;
      }
      return await this.judge();
    } finally {
      this.kill?.();
      this.closed = true;
      await gateway.close();
      // A path out that threw: nothing of the agent runs on, and its home goes all the same.
      await killUntilGone(() => runProcesses(this.runDir, this.agentPid));
      if (!this.scrubbed) this.scrub();
    }
  }

  /**
   * A replay of a run that used a `--config` folder reads the folder again (realSettingsOf): when
   * its files differ from the recorded digests (or it is gone, or the source had none), that is the
   * replay's first divergence, cause `config`, with the files named. The replay goes on, to show
   * what the change did.
   */
  private compareConfig(sourceRunId: string, live: ConfigDirDigest | null, seq: number): void {
    const started = this.ledger.read(sourceRunId, { kinds: ['run_started'], limit: 1 })[0];
    const rec = (started?.payload as { config_dir?: ConfigDirDigest } | undefined)?.config_dir ?? null;
    if (!rec && !live) return;
    if (rec && live && rec.digest === live.digest) return;
    const changed = changedConfigFiles(rec?.files ?? {}, live?.files ?? {});
    this.append('replay_diverged', {
      cause: 'config',
      source_seq: started?.seq ?? null,
      at_seq: seq,
      reason: !live
        ? `the recorded run used --config ${rec!.path}; this replay has none`
        : !rec
          ? `this replay uses --config ${live.path}; the recorded run had none`
          : `the --config folder changed: ${changed.join(', ')}`,
      changed,
      expected: rec?.digest ?? null,
      actual: live?.digest ?? null,
    });
  }

  private agentPid: number | null = null;

  private runAgent(
    command: string,
    args: string[],
    env: Record<string, string>,
  ): Promise<{ code: number | null; signal: string | null; stderr: string }> {
    return new Promise((resolve) => {
      const child = spawn(command, args, {
        cwd: this.workspace,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
      this.agentPid = child.pid ?? null;
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (b: Buffer) => {
        if (stdout.length < 8 << 20) stdout += b.toString('utf8');
      });
      child.stderr.on('data', (b: Buffer) => {
        if (stderr.length < 65_536) stderr += b.toString('utf8');
      });
      this.kill = () => {
        if (!child.pid || child.exitCode !== null || child.signalCode !== null) return;
        // The agent's tree, not only its group: its commands run in sessions of their own.
        const tree = runProcesses(this.runDir, child.pid);
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // gone already
        }
        killAll(tree);
      };
      const timer = deadline(this.t0, this.budget.wall_ms, (used) =>
        this.exhaust('wall_ms', this.budget.wall_ms, used),
      );
      child.on('error', (e) => {
        timer.cancel();
        resolve({ code: -1, signal: null, stderr: `${e.message}\n${stderr}` });
      });
      child.on('close', (code, signal) => {
        timer.cancel();
        // Its pid may be given to another process now: never look for a tree under it again.
        this.agentPid = null;
        if (this.crashTimer) clearTimeout(this.crashTimer);
        const out = storeArtifact(this.runDir, stdout);
        this.append('agent_exited', {
          code,
          signal,
          duration_ms: Math.round(performance.now() - this.t0),
          stdout: { digest: out.digest, bytes: out.bytes, redacted: out.redacted },
          stderr_excerpt: boundedExcerpt(redactText(stderr).text, 2048),
        });
        resolve({ code, signal, stderr });
      });
    });
  }

  /**
   * Lets answers being recorded finish before the run's last events: every exchange the gateway
   * answered is recorded when this resolves (thread.ts); it rejects when one could not be recorded
   * and that could not be an event either (the run's host then records run_failed).
   */
  private async settle(): Promise<void> {
    await this.gateway?.settle();
  }

  private exhaust(budget: 'steps' | 'tokens' | 'wall_ms', limit: number, used: number): void {
    if (this.ended) return;
    this.append('budget_exhausted', { budget, limit, used, agent: 'killed' });
    this.terminal = { kind: 'run_completed', payload: { outcome: 'budget_exhausted', budget } };
    this.ended = { status: 'completed', outcome: 'budget_exhausted', passed: false };
    this.kill?.();
  }

  private fail(error_type: string, reason: string, extra: Record<string, unknown> = {}): void {
    if (this.ended) return;
    this.terminal = { kind: 'run_failed', payload: { reason, error_type, ...extra } };
    this.ended = { status: 'failed', outcome: error_type, passed: false };
    this.kill?.();
  }

  /** Why the model died mid-run (the crashy variant, an upstream that broke off), when it did. */
  private crashed: string | null = null;
  private crashTimer: NodeJS.Timeout | null = null;
  private crashKilled = false;

  /**
   * The model died: the agent got an error for its request and is left to end on its own, as it
   * would with a real API that went away (both CLIs run with retries off); if it does not exit
   * within the grace, the host kills it.
   */
  private modelCrashed(reason: string): void {
    if (this.crashed || this.ended) return;
    this.crashed = reason;
    this.crashTimer = setTimeout(() => {
      this.crashKilled = true;
      this.kill?.();
    }, this.meta.crash_grace_ms ?? 20_000);
  }

  private scrubbed = false;

  /**
   * The run's folder made safe to keep (scrub.ts): the workspace's credentials redacted in place,
   * the agent's home removed but for its transcripts (redacted before import). Appended as
   * `files_redacted` while the run is open; afterwards (a path out that threw) done without one.
   */
  private scrub(): void {
    if (this.scrubbed) return;
    this.scrubbed = true;
    const keep = this.agent.transcripts(this.home);
    for (const f of keep) redactJsonLines(f);
    const removed = pruneHome(this.home, keep);
    const ws = scrubWorkspace(this.workspace);
    this.append('files_redacted', {
      workspace: ws.files,
      ...(ws.skipped.length ? { skipped: ws.skipped } : {}),
      home: { removed, kept: keep.map((f) => path.relative(this.runDir, f).split(path.sep).join('/')) },
    });
  }

  /** Imports the agent's transcripts with their adapter (ingest) and links each imported run. */
  private async linkTranscripts(): Promise<void> {
    for (const file of this.agent.transcripts(this.home)) {
      const key = keyOf(this.ledger.folder, file);
      let events = 0;
      let error: string | null = null;
      let redacted = 0;
      try {
        // Redacted in place first: the imported run's source is the file as it stays on disk.
        redacted = redactJsonLines(file);
        events = (await ingestFile(this.ledger, file)).events;
      } catch (e) {
        error = (e as Error).message;
      }
      const sub = /agent-([0-9a-z]+)\.jsonl$/.exec(file)?.[1] ?? null;
      this.append('transcript_linked', {
        run_id: fileRun(key),
        file: key,
        subagent: sub,
        events,
        redacted,
        ...(error ? { error } : {}),
      });
    }
  }

  private async judge(): Promise<RealRunEnd> {
    const j = this.loaded.task.judge;
    try {
      const v = await runJudge(this.workspace, j.command, j.timeout_ms);
      const art = storeArtifact(this.runDir, v.output);
      const outcome = v.passed ? 'passed' : 'failed';
      this.scrub();
      this.batch([
        {
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
        },
        { kind: 'run_completed', payload: { outcome, judge_runs: 1 } },
      ]);
      return (this.ended = { status: 'completed', outcome, passed: v.passed });
    } catch (e) {
      const stderr = (e as { stderr?: string }).stderr ?? (e as Error).stack ?? '';
      this.scrub();
      this.append('run_failed', {
        reason: (e as Error).message,
        error_type: 'judge_error',
        stack_digest: sha256Hex(stderr),
      });
      return (this.ended = { status: 'failed', outcome: 'judge_error', passed: false });
    }
  }

  // ---- GatewayHost ----

  admit(): string | null {
    if (this.ended) return `the run has ended (${this.ended.outcome})`;
    if (this.crashed) return `model_crash: the model died earlier in this run (${this.crashed})`;
    return null;
  }

  record(ex: GatewayExchange): void {
    const { req, answer } = ex;
    const request = this.storeRequest(req);
    const resp = storeArtifact(this.runDir, ex.responseBody);
    // The budget counts generated tokens: a real agent resends a ~20k-token prompt every turn.
    this.tokens += answer.usage.output_tokens;
    const items: Item[] = [];
    // A result of a call no hook decided: the agent refused it itself (its own checks run before
    // the hooks), or the hook failed before it could ask (the call is denied: the client exits 2).
    for (const r of req.parsed.results) {
      // A call the agent answered while it still runs (Codex's exec_command past its yield time):
      // the host never gets its result; the command goes on in the agent's session, not killed.
      const waiting = this.awaiting.get(r.call_id);
      if (r.running && waiting !== undefined) {
        this.awaiting.delete(r.call_id);
        items.push({
          kind: 'tool_timed_out',
          payload: {
            call_id: r.call_id,
            timeout_ms: waiting.timeout,
            ...this.killCommand(waiting.command),
            reason: 'still running when the agent went on without its result',
          },
        });
      }
      if (!this.proposed.has(r.call_id) || this.decided.has(r.call_id)) continue;
      this.decided.add(r.call_id);
      const excerpt = boundedExcerpt(redactText(r.output).text, 512);
      if (/proofloop hook|hook error/i.test(r.output)) {
        items.push(
          {
            kind: 'hook_failed',
            payload: { call_id: r.call_id, reason: 'no decision reached the host', result_excerpt: excerpt },
          },
          {
            kind: 'action_denied',
            payload: { call_id: r.call_id, rule: 'hook', reason: 'the hook failed; a failing hook denies' },
          },
        );
      } else {
        items.push({
          kind: 'agent_rejected',
          payload: { call_id: r.call_id, is_error: r.is_error, excerpt },
        });
      }
    }
    items.push({
      kind: 'model_responded',
      payload: {
        lane: req.parsed.lane,
        index: req.index,
        turn: req.parsed.turn,
        source: ex.source,
        model: answer.model || req.parsed.model,
        agent_version: req.parsed.agentVersion,
        request,
        answer: {
          digest: resp.digest,
          bytes: resp.bytes,
          status: ex.status,
          canonical: answerDigest(answer, this.normCtx),
        },
        content: boundedExcerpt(redactText(answer.text).text, 2048),
        stop_reason: answer.stop,
        calls: answer.calls.map((c) => c.id),
        tokens: answer.usage.output_tokens,
        usage: answer.usage,
      },
    });
    for (const c of answer.calls) {
      this.proposed.add(c.id);
      this.proposals += 1;
      items.push({
        kind: 'model_proposed',
        payload: { call_id: c.id, tool: c.name, args: c.input, tokens: 0, lane: req.parsed.lane },
      });
    }
    this.batch(items);
    if (this.proposals > this.budget.steps) this.exhaust('steps', this.budget.steps, this.proposals);
    else if (this.tokens > this.budget.tokens) this.exhaust('tokens', this.budget.tokens, this.tokens);
  }

  noAnswer(
    req: SourceRequest,
    reason: string,
    cause?: DivergenceCause,
    detail?: Record<string, unknown>,
  ): void {
    // The unanswered request is kept like an answered one: the diff shows what the agent asked.
    const payload = {
      lane: req.parsed.lane,
      index: req.index,
      turn: req.parsed.turn,
      reason,
      request: this.storeRequest(req),
      ...(cause ? { cause } : {}),
      ...(detail ?? {}),
    };
    this.append(cause ? 'replay_diverged' : 'model_unanswered', payload);
    if (cause) this.fail('replay_diverged', `replay diverged (${cause}): ${reason}`);
    else if (reason.startsWith('model_crash')) this.modelCrashed(reason);
    else this.fail('model_unanswered', reason);
  }

  /**
   * Kills the processes running a command that outlived its timeout (the topmost process whose
   * command line holds it, in the agent's tree, with all its descendants): what tool_timed_out says.
   */
  private killCommand(command: string | null): {
    killed: 'process_tree' | 'not_found' | 'no';
    pids?: number[];
  } {
    if (!command || !this.agentPid) return { killed: 'no' };
    // Not found: ended meanwhile, or its command line is not the text the model gave (quoting);
    // then the wall-time budget and the sweep when the agent exits are what stop it.
    const tree = commandTree(this.agentPid, command);
    if (tree.length === 0) return { killed: 'not_found' };
    return { killed: 'process_tree', pids: killAll(tree) };
  }

  private storeRequest(req: SourceRequest): {
    digest: string;
    bytes: number;
    canonical: string;
    parts: string;
  } {
    const redactedBody = redactCredentials(req.body).value as Record<string, unknown>;
    const request = storeParts(this.runDir, redactedBody);
    const canon = canonicalDigests(this.agent.dialect.canonical(redactedBody, this.normCtx));
    const parts = storeArtifact(this.runDir, JSON.stringify(canon), { redacted: true });
    return { digest: request.digest, bytes: req.rawBody.length, canonical: canon.all, parts: parts.digest };
  }

  /** An exchange the agent has had could not be recorded: an event, and the run fails. */
  recordingFailed(req: SourceRequest | null, error: Error): void {
    this.append('recording_failed', {
      ...(req ? { lane: req.parsed.lane, index: req.index, turn: req.parsed.turn } : {}),
      reason: boundedExcerpt(redactText(error.message).text, 1024),
    });
    this.fail('recording_failed', `an exchange with the model could not be recorded: ${error.message}`);
  }

  badRequest(status: number, message: string): void {
    this.append('gateway_refused', { status, reason: message });
  }

  async hook(body: unknown): Promise<unknown> {
    let call: HookCall;
    try {
      call = this.agent.hook.parse(body);
    } catch (e) {
      this.append('hook_failed', { reason: `hook input: ${(e as Error).message}` });
      return { block: `ProofLoop could not read the hook input: ${(e as Error).message}` };
    }
    try {
      return call.event === 'pre' ? this.pre(call) : this.post(call);
    } catch (e) {
      this.decided.add(call.call_id);
      this.batch([
        { kind: 'hook_failed', payload: { call_id: call.call_id, reason: (e as Error).message } },
        {
          kind: 'action_denied',
          payload: {
            call_id: call.call_id,
            rule: 'hook',
            reason: `the hook failed: ${(e as Error).message}`,
          },
        },
      ]);
      return { block: `ProofLoop's hook failed (the call is denied): ${(e as Error).message}` };
    }
  }

  private pre(call: HookCall): unknown {
    if (this.ended)
      return this.agent.hook.answer(call, { allowed: false, rule: 'run', reason: 'the run has ended' });
    const p = this.agent.hook.toPolicy(call, this.workspace);
    let d: Decision = p.decided ?? this.engine.decide({ tool: p.tool, args: p.args });
    if (d.allowed && !p.decided) d = confine(this.workspace, p.tool, p.args) ?? d;
    this.decided.add(call.call_id);
    const who = call.agent_id ? { agent_id: call.agent_id } : {};
    const items: Item[] = [
      {
        kind: d.allowed ? 'action_allowed' : 'action_denied',
        payload: { call_id: call.call_id, tool: call.tool, rule: d.rule, reason: d.reason, ...who },
      },
    ];
    if (d.allowed)
      items.push({
        kind: 'tool_invoked',
        payload: { call_id: call.call_id, tool: call.tool, args: call.input, ...who },
      });
    const div = this.recorded?.decisions.get(call.call_id);
    if (div && div.allowed !== d.allowed) {
      items.push({
        kind: 'replay_diverged',
        payload: {
          cause: 'decision',
          call_id: call.call_id,
          source_seq: div.seq,
          expected: { allowed: div.allowed, rule: div.rule },
          actual: { allowed: d.allowed, rule: d.rule },
        },
      });
    }
    this.batch(items);
    if (d.allowed)
      this.awaiting.set(call.call_id, {
        timeout: this.engine.timeoutOf(p.tool),
        command: p.tool === 'run_command' ? String(p.args.command ?? '') || null : null,
      });
    if (d.allowed && p.writes) {
      this.pendingWrites.set(call.call_id, { path: p.writes, before: textOf(this.workspace, p.writes) });
    }
    return this.agent.hook.answer(call, d);
  }

  private post(call: HookCall): unknown {
    const waiting = this.awaiting.get(call.call_id);
    this.awaiting.delete(call.call_id);
    const output = call.output ?? '';
    if (call.running) {
      // Past its timeout the agent kept the command running (Claude Code moves it to the
      // background and waits for it before it exits): the policy's timeout kills it.
      const art = storeArtifact(this.runDir, output);
      this.batch([
        {
          kind: 'tool_timed_out',
          payload: {
            call_id: call.call_id,
            timeout_ms: waiting?.timeout ?? this.engine.timeoutOf('run_command'),
            ...this.killCommand(waiting?.command ?? null),
            reason: 'still running when the agent gave back its output so far',
            excerpt: boundedExcerpt(art.text, this.loaded.policy.limits.excerpt_bytes),
            artifact: { digest: art.digest, redacted: art.redacted },
            ...(call.agent_id ? { agent_id: call.agent_id } : {}),
          },
        },
      ]);
      return this.agent.hook.answer(call, { allowed: true, rule: 'post', reason: 'recorded' });
    }
    const art = storeArtifact(this.runDir, output);
    const norm = sha256Hex(normaliseText(art.text, this.normCtx));
    const items: Item[] = [
      {
        kind: 'tool_returned',
        payload: {
          call_id: call.call_id,
          status: call.is_error ? 'error' : 'ok',
          duration_ms: call.duration_ms ?? 0,
          excerpt: boundedExcerpt(art.text, this.loaded.policy.limits.excerpt_bytes),
          digest: art.digest,
          result_digest: norm,
          bytes: art.bytes,
          artifact: { digest: art.digest, redacted: art.redacted },
          ...(call.agent_id ? { agent_id: call.agent_id } : {}),
        },
      },
    ];
    const w = this.pendingWrites.get(call.call_id);
    if (w) {
      this.pendingWrites.delete(call.call_id);
      const changed = fileChanged(call.call_id, w.path, w.before, textOf(this.workspace, w.path));
      if (changed) items.push(changed);
    }
    const rec = this.recorded?.results.get(call.call_id);
    if (rec && rec.digest !== norm) {
      items.push({
        kind: 'replay_diverged',
        payload: {
          cause: 'environment',
          call_id: call.call_id,
          tool: call.tool,
          source_seq: rec.seq,
          expected: rec.digest,
          actual: norm,
        },
      });
    }
    this.batch(items);
    return this.agent.hook.answer(call, { allowed: true, rule: 'post', reason: 'recorded' });
  }
}
