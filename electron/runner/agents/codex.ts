/**
 * Codex (`@openai/codex`, pinned 0.169.0), headless:
 *   codex exec --json --color never --skip-git-repo-check --dangerously-bypass-hook-trust
 *     -C <workspace> -m <model> -c model_provider="proofloop" -c model_providers.proofloop.base_url=…
 *     [-p variant] <goal>
 * with a private CODEX_HOME (`<run>/home/.codex`; HOME is `<run>/home` too), stdin closed (else
 * `exec` waits to read more prompt from it). What was learnt running 0.169.0 against a scratch
 * Responses server on 127.0.0.1 (see gateway/responses.ts for the wire):
 *
 * - **Model endpoint.** A model provider in config.toml: `base_url = <gateway>/v1`,
 *   `wire_api = "responses"`, `env_key = "PROOFLOOP_GATEWAY_TOKEN"` (sent as `Authorization:
 *   Bearer`). The model must be one Codex knows (`gpt-5.5`): an unknown name gets fallback metadata
 *   and no apply_patch tool. `request_max_retries = 0` / `stream_max_retries = 0` make a failed
 *   answer end the turn at once (exit 1), and the feature `unbounded_connection_retries` must be
 *   off, else a gateway that went away leaves Codex "Reconnecting… waiting for network" forever.
 * - **Nothing else on the network.** The feature `plugins` makes Codex resolve github.com at start
 *   (its marketplace); with it off, `strace -e connect` shows only the gateway. Also off: apps,
 *   image generation, browser/computer use, subagents (`[agents] enabled = false`), memories, tool
 *   suggestions, web search, analytics, feedback, OpenTelemetry export, the update check, history.
 * - **Approvals and sandbox.** `approval_policy = "never"` (headless: nobody to ask; a command the
 *   sandbox refuses fails back to the model) and `sandbox_mode = "workspace-write"` (bubblewrap +
 *   seccomp: writes inside the workspace and temp only). Both are forced on the command line, so a
 *   variant's config cannot loosen them. With approvals never asked, the `PermissionRequest` hook
 *   never fires; ProofLoop decides in `PreToolUse`, which fires for every tool call.
 * - **Hooks.** Enabled by default in 0.169 (`[features] hooks`), read from `hooks.json` beside
 *   config.toml (and inline `[hooks]` tables, which a variant's config may keep: all matching hooks
 *   run). A non-managed hook runs only once trusted (its hash recorded through the TUI's /hooks);
 *   `--dangerously-bypass-hook-trust` runs them without that for one invocation: ProofLoop wrote
 *   the hook itself, in a home only this run uses. `PreToolUse` stdin:
 *     {session_id, turn_id, transcript_path, cwd, hook_event_name, model, permission_mode,
 *      tool_name, tool_input, tool_use_id}
 *   with `tool_name` `Bash` for exec_command (`tool_input.command` = the command line), `apply_patch`
 *   (`tool_input.command` = the patch text), else the function's name; `tool_use_id` is the
 *   model's `call_id`. Deny: stdout `{"hookSpecificOutput": {"hookEventName": "PreToolUse",
 *   "permissionDecision": "deny", "permissionDecisionReason": …}}`, or exit 2 with the reason on
 *   stderr; the model then gets, as the call's output, `Command blocked by PreToolUse hook:
 *   <reason>. Command: <command>`. Allow: stdout `{}` (0.169 rejects `"allow"` as unsupported and
 *   goes on). `PostToolUse` stdin adds `tool_response` (the output text as the model sees it).
 *   Important: Codex FAILS OPEN on a hook that exits 1, prints no JSON, or outlives its `timeout`
 *   (the call runs). So the hook is `<client> || { …; exit 2; }` (a client that cannot start
 *   blocks too), the client gives up after 30 s and exits 2, and Codex's timeout is 60 s.
 * - **Transcript.** The rollout lands in `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread
 *   id>.jsonl` (the thread id is the first `thread.started` line of `--json` stdout); the hook
 *   input's `transcript_path` names it too.
 * - **Variants.** A folder of the user's: its `config.toml` becomes the profile
 *   `$CODEX_HOME/variant.config.toml` (layered over ProofLoop's with `-p variant`), its AGENTS.md
 *   goes to the workspace.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { structuredPatch } from 'diff';
import { patchSections } from '../../../shared/formats/codex-patch';
import { nodeBinary } from '../children';
import { failedOutput, frameless, responses } from '../gateway/responses';
import type { SimIntent, SimTools } from '../gateway/sim-source';
import type { HookCall, HookProtocol, PolicyProposal, RealAgent } from './types';
import { dict } from '../../../shared/dict.js';
import { isObj } from '../../../shared/json-read.js';

/** Codex's launcher script (it finds the platform's native binary and forwards signals to it). */
export function codexLauncher(): string {
  const own = process.env.PROOFLOOP_CODEX;
  if (own) return own;
  const pkg = createRequire(import.meta.url).resolve('@openai/codex/package.json');
  return path.join(path.dirname(pkg), 'bin', 'codex.js');
}

