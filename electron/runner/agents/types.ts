/**
 * A real coding agent the runner can referee (Claude Code, Codex): one file per agent under
 * `electron/runner/agents/`, one line in `registry.ts`. The host (real-run.ts) does the rest the
 * same way for every agent: the run's workspace, the task's policy, the model gateway, the judge.
 *
 * What a run does with an agent, in order:
 *   1. `version()`: the CLI's own version (recorded in run_started; a change is a divergence cause).
 *   2. `prepareHome(ctx)`: writes the agent's private home under the run folder (settings, hooks,
 *      instructions, MCP config) and returns every file that configures the agent; their digest is
 *      the run's `config_digest`. The hooks must call `ctx.hookCommand` (ProofLoop's hook client):
 *      it reads the agent's hook JSON on stdin, asks the host, and prints the host's answer. The
 *      agent's own files (CLAUDE.md / AGENTS.md) come from the workspace; a variant folder of the
 *      user's (`ctx.configDir`) is copied over the defaults.
 *   3. `launch(ctx)`: the headless command line and the WHOLE environment of the child (nothing of
 *      the host's environment leaks but PATH): the gateway URL and the per-run token in the agent's
 *      API-key slot, telemetry, auto-update and nonessential traffic off (the machine may be offline).
 *   4. The host speaks the hook protocol through `hook` (parse the agent's hook input, render the
 *      decision the agent understands), and after the agent exits imports `transcripts(home)`.
 *   5. `sim`: how the simulated model's intents are expressed as this agent's own tools.
 */
import type { Decision } from '../policy';
import type { Dialect } from '../gateway/types';
import type { SimIntent, SimTools } from '../gateway/sim-source';

export type RealAgentName = 'claude-code' | 'codex';

export interface HomeContext {
  /** `<run>/home`: the agent's private HOME (created empty). */
  home: string;
  /** The run's workspace (the agent's cwd). */
  workspace: string;
  /** The shell command line of ProofLoop's hook client; the agent runs it for each hook event. */
  hookCommand: string;
  /** Optional folder of the user's with settings / instructions / hooks overriding the defaults. */
  configDir?: string;
}

export interface PreparedHome {
  /** Files that configure the agent, absolute path → content (digested into run_started). */
  files: Record<string, string>;
  /** Values for `launch` (e.g. the settings file the CLI is told to read). */
  settingsFile?: string;
}

export interface LaunchContext {
  home: string;
  workspace: string;
  prepared: PreparedHome;
  /** `http://127.0.0.1:<port>` of the run's gateway (no path). */
  gatewayUrl: string;
  /** The per-run token: the only key the gateway accepts, put in the agent's API-key slot. */
  token: string;
  /** The prompt: the task's goal. */
  prompt: string;
  /** Model name the agent is told to use. */
  model: string;
  /** Environment to add for the hook client (host URL and token). */
  hookEnv: Record<string, string>;
}

export interface Launch {
  command: string;
  args: string[];
  /** The complete environment of the agent process. */
  env: Record<string, string>;
}

/** One tool call, as the agent's hook reports it before running it. */
export interface HookCall {
  event: 'pre' | 'post';
  /** The model's id of the call (tool_use id / call_id): the key of every event about it. */
  call_id: string;
  tool: string;
  input: Record<string, unknown>;
  /** Post only: the tool's result as text, and whether the agent reports an error. */
  output?: string;
  is_error?: boolean;
  /** Post only: how long the tool ran, as the agent measured it. */
  duration_ms?: number;
  /** Post only: the command outlived its timeout and the agent left it running (Claude Code's Bash). */
  running?: boolean;
  /** The agent's session, and the subagent when the call is a subagent's. */
  session_id?: string;
  agent_id?: string;
}

/** A tool call of the agent mapped to the host's policy vocabulary (policy.ts). */
export interface PolicyProposal {
  tool: string;
  args: Record<string, unknown>;
  /** A host rule decided already (e.g. spawning a subagent, whose calls pass the hook too). */
  decided?: Decision;
  /** The workspace-relative file the call writes, if any (file_changed is computed from it). */
  writes?: string;
}

export interface HookProtocol {
  /** The agent's hook JSON (stdin) → the call; throws with a clear message when it is not one. */
  parse(input: unknown): HookCall;
  /** The decision as the agent's hook output (stdout JSON). */
  answer(call: HookCall, decision: Decision): unknown;
  /** The agent's tool call in the policy's terms. */
  toPolicy(call: HookCall, workspace: string): PolicyProposal;
}

export interface RealAgent {
  name: RealAgentName;
  /** Which gateway dialect the agent speaks. */
  dialect: Dialect;
  /** Default model name when the user names none. */
  defaultModel: string;
  version(): string;
  prepareHome(ctx: HomeContext): PreparedHome;
  launch(ctx: LaunchContext): Launch;
  hook: HookProtocol;
  /** Transcript files the agent wrote under its home (main session first, then subagents). */
  transcripts(home: string): string[];
  /** The simulated model's intents as this agent's tool calls. */
  sim: SimTools;
}

export type { SimIntent };
