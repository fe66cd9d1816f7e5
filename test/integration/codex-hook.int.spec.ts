/**
 * The real Codex CLI (the pinned @openai/codex 0.169.0) against the run's gateway (Responses
 * dialect, sim source, no API key), with ProofLoop's hook deciding its calls. What this file holds
 * is Codex's side of the contract: the private home it is started with, the hook it runs before
 * each call, what it sends back when a call is denied, and that a hook which cannot run denies.
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { codex } from '../../electron/runner/agents/codex';
import { HOOK_CLIENT_FILE, HOOK_CLIENT_SOURCE } from '../../electron/runner/agents/hook-client';
import type { HookCall } from '../../electron/runner/agents/types';
import { loadTask } from '../../electron/runner/catalog';
import { Gateway } from '../../electron/runner/gateway/server';
import { simSource } from '../../electron/runner/gateway/sim-source';
import type { ParsedRequest } from '../../electron/runner/gateway/types';
import { PolicyEngine, type Decision } from '../../electron/runner/policy';
import type { Variant } from '../../electron/runner/protocol';
import { freshFolder, repoRoot } from './helpers/tmp';

const TASKS = path.join(repoRoot, 'tasks');
const cleanups: (() => void)[] = [];
afterAll(() => cleanups.forEach((c) => c()));

interface Outcome {
  exit: number | null;
  requests: ParsedRequest[];
  decisions: { call: HookCall; decision: Decision }[];
  posts: HookCall[];
  workspace: string;
  home: string;
  stderr: string;
}

/** One `codex exec` on a copy of a task's workspace; `hook` overrides the hook client's command/env. */
async function runCodex(
  taskId: string,
  variant: Variant,
  hook: { command?: (client: string) => string; env?: (url: string) => Record<string, string> } = {},
): Promise<Outcome> {
  const f = freshFolder();
  cleanups.push(f.cleanup);
  const loaded = loadTask(TASKS, taskId);
  const workspace = path.join(f.dir, 'workspace');
  const home = path.join(f.dir, 'home');
  cpSync(loaded.workspace, workspace, { recursive: true });
  mkdirSync(home, { recursive: true });
  const client = path.join(home, HOOK_CLIENT_FILE);
  writeFileSync(client, HOOK_CLIENT_SOURCE);
  const engine = new PolicyEngine(loaded.policy);
  const prepared = codex.prepareHome({
    home,
    workspace,
    hookCommand: hook.command ? hook.command(client) : `node ${client}`,
  });
  const token = `tok-${Math.random().toString(36).slice(2)}`;
  const out: Outcome = { exit: null, requests: [], decisions: [], posts: [], workspace, home, stderr: '' };
  const gw = new Gateway({
    dialect: codex.dialect,
    token,
    prompt: loaded.task.goal,
    workspace,
    home,
    source: simSource({
      variant,
      seed: 1,
      taskId,
      goal: loaded.task.goal,
      judgeCommand: loaded.task.judge.command,
      hints: loaded.task.sim ?? null,
      workspace,
      tools: codex.sim,
    }),
    host: {
      admit: () => null,
      record: (ex) => void out.requests.push(ex.req.parsed),
      noAnswer: (req) => void out.requests.push(req.parsed),
      badRequest: (status, message) => {
        throw new Error(`gateway refused a request (${status}): ${message}`);
      },
      hook(body) {
        const call = codex.hook.parse(body);
        if (call.event === 'post') {
          out.posts.push(call);
          return Promise.resolve(codex.hook.answer(call, { allowed: true, rule: 'post', reason: '' }));
        }
        const p = codex.hook.toPolicy(call, workspace);
        const decision = p.decided ?? engine.decide({ tool: p.tool, args: p.args });
        out.decisions.push({ call, decision });
        return Promise.resolve(codex.hook.answer(call, decision));
      },
    },
  });
  const url = await gw.listen();
  try {
    const l = codex.launch({
      home,
      workspace,
      prepared,
      gatewayUrl: url,
      token,
      prompt: loaded.task.goal,
      model: codex.defaultModel,
      hookEnv: hook.env
        ? hook.env(url)
        : { PROOFLOOP_HOOK_URL: `${url}/proofloop/hook`, PROOFLOOP_HOOK_TOKEN: token },
    });
    const child = spawn(l.command, l.args, {
      cwd: workspace,
      env: l.env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr.on('data', (b: Buffer) => (out.stderr += b.toString('utf8')));
    out.exit = await new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  } finally {
    await gw.close();
  }
  return out;
}

const blocked = (r: ParsedRequest | undefined) =>
  r?.results.find((x) => x.output.includes('blocked by PreToolUse hook'));

describe('Codex 0.169.0 refereed through its PreToolUse hook', () => {
  it('rogue: the forbidden command is denied before it runs, and the next request carries the denial', async () => {
    const o = await runCodex('fix-median', 'rogue');
    expect(o.exit, o.stderr).toBe(0);
    const curl = o.decisions.find((d) => d.call.tool === 'Bash');
    expect(curl?.decision).toMatchObject({ allowed: false, rule: 'commands' });
    // No post-call side for a denied call: the tool never ran.
    expect(o.posts.map((p) => p.call_id)).not.toContain(curl!.call.call_id);
    const next = o.requests.find((r) => r.results.some((x) => x.call_id === curl!.call.call_id));
    expect(blocked(next)?.output).toContain('ProofLoop policy (commands)');
    expect(blocked(next)?.is_error).toBe(true);
    // The second attempt (an apply_patch that adds a file outside the workspace) is denied by its path.
    const patch = o.decisions.find((d) => d.call.tool === 'apply_patch');
    expect(patch?.decision).toMatchObject({ allowed: false, rule: 'workspace' });
    expect(existsSync(path.join(o.workspace, '..', 'escape.txt'))).toBe(false);
  });

  it('a hook client that cannot reach the host denies every call (Codex alone would run them)', async () => {
    const o = await runCodex('fix-discount', 'careful', {
      env: () => ({ PROOFLOOP_HOOK_URL: 'http://127.0.0.1:9/proofloop/hook', PROOFLOOP_HOOK_TOKEN: 'x' }),
    });
    expect(o.exit, o.stderr).toBe(0);
    expect(o.posts).toEqual([]);
    const outputs = o.requests.flatMap((r) => r.results);
    expect(outputs.length).toBeGreaterThanOrEqual(2);
    for (const r of outputs) expect(r.output).toMatch(/blocked by PreToolUse hook: proofloop hook: /);
    const before = readFileSync(path.join(TASKS, 'fix-discount', 'workspace', 'price.js'), 'utf8');
    expect(readFileSync(path.join(o.workspace, 'price.js'), 'utf8')).toBe(before);
  });

  it('a hook client that cannot start denies too (the hook command falls back to exit 2)', async () => {
    const o = await runCodex('fix-discount', 'careful', { command: (client) => `node ${client}.missing` });
    expect(o.exit, o.stderr).toBe(0);
    const outputs = o.requests.flatMap((r) => r.results);
    expect(outputs.length).toBeGreaterThanOrEqual(2);
    for (const r of outputs) expect(r.output).toContain('ProofLoop hook failed: the call is denied');
    const before = readFileSync(path.join(TASKS, 'fix-discount', 'workspace', 'price.js'), 'utf8');
    expect(readFileSync(path.join(o.workspace, 'price.js'), 'utf8')).toBe(before);
  });
});
