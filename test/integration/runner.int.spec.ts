import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { Ledger, verifyEvents, type StoredEvent } from '../../electron/ledger';
import { loadCatalog } from '../../electron/runner/catalog';
import { RunHost, type RunMeta } from '../../electron/runner/host';
import { runJudge } from '../../electron/runner/judge';
import { comparable } from '../../electron/runner/divergence';
import { PolicyEngine } from '../../electron/runner/policy';
import { executeTool, confine } from '../../electron/runner/tools';
import type { Variant } from '../../electron/runner/protocol';
import { cli, freshFolder, repoRoot } from './helpers/tmp';

const TASKS = path.join(repoRoot, 'tasks');
const cleanups: (() => void)[] = [];
afterAll(() => cleanups.forEach((c) => c()));
function folder(): string {
  const f = freshFolder();
  cleanups.push(f.cleanup);
  return f.dir;
}

/** One ledger folder shared by the variant runs of this file (they run one after the other). */
let runsFolder: string;
let ledger: Ledger;
let host: RunHost;
beforeAll(() => {
  runsFolder = folder();
  ledger = Ledger.open(runsFolder);
  host = new RunHost(ledger, { tasksDir: TASKS });
});
afterAll(() => ledger?.close());

const meta = (task_id: string, variant: Variant, seed = 1): RunMeta => ({
  task_id,
  variant,
  seed,
  mode: 'live',
});
async function run(task: string, variant: Variant, seed = 1, h = host) {
  const { run_id, done } = h.start(meta(task, variant, seed));
  const result = await done;
  return { run_id, result, events: h === host ? ledger.read(run_id) : [] };
}
const kinds = (events: StoredEvent[]) => events.map((e) => e.kind);
const sig = (events: StoredEvent[]) => events.map((e) => JSON.stringify(comparable(e)));

function verified(l: Ledger, runId: string) {
  const r = l.run(runId)!;
  return verifyEvents(runId, l.iterate(runId), { expectedHead: { seq: r.head_seq, hash: r.head_hash } });
}

function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) [ZX]/.test(stat);
  } catch {
    return false;
  }
}

function walkFiles(dir: string, out: string[] = []): string[] {
  for (const n of readdirSync(dir)) {
    const p = path.join(dir, n);
    if (statSync(p).isDirectory()) walkFiles(p, out);
    else out.push(p);
  }
  return out;
}

describe('task catalog', () => {
  it('ships at least 4 tasks, the discount fix among them, each failing its tests before the fix', async () => {
    const { tasks, errors } = loadCatalog(TASKS);
    expect(errors).toEqual([]);
    expect(tasks.length).toBeGreaterThanOrEqual(4);
    expect(tasks.map((t) => t.task.id)).toContain('fix-discount');
    const verdicts = await Promise.all(
      tasks.map((t) => runJudge(t.workspace, t.task.judge.command, t.task.judge.timeout_ms)),
    );
    for (const v of verdicts) {
      expect(v.passed).toBe(false);
      expect(v.tests_failed).toBeGreaterThan(0);
    }
  });

  it('names the file and field of a task or policy that does not validate', () => {
    const dir = folder();
    cpSync(path.join(TASKS, 'fix-discount'), path.join(dir, 'fix-discount'), { recursive: true });
    cpSync(path.join(TASKS, 'fix-median'), path.join(dir, 'fix-median'), { recursive: true });
    cpSync(path.join(TASKS, 'fix-slugify'), path.join(dir, 'fix-slugify'), { recursive: true });
    const tools = path.join(dir, 'fix-discount', 'tools.json');
    const policy = JSON.parse(readFileSync(tools, 'utf8'));
    policy.budget.steps = 'many';
    writeFileSync(tools, JSON.stringify(policy));
    writeFileSync(path.join(dir, 'fix-median', 'task.json'), '{ "id": "fix-median", ');
    const task = path.join(dir, 'fix-slugify', 'task.json');
    writeFileSync(task, JSON.stringify({ ...JSON.parse(readFileSync(task, 'utf8')), judgement: 1 }));
    const { tasks, errors } = loadCatalog(dir);
    expect(tasks).toEqual([]);
    expect(errors).toEqual([
      expect.objectContaining({ file: tools, field: 'budget.steps' }),
      expect.objectContaining({ file: path.join(dir, 'fix-median', 'task.json'), field: '(root)' }),
      expect.objectContaining({ file: task, field: '(root)', message: expect.stringContaining('judgement') }),
    ]);
  });
});

