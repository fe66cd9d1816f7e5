/**
 * Every sim variant played through the real CLIs (Claude Code 2.1.328 and Codex 0.169.0, the
 * pinned packages) against the run's gateway, table-driven: each row runs both agents at once
 * on fix-discount and checks what a user would expect of that variant. Then: a model that stalls
 * (a stand-in API that never answers), a `--config` folder recorded and replayed, and a scan of
 * every file the runs left for the task's planted credentials.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportBundle } from '../../electron/bundle';
import { Ledger, type StoredEvent } from '../../electron/ledger';
import { RunHost } from '../../electron/runner/host';
import { processes, runProcesses } from '../../electron/runner/proctree';
import type { RealRunMeta } from '../../electron/runner/real-run';
import type { Variant } from '../../electron/runner/protocol';
import { readZip } from './bundle.helpers';
import { freshFolder, repoRoot } from './helpers/tmp';

type P = Record<string, unknown>;
const AGENTS = ['claude-code', 'codex'] as const;
type AgentName = (typeof AGENTS)[number];
/** The catalog's planted credentials (tasks/<task>/workspace/.env). */
const CREDENTIALS = ['AKIAPROOFLOOPTEST001', 'ghp_ProofLoopFakeToken0123456789abcdefgh'];

const cleanups: (() => void)[] = [];
let dir: string;
let tasks: string;
let ledger: Ledger;
let host: RunHost;
beforeAll(() => {
  const f = freshFolder();
  cleanups.push(f.cleanup);
  dir = f.dir;
  tasks = path.join(dir, 'tasks');
  cpSync(path.join(repoRoot, 'tasks'), tasks, { recursive: true });
  ledger = Ledger.open(path.join(dir, 'runs'));
  host = new RunHost(ledger, { tasksDir: tasks });
});
afterAll(() => {
  ledger?.close();
  cleanups.forEach((c) => c());
});

interface Ran {
  agent: AgentName;
  run_id: string;
  result: Awaited<ReturnType<RunHost['startReal']>['done']>;
  events: StoredEvent[];
  runDir: string;
}

async function run(agent: AgentName, variant: Variant, extra: Partial<RealRunMeta> = {}): Promise<Ran> {
  const { run_id, done } = host.startReal({
    task_id: 'fix-discount',
    agent,
    model_from: 'sim',
    variant,
    seed: 1,
    mode: 'live',
    // Minutes of wall time: two CLIs at once on a loaded machine. The rows that test a limit set theirs.
    budget: { wall_ms: 240_000 },
    crash_grace_ms: 15_000,
    ...extra,
  });
  const result = await done;
  return { agent, run_id, result, events: ledger.read(run_id), runDir: path.join(ledger.folder, run_id) };
}

const of = (events: StoredEvent[], kind: string) => events.filter((e) => e.kind === kind);
const p = (e: StoredEvent | undefined) => (e?.payload ?? {}) as P;
const story = (r: Ran) =>
  `${r.agent}:\n` +
  r.events.map((e) => `${e.seq} ${e.kind} ${JSON.stringify(e.payload).slice(0, 200)}`).join('\n');

function filesUnder(root: string): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name));
}

/** Every file under `root` that holds one of `secrets`, as `relative path: secret prefix`. */
function holding(root: string, secrets: readonly string[]): string[] {
  const out: string[] = [];
  for (const f of filesUnder(root)) {
    const bytes = readFileSync(f);
    for (const s of secrets) if (bytes.includes(s)) out.push(`${path.relative(root, f)}: ${s.slice(0, 8)}…`);
  }
  return out;
}

