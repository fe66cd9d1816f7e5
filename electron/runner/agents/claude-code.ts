/**
 * Claude Code (`@anthropic-ai/claude-code`, pinned 2.1.328), headless:
 *   claude -p <goal> --output-format stream-json --verbose --settings <home>/.claude/settings.json --model <m>
 * in the run's workspace, with a private HOME and CLAUDE_CONFIG_DIR (`<run>/home`, `<run>/home/.claude`),
 * ANTHROPIC_BASE_URL = the run's gateway and ANTHROPIC_API_KEY = the per-run token (never the
 * user's key: in upstream mode the gateway swaps it), auto-update, telemetry, error reporting and
 * nonessential traffic off. Hooks (settings.json): PreToolUse, PostToolUse and PostToolUseFailure
 * for every tool run ProofLoop's hook client; PreToolUse answers `permissionDecision` allow / deny.
 * The transcript lands in `<home>/.claude/projects/<cwd with / as ->/<session>.jsonl`, subagents in
 * `<session>/subagents/agent-<id>.jsonl`.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { createTwoFilesPatch } from 'diff';
import { anthropic } from '../gateway/anthropic';
import type { SimIntent, SimTools } from '../gateway/sim-source';
import type { HookCall, HookProtocol, PolicyProposal, RealAgent } from './types';
import { isObj, type Obj } from '../../../shared/json-read.js';
import { dict } from '../../../shared/dict.js';

/** The CLI binary: PROOFLOOP_CLAUDE, else the pinned package's native binary. */
export function claudeBinary(): string {
  const own = process.env.PROOFLOOP_CLAUDE;
  if (own) return own;
  const pkg = createRequire(import.meta.url).resolve('@anthropic-ai/claude-code/package.json');
  return path.join(path.dirname(pkg), 'bin', 'claude.exe');
}

let versionMemo: string | null = null;

/** Offline, fast: `claude --version` prints `2.1.328 (Claude Code)`. */
function version(): string {
  if (versionMemo) return versionMemo;
  const out = execFileSync(claudeBinary(), ['--version'], {
    encoding: 'utf8',
    timeout: 20_000,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', DISABLE_AUTOUPDATER: '1', DISABLE_TELEMETRY: '1' },
  });
  versionMemo = /^\s*(\S+)/.exec(out)?.[1] ?? out.trim();
  return versionMemo;
}

/** A workspace-relative path for the policy, or the path as given (the policy refuses it). */
function rel(workspace: string, file: unknown): string {
  const f = typeof file === 'string' ? file : '';
  if (!path.isAbsolute(f)) return f;
  const r = path.relative(workspace, f);
  return r === '' ? '.' : r.startsWith('..') || path.isAbsolute(r) ? f : r.split(path.sep).join('/');
}

const str = (x: unknown): string => (typeof x === 'string' ? x : x === undefined ? '' : JSON.stringify(x));

/** A tool's result as text: Bash's stdout/stderr, Read's file content, else its JSON. */
function responseText(r: unknown): string {
  if (typeof r === 'string') return r;
  if (!isObj(r)) return JSON.stringify(r ?? null);
  if (typeof r.stdout === 'string' || typeof r.stderr === 'string')
    return [str(r.stdout), str(r.stderr)].filter(Boolean).join('\n');
  if (isObj(r.file) && typeof r.file.content === 'string') return r.file.content;
  // A subagent's hand-back: its report is what the model sees (the rest is timing and ids).
  if (Array.isArray(r.content))
    return r.content.map((b) => (isObj(b) && typeof b.text === 'string' ? b.text : '')).join('\n');
  return JSON.stringify(r);
}

