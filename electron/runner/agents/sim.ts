/**
 * `sim`, the default agent: ProofLoop's simulated model in its own process (model-process.ts),
 * driven by the host's own loop (session.ts) and tools (tools.ts); or its recording (replay).
 * The real agents (registry.ts) run their own loop and tools instead, refereed through hooks.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { childEntry, childEnv } from '../children';
import type { Action, HostMessage, ModelMessage, ModelTask, Observation, Variant } from '../protocol';

export type AgentReply =
  | { type: 'action'; action: Action }
  /** The model process died or misbehaved. */
  | { type: 'crash'; error_type: 'model_crash' | 'model_error'; reason: string; stderr: string }
  /** A recorded agent has no more recorded actions. */
  | { type: 'exhausted' };

/** Where the host gets its next action from: the model process, or a recording (replay). */
export interface AgentDriver {
  first(history: Observation[], resumed: boolean): Promise<AgentReply>;
  observe(obs: Observation): Promise<AgentReply>;
  close(): void;
}

/** The simulated model in its own process, reached only by IPC messages. */
export class ProcessAgent implements AgentDriver {
  private readonly child: ChildProcess;
  private stderr = '';
  private waiting: ((r: AgentReply) => void) | null = null;
  private dead: AgentReply | null = null;

  constructor(
    private readonly task: ModelTask,
    private readonly variant: Variant,
    private readonly seed: number,
  ) {
    const { command, args } = childEntry('model');
    // A minimal environment: the model process sees no host secret.
    this.child = spawn(command, args, {
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      env: childEnv(),
    });
    this.child.stderr?.on('data', (b: Buffer) => {
      if (this.stderr.length < 65_536) this.stderr += b.toString('utf8');
    });
    this.child.on('message', (m: ModelMessage) => {
      const reply: AgentReply =
        m.type === 'act'
          ? { type: 'action', action: m.action }
          : { type: 'crash', error_type: 'model_error', reason: `model error: ${m.message}`, stderr: '' };
      this.settle(reply);
    });
    this.child.on('exit', (code, signal) => {
      // Give stderr a moment to drain so the stack is complete.
      setTimeout(() => {
        this.dead = {
          type: 'crash',
          error_type: 'model_crash',
          reason: `model process exited (${signal ? `signal ${signal}` : `code ${code}`}) without answering`,
          stderr: this.stderr,
        };
        this.settle(this.dead);
      }, 30);
    });
    this.child.on('error', (e) => {
      this.dead = {
        type: 'crash',
        error_type: 'model_crash',
        reason: `model process: ${e.message}`,
        stderr: '',
      };
      this.settle(this.dead);
    });
  }

  private settle(r: AgentReply): void {
    const w = this.waiting;
    this.waiting = null;
    w?.(r);
  }

  private request(msg: HostMessage): Promise<AgentReply> {
    if (this.dead) return Promise.resolve(this.dead);
    return new Promise((resolve) => {
      this.waiting = resolve;
      try {
        this.child.send(msg);
      } catch (e) {
        this.settle({
          type: 'crash',
          error_type: 'model_crash',
          reason: `cannot reach the model: ${(e as Error).message}`,
          stderr: '',
        });
      }
    });
  }

  first(history: Observation[], resumed: boolean): Promise<AgentReply> {
    return this.request({
      type: 'init',
      task: this.task,
      variant: this.variant,
      seed: this.seed,
      resumed,
      history,
    });
  }

  observe(obs: Observation): Promise<AgentReply> {
    return this.request({ type: 'observe', obs });
  }

  close(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}

/** Replay: the recorded actions of a run, in order, instead of the model. */
export class RecordedAgent implements AgentDriver {
  private i = 0;
  constructor(private readonly actions: readonly Action[]) {}
  private take(): Promise<AgentReply> {
    const a = this.actions[this.i++];
    return Promise.resolve(a ? { type: 'action', action: a } : { type: 'exhausted' });
  }
  first(): Promise<AgentReply> {
    return this.take();
  }
  observe(): Promise<AgentReply> {
    return this.take();
  }
  close(): void {}
}