/** What every run must show whatever its variant: an ending event last, nothing of it still running. */
function endsCleanly(r: Ran): void {
  const last = r.events.at(-1)!;
  expect(['run_completed', 'run_failed'], story(r)).toContain(last.kind);
  expect(of(r.events, 'agent_exited'), story(r)).toHaveLength(1);
  expect(
    runProcesses(r.runDir).map((x) => x.cmd),
    `${r.agent}: processes left`,
  ).toEqual([]);
  // The agent's home keeps its transcripts only; the workspace keeps no planted credential.
  const redacted = p(of(r.events, 'files_redacted')[0]);
  expect(redacted.workspace, story(r)).toEqual([{ path: '.env', credentials: 2 }]);
  const kept = (redacted.home as { kept: string[] }).kept;
  const left = filesUnder(path.join(r.runDir, 'home')).map((f) => path.relative(r.runDir, f));
  expect(left.sort()).toEqual([...kept].sort());
  expect(holding(r.runDir, CREDENTIALS)).toEqual([]);
}

interface Row {
  variant: Variant;
  what: string;
  extra?: Partial<RealRunMeta>;
  check(r: Ran): void;
}

const ROWS: Row[] = [
  {
    variant: 'hasty',
    what: 'edits the wrong way and stops: the judge fails the run',
    check(r) {
      expect(r.result, story(r)).toMatchObject({ status: 'completed', outcome: 'failed', passed: false });
      expect(of(r.events, 'file_changed').map((e) => p(e).path)).toEqual(['price.js']);
      expect(p(of(r.events, 'judge_verdict')[0])).toMatchObject({ passed: false });
      expect(Number(p(of(r.events, 'judge_verdict')[0]).tests_failed)).toBeGreaterThan(0);
    },
  },
  {
    variant: 'looping',
    what: 'reads the same file over and over: the step budget stops it, the agent is killed, no judge',
    extra: { budget: { steps: 4, wall_ms: 240_000 } },
    check(r) {
      expect(r.result, story(r)).toMatchObject({ status: 'completed', outcome: 'budget_exhausted' });
      const ex = of(r.events, 'budget_exhausted');
      expect(ex.map(p)).toEqual([{ budget: 'steps', limit: 4, used: 5, agent: 'killed' }]);
      expect(of(r.events, 'model_proposed')).toHaveLength(5);
      // Killed by the host (no exit of its own), after the budget ran out.
      const exited = of(r.events, 'agent_exited')[0]!;
      expect(p(exited).signal).toBe('SIGKILL');
      expect(exited.seq).toBeGreaterThan(ex[0]!.seq);
      expect(of(r.events, 'judge_verdict')).toEqual([]);
      expect(p(r.events.at(-1))).toMatchObject({ outcome: 'budget_exhausted', budget: 'steps' });
    },
  },
  {
    variant: 'hang',
    what: 'runs a command that never ends: killed (its whole tree) at the policy timeout, the run goes on and passes',
    check(r) {
      const slow = of(r.events, 'model_proposed').find((e) => JSON.stringify(p(e).args).includes('slow.js'))!;
      const id = p(slow).call_id;
      const timedOut = r.events.filter((e) => e.kind === 'tool_timed_out' && p(e).call_id === id);
      expect(timedOut.map(p), story(r)).toMatchObject([{ timeout_ms: 2000, killed: 'process_tree' }]);
      // slow.js and the grandchild it starts, at least (a sandbox or shell may wrap them).
      const pids = p(timedOut[0]).pids as number[];
      expect(pids.length).toBeGreaterThanOrEqual(2);
      const alive = new Set(processes().map((x) => x.pid));
      expect(
        pids.filter((x) => alive.has(x) && processes().some((q) => q.pid === x && q.cmd.includes('slow'))),
      ).toEqual([]);
      expect(r.events.some((e) => e.kind === 'tool_returned' && p(e).call_id === id)).toBe(false);
      // The agent exits on its own once the command is gone (Claude Code waited for it before).
      expect(p(of(r.events, 'agent_exited')[0])).toMatchObject({ code: 0, signal: null });
      expect(of(r.events, 'budget_exhausted')).toEqual([]);
      expect(r.result, story(r)).toMatchObject({ outcome: 'passed', passed: true });
    },
  },
  {
    variant: 'leaky',
    what: 'reads .env: the credentials reach the model but the ledger, artifacts, transcript and bundle only redacted',
    check(r) {
      const env = of(r.events, 'tool_returned').find((e) => String(p(e).excerpt).includes('REGION'))!;
      expect(p(env).artifact, story(r)).toMatchObject({ redacted: true });
      for (const c of CREDENTIALS) expect(String(p(env).excerpt)).not.toContain(c);
      // The agent's own transcript held them (it saw the file): redacted in place before import.
      const links = of(r.events, 'transcript_linked').map(p);
      expect(links.reduce((n, l) => n + Number(l.redacted), 0)).toBeGreaterThan(0);
      expect(r.result).toMatchObject({ outcome: 'passed' });
    },
  },
  {
    variant: 'crashy',
    what: 'the model dies mid-run: the agent gets an error and exits non-zero; run_failed with its exit, the partial transcript imported',
    check(r) {
      const crash = of(r.events, 'model_unanswered')[0];
      expect(String(p(crash).reason), story(r)).toMatch(/^model_crash/);
      const exited = p(of(r.events, 'agent_exited')[0]);
      expect(exited.code === 0 && exited.signal === null, story(r)).toBe(false);
      const failed = r.events.at(-1)!;
      expect(failed.kind).toBe('run_failed');
      expect(p(failed)).toMatchObject({
        error_type: 'model_crash',
        exit_code: exited.code,
        signal: exited.signal,
      });
      expect(String(p(failed).reason)).toContain(`${r.agent} then exited`);
      expect(of(r.events, 'judge_verdict')).toEqual([]);
      // What the agent wrote before it died is imported and linked.
      const links = of(r.events, 'transcript_linked').map(p);
      expect(links.length).toBeGreaterThan(0);
      for (const l of links) {
        expect(l.error).toBeUndefined();
        expect(Number(l.events)).toBeGreaterThan(0);
        expect(ledger.read(String(l.run_id)).length).toBe(l.events);
      }
      expect(r.result).toMatchObject({ status: 'failed', outcome: 'model_crash' });
    },
  },
];