let versionMemo: string | null = null;

/** Offline, fast: `codex --version` prints `codex-cli 0.169.0`. */
function version(): string {
  if (versionMemo) return versionMemo;
  const out = execFileSync(nodeBinary(), [codexLauncher(), '--version'], {
    encoding: 'utf8',
    timeout: 20_000,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  });
  versionMemo = /(\d+\.\d+\.\d+\S*)/.exec(out)?.[1] ?? out.trim();
  return versionMemo;
}

/** The provider id ProofLoop's config names; its base_url is the run's gateway (set at launch). */
const PROVIDER = 'proofloop';
export const TOKEN_ENV = 'PROOFLOOP_GATEWAY_TOKEN';

/** ProofLoop's config.toml for the private CODEX_HOME (static: the gateway's URL comes with `-c`). */
const CONFIG_TOML = `# Written by ProofLoop for one run (electron/runner/agents/codex.ts). Not the user's config.
model_provider = "${PROVIDER}"
approval_policy = "never"
sandbox_mode = "workspace-write"
check_for_update_on_startup = false
web_search = "disabled"

[model_providers.${PROVIDER}]
name = "ProofLoop gateway"
wire_api = "responses"
env_key = "${TOKEN_ENV}"
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 120000

[features]
unbounded_connection_retries = false
plugins = false
apps = false
image_generation = false
browser_use = false
computer_use = false
memories = false
tool_suggest = false
skill_search = false

[agents]
enabled = false

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"

[history]
persistence = "none"

# The commands the model runs see none of ProofLoop's variables (the hook's URL and token).
[shell_environment_policy]
exclude = ["PROOFLOOP_*"]
`;

/** A TOML basic string (JSON's escapes are TOML's). */
const tomlString = (s: string): string => JSON.stringify(s);

/** A workspace-relative path for the policy, or the path as given (the policy refuses it). */
function rel(workspace: string, file: string): string {
  if (!path.isAbsolute(file)) return file;
  const r = path.relative(workspace, file);
  return r === '' ? '.' : r.startsWith('..') || path.isAbsolute(r) ? file : r.split(path.sep).join('/');
}

const str = (x: unknown): string => (typeof x === 'string' ? x : x === undefined ? '' : JSON.stringify(x));

/**
 * A command line split into words when it is plain (no quoting, expansion, redirection or
 * chaining); null otherwise. Only plain commands are read as reads/lists/searches: anything a
 * shell would interpret is a `run_command`, which the policy allows only by exact command line.
 */