describe('runner variants (real model and judge processes)', () => {
  it('careful reads, patches correctly, tests and passes the judge', async () => {
    const { result, events, run_id } = await run('fix-discount', 'careful');
    expect(result).toMatchObject({ status: 'completed', outcome: 'passed', passed: true });
    expect(kinds(events)[0]).toBe('run_started');
    expect(kinds(events)).toContain('file_changed');
    expect(events.at(-2)).toMatchObject({
      kind: 'judge_verdict',
      payload: { passed: true, tests_failed: 0 },
    });
    expect(events.at(-1)).toMatchObject({ kind: 'run_completed', payload: { outcome: 'passed' } });
    expect(verified(ledger, run_id).ok).toBe(true);
    // Every tool result keeps a bounded excerpt and a content-addressed artifact, owner-only.
    for (const e of events.filter((x) => x.kind === 'tool_returned')) {
      const p = e.payload as { digest: string; excerpt: string; artifact: { digest: string } };
      expect(Buffer.byteLength(p.excerpt)).toBeLessThanOrEqual(2048 + 64);
      const file = path.join(runsFolder, run_id, 'artifacts', p.artifact.digest);
      expect(statSync(file).mode & 0o777).toBe(0o600);
    }
  });

  it('hasty makes a wrong first patch, fails the judge, then fixes it', async () => {
    const { result, events } = await run('fix-median', 'hasty');
    expect(result.outcome).toBe('passed');
    const verdicts = events.filter((e) => e.kind === 'judge_verdict').map((e) => e.payload.passed);
    expect(verdicts).toEqual([false, true]);
    expect(events.filter((e) => e.kind === 'file_changed')).toHaveLength(2);
  });

  it('rogue is denied a forbidden tool, paths outside the workspace and the tests; nothing is written outside', async () => {
    const { result, events, run_id } = await run('fix-discount', 'rogue');
    expect(result).toMatchObject({ status: 'completed', outcome: 'failed', passed: false });
    const rules = events.filter((e) => e.kind === 'action_denied').map((e) => e.payload.rule);
    expect(new Set(rules)).toEqual(new Set(['tools', 'workspace', 'paths.write', 'commands']));
    expect(kinds(events)).not.toContain('file_changed');
    const ws = path.join(runsFolder, run_id, 'workspace');
    expect(readFileSync(path.join(ws, 'test.js'), 'utf8')).toBe(
      readFileSync(path.join(TASKS, 'fix-discount/workspace/test.js'), 'utf8'),
    );
    const outside = walkFiles(runsFolder).filter((f) => !f.startsWith(ws + path.sep));
    expect(outside.filter((f) => f.endsWith('escape.txt'))).toEqual([]);
  });

  it('looping repeats itself until the step budget is exhausted', async () => {
    const { result, events } = await run('fix-slugify', 'looping');
    expect(result.outcome).toBe('budget_exhausted');
    const b = events.find((e) => e.kind === 'budget_exhausted')!;
    expect(b.payload).toMatchObject({ budget: 'steps', limit: 14, used: 14 });
    expect(events.at(-1)!.kind).toBe('run_completed');
  });

  it('hang: a command beyond its timeout is killed with its whole process group', async () => {
    const { result, events, run_id } = await run('fix-pagination', 'hang');
    const t = events.find((e) => e.kind === 'tool_timed_out')!;
    expect(t.payload).toMatchObject({ timeout_ms: 2000, killed: 'process_group' });
    const pids = readFileSync(path.join(runsFolder, run_id, 'workspace', '.slow-pids'), 'utf8')
      .trim()
      .split(' ')
      .map(Number);
    expect(pids).toHaveLength(2);
    for (const pid of pids) expect(isAlive(pid)).toBe(false);
    expect(result.outcome).toBe('passed');
  });

  it('leaky: the credential in a tool output reaches neither the ledger, the mirror nor any artifact', async () => {
    const secrets = ['AKIAPROOFLOOPTEST001', 'ghp_ProofLoopFakeToken0123456789abcdefgh'];
    const env = readFileSync(path.join(TASKS, 'fix-discount/workspace/.env'), 'utf8');
    for (const s of secrets) expect(env).toContain(s);
    const f = folder();
    const l = Ledger.open(f);
    const h = new RunHost(l, { tasksDir: TASKS });
    const { run_id, done } = h.start(meta('fix-discount', 'leaky'));
    expect((await done).outcome).toBe('passed');
    const events = l.read(run_id);
    const read = events.find(
      (e) => e.kind === 'tool_returned' && String(e.payload.excerpt).includes('AWS_ACCESS_KEY_ID'),
    )!;
    expect(read.payload.excerpt).toContain('[REDACTED');
    const art = read.payload.artifact as { digest: string; redacted: boolean };
    expect(art.redacted).toBe(true);
    l.close();
    const files = [
      path.join(f, '.proofloop', 'ledger.db'),
      path.join(f, '.proofloop', 'ledger.db-wal'),
      path.join(f, run_id, 'events.jsonl'),
      ...readdirSync(path.join(f, run_id, 'artifacts')).map((n) => path.join(f, run_id, 'artifacts', n)),
    ].filter((p) => existsSync(p));
    expect(files.length).toBeGreaterThan(3);
    for (const file of files) {
      const bytes = readFileSync(file);
      for (const s of secrets) expect(bytes.includes(Buffer.from(s)), `${s} in ${file}`).toBe(false);
    }
    expect(readFileSync(path.join(f, run_id, 'artifacts', art.digest), 'utf8')).toContain('[REDACTED');
  });

  it('crashy: the model process dies mid-run, the run fails, and resume finishes it without asking again', async () => {
    const { result, events, run_id } = await run('fix-discount', 'crashy', 4);
    expect(result).toMatchObject({ status: 'failed', outcome: 'model_crash' });
    expect(events.at(-1)).toMatchObject({ kind: 'run_failed', payload: { error_type: 'model_crash' } });
    const before = events.filter((e) => e.kind === 'model_proposed').length;
    expect(before).toBeGreaterThan(0);

    const r = await host.resume(run_id);
    const end = await r.done;
    expect(end).toMatchObject({ status: 'completed', outcome: 'passed' });
    const all = ledger.read(run_id);
    const resumed = all.find((e) => e.kind === 'run_resumed')!;
    expect(resumed.payload).toMatchObject({ from_seq: events.at(-1)!.seq, after: 'run_failed' });
    // Call ids go on from where the crash left them: no recorded step was proposed twice.
    const ids = all.filter((e) => e.kind === 'model_proposed').map((e) => e.payload.call_id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.slice(0, before)).toEqual(
      events.filter((e) => e.kind === 'model_proposed').map((e) => e.payload.call_id),
    );
    expect(verified(ledger, run_id).ok).toBe(true);
    await expect(host.resume(run_id)).rejects.toThrow(/already completed/);
  });
});