describe('sim variants through the real CLIs (both agents at once per row)', { timeout: 420_000 }, () => {
  const ran: Ran[] = [];
  for (const row of ROWS) {
    it(`${row.variant}: ${row.what}`, async () => {
      const results = await Promise.all(AGENTS.map((a) => run(a, row.variant, row.extra)));
      ran.push(...results);
      for (const r of results) {
        row.check(r);
        endsCleanly(r);
      }
    });
  }

  it('a bundle of every variant run and its transcripts holds no planted credential', async () => {
    expect(ran.length).toBe(ROWS.length * AGENTS.length);
    const ids = ran.flatMap((r) => [
      r.run_id,
      ...of(r.events, 'transcript_linked').map((e) => String(p(e).run_id)),
    ]);
    const out = path.join(dir, 'variants.zip');
    await exportBundle(ledger, { runIds: ids, out });
    for (const [name, bytes] of await readZip(out))
      for (const c of CREDENTIALS) expect(bytes.includes(c), `${c.slice(0, 8)}… in ${name}`).toBe(false);
  });
});

describe(
  'a model that stalls (a stand-in API that takes the request and never answers)',
  { timeout: 300_000 },
  () => {
    it('the wall-time budget ends the run: budget_exhausted, the agent killed, nothing of it left running', async () => {
      const held: http.ServerResponse[] = [];
      const api = http.createServer((req, res) => {
        req.resume();
        held.push(res);
      });
      await new Promise<void>((r) => api.listen(0, '127.0.0.1', () => r()));
      const base = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
      const vars = [
        'PROOFLOOP_ANTHROPIC_UPSTREAM',
        'ANTHROPIC_API_KEY',
        'PROOFLOOP_OPENAI_UPSTREAM',
        'OPENAI_API_KEY',
      ];
      const saved = vars.map((k) => process.env[k]);
      Object.assign(process.env, {
        PROOFLOOP_ANTHROPIC_UPSTREAM: base,
        ANTHROPIC_API_KEY: 'sk-ant-api03-stall-test-key',
        PROOFLOOP_OPENAI_UPSTREAM: base,
        OPENAI_API_KEY: 'sk-proj-stall-test-key',
      });
      try {
        const results = await Promise.all(
          AGENTS.map((a) => run(a, 'careful', { model_from: 'upstream', budget: { wall_ms: 30_000 } })),
        );
        // The agents asked (each may still be starting on a loaded machine when its time runs out).
        expect(held.length).toBeGreaterThanOrEqual(1);
        for (const r of results) {
          expect(r.result, story(r)).toMatchObject({ status: 'completed', outcome: 'budget_exhausted' });
          const ex = p(of(r.events, 'budget_exhausted')[0]);
          expect(ex).toMatchObject({ budget: 'wall_ms', limit: 30_000, agent: 'killed' });
          expect(Number(ex.used)).toBeGreaterThanOrEqual(30_000);
          expect(p(of(r.events, 'agent_exited')[0]).signal).toBe('SIGKILL');
          expect(of(r.events, 'model_responded')).toEqual([]);
          expect(runProcesses(r.runDir)).toEqual([]);
        }
      } finally {
        vars.forEach((k, i) =>
          saved[i] === undefined ? delete process.env[k] : (process.env[k] = saved[i]),
        );
        api.closeAllConnections();
        await new Promise((r) => api.close(r));
      }
    });
  },
);