const hook: HookProtocol = {
  parse(input): HookCall {
    if (!isObj(input)) throw new Error('hook input is not a JSON object');
    const ev = input.hook_event_name;
    if (ev !== 'PreToolUse' && ev !== 'PostToolUse' && ev !== 'PostToolUseFailure')
      throw new Error(`hook_event_name ${JSON.stringify(ev)} is not a tool hook`);
    if (typeof input.tool_use_id !== 'string' || typeof input.tool_name !== 'string')
      throw new Error('hook input has no tool_use_id / tool_name');
    const failed = ev === 'PostToolUseFailure';
    return {
      event: ev === 'PreToolUse' ? 'pre' : 'post',
      call_id: input.tool_use_id,
      tool: input.tool_name,
      input: isObj(input.tool_input) ? input.tool_input : {},
      ...(ev !== 'PreToolUse'
        ? {
            output: failed ? str(input.error) : responseText(input.tool_response),
            is_error: failed || (isObj(input.tool_response) && input.tool_response.is_error === true),
            duration_ms: typeof input.duration_ms === 'number' ? Math.max(0, input.duration_ms) : 0,
            // 2.1.328's Bash past its `timeout` does not kill the command: it moves it to the
            // background (`backgroundTaskId`, `timedOutAfterMs`) and waits for it before it exits.
            running: isObj(input.tool_response) && typeof input.tool_response.timedOutAfterMs === 'number',
          }
        : {}),
      session_id: typeof input.session_id === 'string' ? input.session_id : undefined,
      agent_id: typeof input.agent_id === 'string' ? input.agent_id : undefined,
    };
  },

  answer(call, d) {
    if (call.event === 'post') return {};
    return {
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: d.allowed ? 'allow' : 'deny',
        permissionDecisionReason: `ProofLoop policy (${d.rule}): ${d.reason}`,
      },
    };
  },

  toPolicy(call, workspace): PolicyProposal {
    const i = call.input;
    switch (call.tool) {
      case 'Read':
        return { tool: 'read_file', args: { path: rel(workspace, i.file_path) } };
      case 'Write':
        return {
          tool: 'write_file',
          args: { path: rel(workspace, i.file_path), content: str(i.content) },
          writes: rel(workspace, i.file_path),
        };
      case 'Edit':
      case 'MultiEdit': {
        const p = rel(workspace, i.file_path);
        const edits = call.tool === 'Edit' ? [i] : Array.isArray(i.edits) ? (i.edits as Obj[]) : [];
        const patch = edits
          .map((e) => createTwoFilesPatch(`a/${p}`, `b/${p}`, str(e.old_string), str(e.new_string)))
          .join('');
        return { tool: 'apply_patch', args: { path: p, patch: patch || '(empty)' }, writes: p };
      }
      case 'Bash':
        return { tool: 'run_command', args: { command: str(i.command) } };
      case 'Glob':
      case 'LS':
        return { tool: 'list_files', args: { path: rel(workspace, i.path ?? '.') || '.' } };
      case 'Grep':
        return { tool: 'search', args: { query: str(i.pattern).slice(0, 200) || '?' } };
      case 'Agent':
      case 'Task':
        return {
          tool: call.tool,
          args: i,
          decided: {
            allowed: true,
            rule: 'subagent',
            reason: "a subagent's own tool calls pass this hook and the task's policy too",
          },
        };
      default:
        // Not a tool the task's policy knows: the policy denies it by name (rule tools).
        return { tool: call.tool, args: i };
    }
  },
};

const simTools: SimTools = {
  call(intent: SimIntent, workspace: string) {
    const abs = (p: string) => (path.isAbsolute(p) ? p : path.join(workspace, p));
    switch (intent.kind) {
      case 'read':
        return { name: 'Read', input: { file_path: abs(intent.path) } };
      case 'edit':
        return {
          name: 'Edit',
          input: { file_path: abs(intent.path), old_string: intent.find, new_string: intent.replace },
        };
      case 'write':
        return { name: 'Write', input: { file_path: abs(intent.path), content: intent.content } };
      case 'run':
        return {
          name: 'Bash',
          input: {
            command: intent.command,
            description: 'Run a command',
            ...(intent.timeout_ms ? { timeout: intent.timeout_ms } : {}),
          },
        };
      case 'subagent':
        return {
          name: 'Agent',
          input: {
            description: intent.description,
            prompt: intent.prompt,
            subagent_type: 'general-purpose',
            // Synchronous: the main conversation waits, so the order of lanes is the same every run.
            run_in_background: false,
          },
        };
    }
  },
};