function plainWords(command: string): string[] | null {
  if (/[|&;<>()$`\\"'*?[\]{}~!#\n]/.test(command)) return null;
  const words = command.trim().split(/\s+/);
  return words[0] ? words : null;
}

/** A shell command of the model in the policy's terms. */
function commandProposal(command: string, workspace: string): PolicyProposal {
  const run: PolicyProposal = { tool: 'run_command', args: { command } };
  const w = plainWords(command);
  if (!w) return run;
  const [cmd, ...rest] = w;
  const flags = rest.filter((x) => x.startsWith('-'));
  const operands = rest.filter((x) => !x.startsWith('-'));
  if (cmd === 'cat' && flags.length === 0 && operands.length === 1)
    return { tool: 'read_file', args: { path: rel(workspace, operands[0]!) } };
  if (cmd === 'ls' && flags.every((f) => /^-[aA1F]+$/.test(f)) && operands.length <= 1)
    return { tool: 'list_files', args: { path: rel(workspace, operands[0] ?? '.') } };
  if ((cmd === 'grep' || cmd === 'rg') && flags.every((f) => /^-[rnIi]+$/.test(f)) && operands.length >= 1) {
    const [query, where] = operands;
    if (operands.length <= 2)
      return {
        tool: 'search',
        args: { query: query!, ...(where && where !== '.' ? { path: rel(workspace, where) } : {}) },
      };
  }
  return run;
}

/** An apply_patch call in the policy's terms: one file per call, each decided on its own path. */
function patchProposal(patch: string, workspace: string): PolicyProposal {
  const files = patchSections(patch);
  if (/^\*\*\* Move to: /m.test(patch) || files.length !== 1) {
    return {
      tool: 'apply_patch',
      args: { path: files[0]?.path ?? '(none)', patch },
      decided: {
        allowed: false,
        rule: 'args',
        reason:
          files.length === 0
            ? 'apply_patch: the patch names no file'
            : 'apply_patch: one file per patch (a move or several files cannot be decided path by path)',
      },
    };
  }
  const f = files[0]!;
  const p = rel(workspace, f.path);
  if (f.op === 'add') {
    const content = f.patch
      .split('\n')
      .slice(1)
      .map((l) => l.replace(/^\+/, ''))
      .join('\n');
    return { tool: 'write_file', args: { path: p, content: content + '\n' }, writes: p };
  }
  return { tool: 'apply_patch', args: { path: p, patch: f.patch }, writes: p };
}

/** Codex's goal tools (the successor of update_plan): bookkeeping of the thread, no effect outside. */
const GOAL_TOOLS: ReadonlySet<string> = new Set(['get_goal', 'create_goal', 'update_goal', 'update_plan']);

const hook: HookProtocol = {
  parse(input): HookCall {
    if (!isObj(input)) throw new Error('hook input is not a JSON object');
    const ev = input.hook_event_name;
    if (ev !== 'PreToolUse' && ev !== 'PostToolUse')
      throw new Error(`hook_event_name ${JSON.stringify(ev)} is not a tool hook`);
    if (typeof input.tool_use_id !== 'string' || typeof input.tool_name !== 'string')
      throw new Error('hook input has no tool_use_id / tool_name');
    const call: HookCall = {
      event: ev === 'PreToolUse' ? 'pre' : 'post',
      call_id: input.tool_use_id,
      tool: input.tool_name,
      input: isObj(input.tool_input) ? input.tool_input : {},
      session_id: typeof input.session_id === 'string' ? input.session_id : undefined,
    };
    if (ev === 'PostToolUse') {
      // apply_patch's response is framed like the model sees it (`Exit code`, `Wall time: 0.6
      // seconds`): the wall time is the call's duration, not part of its result.
      const raw = str(input.tool_response);
      call.output = frameless(raw);
      call.is_error = failedOutput(raw);
    }
    return call;
  },

  answer(call, d) {
    // Allow is no decision at all: 0.169 refuses permissionDecision "allow" (and then goes on).
    if (call.event === 'post' || d.allowed) return {};
    return {
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: `ProofLoop policy (${d.rule}): ${d.reason}`,
      },
    };
  },

  toPolicy(call, workspace): PolicyProposal {
    const i = call.input;
    if (call.tool === 'Bash' || call.tool === 'exec_command' || call.tool === 'shell')
      return commandProposal(str(i.command ?? i.cmd), workspace);
    if (call.tool === 'apply_patch') return patchProposal(str(i.command ?? i.input), workspace);
    if (GOAL_TOOLS.has(call.tool))
      return {
        tool: call.tool,
        args: i,
        decided: { allowed: true, rule: 'goals', reason: "a goal update is the thread's own bookkeeping" },
      };
    // write_stdin, view_image, MCP tools…: not tools the task's policy knows (rule tools denies).
    return { tool: call.tool, args: i };
  },
};

/** A Codex patch (`*** Begin Patch`) that turns `before` into `after`, hunks with 2 lines of context. */
export function codexPatch(file: string, before: string, after: string): string {
  const p = structuredPatch(file, file, before, after, '', '', { context: 2 });
  const hunks = p.hunks.map((h) => `@@\n${h.lines.filter((l) => !l.startsWith('\\')).join('\n')}\n`);
  return `*** Begin Patch\n*** Update File: ${file}\n${hunks.join('')}*** End Patch\n`;
}