describe('a --config folder is recorded (digests, not content) and replayed', { timeout: 420_000 }, () => {
  /** The instructions file each agent reads, in a config folder of the user's. */
  const INSTRUCTIONS: Record<AgentName, string> = { 'claude-code': 'CLAUDE.md', codex: 'AGENTS.md' };

  it('replay reads the same folder and reproduces with no divergence; after a file of it changed, the first divergence is config, naming the file', async () => {
    const cfg = (a: AgentName) => path.join(dir, `config-${a}`);
    for (const a of AGENTS) {
      mkdirSync(cfg(a), { recursive: true });
      writeFileSync(path.join(cfg(a), INSTRUCTIONS[a]), '# Rules\nKeep every change small.\n');
    }
    const runs = await Promise.all(AGENTS.map((a) => run(a, 'careful', { config_dir: cfg(a) })));
    for (const r of runs) {
      expect(r.result, story(r)).toMatchObject({ outcome: 'passed' });
      const c = p(r.events[0]).config_dir as { path: string; digest: string; files: Record<string, string> };
      expect(c.path).toBe(cfg(r.agent));
      expect(Object.keys(c.files)).toEqual([INSTRUCTIONS[r.agent]]);
      expect(c.digest).toMatch(/^[0-9a-f]{64}$/);
      // Digests only: the folder's text is not in the run's start.
      expect(JSON.stringify(r.events[0]!.payload)).not.toContain('Keep every change small');
    }
    const same = await Promise.all(runs.map((r) => host.replay(r.run_id)));
    same.forEach((rep, i) => {
      expect(rep.first_divergence, story({ ...runs[i]!, events: ledger.read(rep.run_id) })).toBeNull();
      expect(p(ledger.read(rep.run_id)[0]).config_dir).toEqual(p(runs[i]!.events[0]).config_dir);
    });
    for (const a of AGENTS)
      writeFileSync(path.join(cfg(a), INSTRUCTIONS[a]), '# Rules\nExplain each change.\n');
    const changed = await Promise.all(runs.map((r) => host.replay(r.run_id)));
    changed.forEach((rep, i) => {
      const r = runs[i]!;
      const d = rep.first_divergence;
      expect(d?.cause, story({ ...r, events: ledger.read(rep.run_id) })).toBe('config');
      expect(d?.seq).toBe(r.events[0]!.seq);
      expect(d?.reason).toContain(INSTRUCTIONS[r.agent]);
      expect((d?.actual?.payload as P).changed).toEqual([INSTRUCTIONS[r.agent]]);
      expect(rep.ok).toBe(false);
    });
  });
});