/** Every `.jsonl` under `<home>/.claude/projects`: sessions first, then their subagents. */
function transcripts(home: string): string[] {
  const root = path.join(home, '.claude', 'projects');
  if (!existsSync(root)) return [];
  const sessions: string[] = [];
  const subs: string[] = [];
  for (const project of readdirSync(root).sort()) {
    const dir = path.join(root, project);
    if (!statSync(dir).isDirectory()) continue;
    for (const name of readdirSync(dir).sort()) {
      const f = path.join(dir, name);
      if (name.endsWith('.jsonl')) sessions.push(f);
      const sub = path.join(f, 'subagents');
      if (statSync(f).isDirectory() && existsSync(sub)) {
        for (const s of readdirSync(sub).sort()) if (s.endsWith('.jsonl')) subs.push(path.join(sub, s));
      }
    }
  }
  return [...sessions, ...subs];
}

export const claudeCode: RealAgent = {
  name: 'claude-code',
  dialect: anthropic,
  defaultModel: 'claude-sonnet-4-5',
  version,

  prepareHome(ctx) {
    const config = path.join(ctx.home, '.claude');
    mkdirSync(config, { recursive: true });
    mkdirSync(path.join(ctx.home, 'tmp'), { recursive: true });
    // A variant folder of the user's: its settings are the base, its CLAUDE.md / .mcp.json go to the workspace.
    let base: Obj = dict();
    if (ctx.configDir) {
      const s = path.join(ctx.configDir, 'settings.json');
      if (existsSync(s)) base = JSON.parse(readFileSync(s, 'utf8')) as Obj;
      for (const f of ['CLAUDE.md', '.mcp.json']) {
        const from = path.join(ctx.configDir, f);
        if (existsSync(from)) cpSync(from, path.join(ctx.workspace, f));
      }
    }
    const own = { type: 'command', command: ctx.hookCommand, timeout: 60 };
    const hooks = isObj(base.hooks) ? { ...base.hooks } : {};
    for (const ev of ['PreToolUse', 'PostToolUse', 'PostToolUseFailure']) {
      const theirs = Array.isArray(hooks[ev]) ? (hooks[ev] as unknown[]) : [];
      hooks[ev] = [...theirs, { matcher: '*', hooks: [own] }];
    }
    const settings = { ...base, hooks };
    const settingsFile = path.join(config, 'settings.json');
    const files: Record<string, string> = { [settingsFile]: JSON.stringify(settings, null, 2) + '\n' };
    for (const [f, text] of Object.entries(files)) writeFileSync(f, text, { mode: 0o600 });
    // The instructions and MCP config the agent reads from its workspace configure it too.
    for (const f of ['CLAUDE.md', '.mcp.json', '.claude/settings.json']) {
      const p = path.join(ctx.workspace, f);
      if (existsSync(p)) files[p] = readFileSync(p, 'utf8');
    }
    return { files, settingsFile };
  },

  launch(ctx) {
    return {
      command: claudeBinary(),
      args: [
        '-p',
        ctx.prompt,
        '--output-format',
        'stream-json',
        '--verbose',
        '--settings',
        ctx.prepared.settingsFile!,
        '--model',
        ctx.model,
      ],
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: ctx.home,
        CLAUDE_CONFIG_DIR: path.join(ctx.home, '.claude'),
        TMPDIR: path.join(ctx.home, 'tmp'),
        ANTHROPIC_BASE_URL: ctx.gatewayUrl,
        ANTHROPIC_API_KEY: ctx.token,
        // The machine may be offline, and nothing of a refereed run may go anywhere but the gateway.
        DISABLE_AUTOUPDATER: '1',
        DISABLE_TELEMETRY: '1',
        DISABLE_ERROR_REPORTING: '1',
        DISABLE_BUG_COMMAND: '1',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY: '1',
        ...ctx.hookEnv,
      },
    };
  },

  hook,
  transcripts,
  sim: simTools,
};
