import { sha256Hex } from '../crypto';
import type { NewEvent } from '../../shared/protocol';
import type { StoredEvent } from '../ledger';
import type { AgentDriver, AgentReply } from './agents/sim';
import { boundedExcerpt, storeArtifact } from '../ledger/artifact-store';
import type { LoadedTask } from './catalog';
import type { RunResult } from './host';
import { runJudge } from './judge';
import type { Verdict } from './judge-process';
import { PolicyEngine, type Decision } from './policy';
import type { Action, Observation } from './protocol';
import { deniedText, timeoutText, type Reconstructed } from './reconstruct';
import { confine, executeTool } from './tools';
import { fileChanged } from './file-changed';

/** A failed judge verdict is shown to the model this many times before the run ends as failed. */
const MAX_JUDGE_RUNS = 3;

/**
 * The run's one writer as the host uses it, on either engine: a runs folder's RunWriter (whose
 * appends return at once, committed) or a team ledger's EngineWriter (whose appends resolve once
 * committed). The host awaits every append before it acts on it (runs a tool, asks the model), so
 * a decision is durable before what it allows happens, on both.
 */
export interface HostWriter {
  readonly runId: string;
  append(kind: string, payload: Record<string, unknown>): StoredEvent | Promise<StoredEvent>;
  appendBatch(items: readonly NewEvent[]): StoredEvent[] | Promise<StoredEvent[]>;
  close(): void | Promise<void>;
}

export class RunEnded extends Error {
  constructor(readonly result: Omit<RunResult, 'run_id' | 'head_seq'>) {
    super('run ended');
  }
}

/** One run being executed: the host's loop over the agent's actions. Only the host appends. */
export class Session {
  private proposals = 0;
  private tokens = 0;
  private judgeRuns = 0;
  private readonly segmentStart = performance.now();
  readonly history: Observation[] = [];
  readonly engine: PolicyEngine;
  private agent: AgentDriver | null = null;

  constructor(
    readonly writer: HostWriter,
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

  private async append(kind: string, payload: Record<string, unknown>): Promise<StoredEvent> {
    return this.writer.append(kind, payload);
  }

  private async exhausted(
    budget: 'steps' | 'tokens' | 'wall_ms',
    limit: number,
    used: number,
    first: { kind: string; payload: Record<string, unknown> }[] = [],
  ): Promise<never> {
    await this.writer.appendBatch([
      ...first,
      { kind: 'budget_exhausted', payload: { budget, limit, used } },
      { kind: 'run_completed', payload: { outcome: 'budget_exhausted', budget } },
    ]);
    throw new RunEnded({ status: 'completed', outcome: 'budget_exhausted', passed: false });
  }

  /** Waits for the agent, but never beyond the wall-time budget. */
  private async ask(p: Promise<AgentReply>): Promise<AgentReply> {
    const left = this.budget.wall_ms - this.wallUsed();
    if (left <= 0) return this.exhausted('wall_ms', this.budget.wall_ms, this.wallUsed());
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'wall'>((resolve) => (timer = setTimeout(() => resolve('wall'), left)));
    const r = await Promise.race([p, deadline]);
    clearTimeout(timer);
    if (r === 'wall') return this.exhausted('wall_ms', this.budget.wall_ms, this.wallUsed());
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
      return this.exhausted('steps', this.budget.steps, this.proposals - 1, [proposed]);
    if (this.tokens > this.budget.tokens)
      return this.exhausted('tokens', this.budget.tokens, this.tokens, [proposed]);
    if (this.wallUsed() > this.budget.wall_ms)
      return this.exhausted('wall_ms', this.budget.wall_ms, this.wallUsed(), [proposed]);
    let d: Decision = this.engine.decide({ tool: action.tool, args: action.args });
    if (d.allowed) d = confine(this.workspace, action.tool, action.args) ?? d;
    await this.writer.appendBatch([
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
    await this.append('tool_invoked', { call_id, tool, args });
    const t0 = performance.now();
    const r = await executeTool(this.workspace, this.engine, tool, args);
    const duration_ms = Math.round(performance.now() - t0);
    if (r.status === 'timeout') {
      const ms = r.timeout_ms ?? this.engine.timeoutOf(tool);
      await this.append('tool_timed_out', {
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

  async recordResult(
    call_id: string,
    tool: string,
    status: 'ok' | 'error' | 'interrupted',
    output: string,
    duration_ms: number,
    extra: Record<string, unknown>,
    change?: Awaited<ReturnType<typeof executeTool>>['change'],
    exit_code?: number | null,
  ): Promise<Observation> {
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
    const changed = change && fileChanged(call_id, change.path, change.before, change.after);
    if (changed) items.push(changed);
    await this.writer.appendBatch(items);
    return { kind: 'tool', call_id, tool, status, output: art.text };
  }

  /** A final answer: recorded, judged; the verdict ends the run or goes back to the model. */
  async final(action: Extract<Action, { kind: 'final' }>, alreadyResponded = false): Promise<Observation> {
    if (!alreadyResponded) {
      this.tokens += action.tokens;
      await this.append('model_responded', {
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
      await this.append('run_failed', {
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
      await this.writer.appendBatch([
        verdict,
        { kind: 'run_completed', payload: { outcome, judge_runs: this.judgeRuns } },
      ]);
      throw new RunEnded({ status: 'completed', outcome, passed: v.passed });
    }
    await this.writer.append(verdict.kind, verdict.payload);
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
        await this.append('run_failed', {
          reason: reply.reason,
          error_type: reply.error_type,
          stack_digest: sha256Hex(reply.stderr),
          at_step: this.proposals,
        });
        throw new RunEnded({ status: 'failed', outcome: reply.error_type, passed: false });
      }
      if (reply.type === 'exhausted') {
        await this.append('run_completed', {
          outcome: 'incomplete',
          reason: 'the recording has no more actions',
        });
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