describe('determinism, rerun and replay', () => {
  it('same task, variant and seed give equal events but for ids, times and durations; another seed or variant does not', async () => {
    const a = await run('fix-slugify', 'careful', 7);
    const b = await run('fix-slugify', 'careful', 7);
    expect(sig(b.events)).toEqual(sig(a.events));
    const seeds = await Promise.all([8, 9, 10].map((s) => run('fix-slugify', 'careful', s)));
    expect(seeds.some((c) => JSON.stringify(sig(c.events)) !== JSON.stringify(sig(a.events)))).toBe(true);
    const other = await run('fix-slugify', 'leaky', 7);
    expect(sig(other.events)).not.toEqual(sig(a.events));

    const re = await host.rerun(a.run_id);
    await re.done;
    const rerun = ledger.read(re.run_id);
    expect(rerun[0]!.payload).toMatchObject({ mode: 'rerun', of: a.run_id });
    expect(sig(rerun)).toEqual(sig(a.events));
  });

  it('replay of an untouched run reports no divergence; after a task file changes it names the first divergent seq', async () => {
    const tasks = folder();
    cpSync(path.join(TASKS, 'fix-discount'), path.join(tasks, 'fix-discount'), { recursive: true });
    const f = folder();
    const l = Ledger.open(f);
    const h = new RunHost(l, { tasksDir: tasks });
    const { run_id, done } = h.start(meta('fix-discount', 'careful', 3));
    await done;
    const same = await h.replay(run_id);
    expect(same.ok).toBe(true);
    expect(same.first_divergence).toBeNull();
    expect(l.read(same.run_id)[0]!.payload).toMatchObject({ mode: 'replay', of: run_id });

    const readme = path.join(tasks, 'fix-discount', 'workspace', 'cart.js');
    writeFileSync(readme, readFileSync(readme, 'utf8') + '\n// changed after the run\n');
    const diff = await h.replay(run_id);
    expect(diff.ok).toBe(false);
    const d = diff.first_divergence!;
    const original = l.event(run_id, d.seq)!;
    expect(original.kind).toBe('tool_returned');
    // The first result that touches cart.js: a listing does not, a read of it or a search does.
    const earlier = l.read(run_id, { to: d.seq - 1, kinds: ['tool_returned'] });
    expect(earlier.every((e) => !String(e.payload.excerpt).includes('changed after the run'))).toBe(true);
    expect(d.expected?.seq).toBe(d.seq);
    expect(d.actual?.kind).toBe('tool_returned');
    l.close();
  });
});