const shQuote = (s: string): string => (/^[\w./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

const simTools: SimTools = {
  call(intent: SimIntent, workspace: string) {
    switch (intent.kind) {
      case 'read':
        return { name: 'exec_command', input: { cmd: `cat ${shQuote(intent.path)}`, login: false } };
      case 'edit': {
        // The patch is made from the file as it is now, like a model's made from what it read.
        const file = path.join(workspace, intent.path);
        const before = existsSync(file) ? readFileSync(file, 'utf8') : '';
        const after = before.includes(intent.find) ? before.replace(intent.find, intent.replace) : before;
        const patch =
          after !== before
            ? codexPatch(intent.path, before, after)
            : `*** Begin Patch\n*** Update File: ${intent.path}\n@@\n-${intent.find}\n+${intent.replace}\n*** End Patch\n`;
        return { name: 'apply_patch', kind: 'custom', input: { input: patch } };
      }
      case 'write': {
        const lines = intent.content.replace(/\n$/, '').split('\n');
        const patch = `*** Begin Patch\n*** Add File: ${intent.path}\n${lines.map((l) => `+${l}`).join('\n')}\n*** End Patch\n`;
        return { name: 'apply_patch', kind: 'custom', input: { input: patch } };
      }
      case 'run':
        return {
          name: 'exec_command',
          input: {
            cmd: intent.command,
            login: false,
            // exec_command has no kill timeout: past yield_time_ms it answers "Process running
            // with session ID N" and the command goes on; the host records that as the timeout.
            ...(intent.timeout_ms ? { yield_time_ms: intent.timeout_ms } : {}),
          },
        };
      case 'subagent':
        // Subagents are off in ProofLoop's Codex config; the intent becomes the thread's goal
        // (create_goal, the successor of update_plan), and the main conversation goes on.
        return { name: 'create_goal', input: { objective: `${intent.description}: ${intent.prompt}` } };
    }
  },
};

/** Every rollout under `<home>/.codex/sessions`, oldest first. */
function transcripts(home: string): string[] {
  const root = path.join(home, '.codex', 'sessions');
  if (!existsSync(root)) return [];
  const out: string[] = [];
  // YYYY/MM/DD: three levels, walked without recursion.
  let dirs = [root];
  for (let depth = 0; depth < 3; depth++) {
    dirs = dirs.flatMap((d) =>
      readdirSync(d)
        .sort()
        .map((n) => path.join(d, n))
        .filter((p) => statSync(p).isDirectory()),
    );
  }
  for (const d of dirs)
    for (const n of readdirSync(d).sort())
      if (n.startsWith('rollout-') && n.endsWith('.jsonl')) out.push(path.join(d, n));
  return out;
}

export const codex: RealAgent = {
  name: 'codex',
  dialect: responses,
  defaultModel: 'gpt-5.5',
  version,

  prepareHome(ctx) {
    const codexHome = path.join(ctx.home, '.codex');
    mkdirSync(codexHome, { recursive: true });
    mkdirSync(path.join(ctx.home, 'tmp'), { recursive: true });
    const files: Record<string, string> = dict();
    files[path.join(codexHome, 'config.toml')] = CONFIG_TOML;
    // The hook fails closed whatever happens: Codex itself would run the call on a failed hook.
    const command = `${ctx.hookCommand} || { echo 'ProofLoop hook failed: the call is denied' >&2; exit 2; }`;
    const own = { type: 'command', command, timeout: 60 };
    const hooks = {
      hooks: {
        PreToolUse: [{ matcher: '.*', hooks: [own] }],
        PostToolUse: [{ matcher: '.*', hooks: [own] }],
      },
    };
    files[path.join(codexHome, 'hooks.json')] = JSON.stringify(hooks, null, 2) + '\n';
    let settingsFile: string | undefined;
    if (ctx.configDir) {
      const user = path.join(ctx.configDir, 'config.toml');
      if (existsSync(user)) {
        settingsFile = path.join(codexHome, 'variant.config.toml');
        files[settingsFile] = readFileSync(user, 'utf8');
      }
      const agents = path.join(ctx.configDir, 'AGENTS.md');
      if (existsSync(agents)) cpSync(agents, path.join(ctx.workspace, 'AGENTS.md'));
    }
    for (const [f, text] of Object.entries(files)) writeFileSync(f, text, { mode: 0o600 });
    // The instructions the agent reads from its workspace configure it too.
    for (const f of ['AGENTS.md', 'AGENTS.override.md', '.codex/config.toml', '.codex/hooks.json']) {
      const p = path.join(ctx.workspace, f);
      if (existsSync(p)) files[p] = readFileSync(p, 'utf8');
    }
    return { files, ...(settingsFile ? { settingsFile } : {}) };
  },

  launch(ctx) {
    const set = (key: string, value: string) => ['-c', `${key}=${value}`];
    return {
      command: nodeBinary(),
      args: [
        codexLauncher(),
        'exec',
        '--json',
        '--color',
        'never',
        '--skip-git-repo-check',
        '--dangerously-bypass-hook-trust',
        '-C',
        ctx.workspace,
        '-m',
        ctx.model,
        ...(ctx.prepared.settingsFile ? ['-p', 'variant'] : []),
        // Forced over any variant's config: the model goes to the gateway, nothing runs unsandboxed.
        ...set('model_provider', tomlString(PROVIDER)),
        ...set(`model_providers.${PROVIDER}.base_url`, tomlString(`${ctx.gatewayUrl}/v1`)),
        ...set('approval_policy', tomlString('never')),
        ...set('sandbox_mode', tomlString('workspace-write')),
        '--',
        ctx.prompt,
      ],
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: ctx.home,
        CODEX_HOME: path.join(ctx.home, '.codex'),
        TMPDIR: path.join(ctx.home, 'tmp'),
        NO_COLOR: '1',
        [TOKEN_ENV]: ctx.token,
        ...ctx.hookEnv,
      },
    };
  },

  hook,
  transcripts,
  sim: simTools,
};
