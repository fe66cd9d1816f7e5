import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ProofloopService } from '../../electron/service/service';
import { freshFolder, repoRoot } from './helpers/tmp';

/**
 * The app's way to agents and replays, through the service as the window calls it (origin
 * renderer): which agents are installed, a replay that returns its run at once, and runs.diff's
 * verdict of a replay against its source. The simulated agent keeps it fast; the real Claude Code
 * takes the same path in test/e2e/real-agent.e2e.spec.ts.
 */
type Obj = Record<string, unknown>;

let svc: ProofloopService;
let tasks: string;
const cleanups: (() => void)[] = [];

async function call<T = Obj>(method: string, args: unknown): Promise<T> {
  const r = await svc.call(method, args, 'renderer');
  if (!r.ok) throw new Error(`${method}: ${r.error.code} ${r.error.message}`);
  return r.value as T;
}

/** Waits for a run started here to end, as the service knows it. */
const ended = (run_id: string) => svc.invoke('run.wait', { run_id });

beforeAll(async () => {
  const f = freshFolder();
  const t = freshFolder();
  cleanups.push(f.cleanup, t.cleanup);
  tasks = t.dir;
  cpSync(path.join(repoRoot, 'tasks', 'fix-discount'), path.join(tasks, 'fix-discount'), { recursive: true });
  svc = new ProofloopService({ tasksDir: tasks });
  await svc.openFolder(f.dir);
});
afterAll(async () => {
  await svc.closeFolder();
  cleanups.forEach((c) => c());
});

describe('agents.list', () => {
  it('lists the simulated agent and both CLIs with the versions of the pinned packages', async () => {
    const { agents } = await call<{ agents: Obj[] }>('agents.list', {});
    const by = Object.fromEntries(agents.map((a) => [a.name, a]));
    expect(Object.keys(by)).toEqual(['sim', 'claude-code', 'codex']);
    expect(by.sim).toMatchObject({ installed: true, upstream: null });
    const pkg = (p: string) =>
      (JSON.parse(readFileSync(path.join(repoRoot, 'node_modules', p, 'package.json'), 'utf8')) as Obj)
        .version;
    expect(by['claude-code']).toMatchObject({ installed: true, version: pkg('@anthropic-ai/claude-code') });
    expect(by.codex).toMatchObject({ installed: true, version: pkg('@openai/codex') });
    // The upstream source names the variables of the key it would read, and never the key.
    expect((by['claude-code']!.upstream as Obj).key_env).toEqual([
      'ANTHROPIC_API_KEY',
      'ANTHROPIC_AUTH_TOKEN',
    ]);
    expect(JSON.stringify(agents)).not.toMatch(/sk-[A-Za-z0-9]/);
  });
});

describe('a replay from the app', () => {
  let source: string;
  beforeAll(async () => {
    source = (
      await call<{ run_id: string }>('run.start', { task_id: 'fix-discount', variant: 'careful', seed: 3 })
    ).run_id;
    await ended(source);
  });

  it('starts at once as mode replay, and runs.diff gives its verdict either way round', async () => {
    const { run_id: replay } = await call<{ run_id: string }>('run.rerun', { run_id: source, replay: true });
    expect(replay).not.toBe(source);
    const first = await call<{ events: { kind: string; payload: Obj }[] }>('events.read', {
      run_id: replay,
      to: 1,
    });
    expect(first.events[0]).toMatchObject({ kind: 'run_started', payload: { mode: 'replay', of: source } });
    await ended(replay);

    const d = await call<{ replay: Obj | null }>('runs.diff', { left: source, right: replay });
    expect(d.replay).toEqual({ source, replay, ended: true, first_divergence: null });
    const swapped = await call<{ replay: Obj | null }>('runs.diff', { left: replay, right: source });
    expect(swapped.replay).toMatchObject({ source, replay, first_divergence: null });
  });

  it('names the seq where a replay parts after the workspace changed; a rerun has no replay verdict', async () => {
    const cart = path.join(tasks, 'fix-discount', 'workspace', 'cart.js');
    const before = readFileSync(cart, 'utf8');
    writeFileSync(cart, before + '\n// changed after the run\n');
    try {
      const { run_id: replay } = await call<{ run_id: string }>('run.rerun', {
        run_id: source,
        replay: true,
      });
      await ended(replay);
      const d = await call<{ replay: { first_divergence: Obj | null } }>('runs.diff', {
        left: source,
        right: replay,
      });
      const fd = d.replay.first_divergence!;
      expect(fd).not.toBeNull();
      // The simulated agent's replay compares decisions and results: a tool result of the source.
      expect(fd.expected_kind).toBe('tool_returned');
      const at = await call<{ events: { kind: string }[] }>('events.read', {
        run_id: source,
        from: fd.seq as number,
        to: fd.seq as number,
      });
      expect(at.events[0]!.kind).toBe('tool_returned');
      expect(fd.cause).toBeNull();
    } finally {
      writeFileSync(cart, before);
    }
    const { run_id: rerun } = await call<{ run_id: string }>('run.rerun', { run_id: source });
    await ended(rerun);
    const r = await call<{ replay: Obj | null }>('runs.diff', { left: source, right: rerun });
    expect(r.replay).toBeNull();
  });
});