describe('workspace confinement', () => {
  it('refuses symbolic links that lead outside the workspace, for reads and writes', async () => {
    const root = folder();
    const ws = path.join(root, 'ws');
    mkdirSync(ws);
    writeFileSync(path.join(root, 'secret.txt'), 'outside');
    symlinkSync(path.join(root, 'secret.txt'), path.join(ws, 'link.txt'));
    symlinkSync(root, path.join(ws, 'up'));
    const engine = new PolicyEngine(loadCatalog(TASKS).tasks[0]!.policy);
    expect(confine(ws, 'read_file', { path: 'link.txt' })).toMatchObject({
      allowed: false,
      rule: 'workspace',
    });
    expect(confine(ws, 'write_file', { path: 'up/new.js' })).toMatchObject({
      allowed: false,
      rule: 'workspace',
    });
    const r = await executeTool(ws, engine, 'write_file', { path: 'up/x.js', content: 'x' });
    expect(r.status).toBe('error');
    expect(existsSync(path.join(root, 'x.js'))).toBe(false);
  });
});

describe('CLI', () => {
  it('run --json prints the run id and how it ended; exit 0 when it passed, 1 when not, 2 on usage', async () => {
    const f = folder();
    const ok = await cli([
      '--folder',
      f,
      '--json',
      'run',
      'fix-pagination',
      '--variant',
      'careful',
      '--seed',
      '5',
    ]);
    expect(ok.code, ok.stderr).toBe(0);
    const out = JSON.parse(ok.stdout) as { run_id: string; outcome: string; status: string };
    expect(out).toMatchObject({ status: 'completed', outcome: 'passed' });
    const rogue = await cli(['run', 'fix-pagination', '--variant', 'rogue', '--folder', f, '--json']);
    expect(rogue.code).toBe(1);
    const replay = await cli(['--folder', f, '--json', 'replay', out.run_id]);
    expect(replay.code, replay.stderr).toBe(0);
    expect(JSON.parse(replay.stdout)).toMatchObject({ ok: true, first_divergence: null, of: out.run_id });
    const bad = await cli(['--folder', f, 'run', 'fix-pagination', '--variant', 'sloppy']);
    expect(bad.code).toBe(2);
    const tasks = await cli(['--folder', f, '--json', 'tasks']);
    expect(JSON.parse(tasks.stdout).tasks.length).toBeGreaterThanOrEqual(4);
  });
});
