/* eslint-disable @typescript-eslint/no-explicit-any -- the CLI's JSON is read loosely in assertions */
/**
 * Rerun and compare real agents from the command line, as users do: the built CLI runs the real
 * Claude Code (pinned, sim source: no key) on a catalog task. `--repeat 2` reports the pass rate
 * and that the runs do not part (their digests are taken with what is run-specific normalised:
 * paths, run id, token, session and subagent ids, times), for Claude Code and for Codex; a run
 * under another configuration
 * (`--config` with a CLAUDE.md) diffed against one of them with `proofloop diff` parts at the
 * first request, cause `request`, at the conversation's message that carries the instructions,
 * and says how the two were set up differently.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { assertBuilt, pl } from './helpers/built-cli';
import { freshFolder, repoRoot } from './helpers/tmp';

const cleanups: (() => void)[] = [];
afterAll(() => cleanups.forEach((c) => c()));

let folder: string;
let tasks: string;
beforeAll(() => {
  assertBuilt();
  const f = freshFolder();
  cleanups.push(f.cleanup);
  folder = path.join(f.dir, 'runs');
  tasks = path.join(f.dir, 'tasks');
  cpSync(path.join(repoRoot, 'tasks'), tasks, { recursive: true });
  // The CLI's start and a hook process per call take seconds on a loaded machine (as in real-agents).
  for (const task of ['fix-slugify', 'fix-discount']) {
    const t = path.join(tasks, task, 'tools.json');
    const policy = JSON.parse(readFileSync(t, 'utf8'));
    policy.budget.wall_ms = 600_000;
    writeFileSync(t, JSON.stringify(policy, null, 2));
  }
});

const cli = async (...args: string[]) => {
  const r = await pl(['--folder', folder, '--tasks', tasks, '--json', ...args]);
  return { ...r, json: r.stdout.trim() ? JSON.parse(r.stdout) : null };
};

describe(
  'repeat and compare configurations of Claude Code (the CLI, sim source)',
  { timeout: 600_000 },
  () => {
    let first: string;

    it('--repeat 2: pass rate 2/2, and the runs do not part', async () => {
      const r = await cli('run', 'fix-slugify', '--agent', 'claude-code', '--repeat', '2');
      expect(r.code, r.stderr).toBe(0);
      // The next test diffs against this run, whatever the checks below find.
      first = r.json.runs[0].run_id;
      // Where the runs parted, if they did, is the message: a bare count says nothing to fix.
      expect(r.json, JSON.stringify(r.json.part_from_first)).toMatchObject({
        passed: 2,
        total: 2,
        pass_rate: 1,
        runs_like_first: 1,
      });
      expect(r.json.part_from_first).toEqual([
        {
          run_id: r.json.runs[1].run_id,
          seq: null,
          right_seq: null,
          kind: null,
          cause: null,
          reason: null,
          changes: [],
        },
      ]);
      // Each run's own paths and ids are in its events; they are what the comparison sets aside.
      const d = await cli('diff', first, r.json.runs[1].run_id);
      expect(d.json.first_divergence).toBeNull();
      expect(d.json.counts.changed).toBe(0);
    });

    it('another configuration (a CLAUDE.md): `proofloop diff` parts at the first request, cause request, and names the setup difference', async () => {
      const conf = path.join(folder, '..', 'variant-b');
      mkdirSync(conf, { recursive: true });
      writeFileSync(path.join(conf, 'CLAUDE.md'), 'Explain every change in one sentence before making it.\n');
      const b = await cli('run', 'fix-slugify', '--agent', 'claude-code', '--config', conf);
      expect(b.code, b.stderr).toBe(0);
      expect(b.json).toMatchObject({ status: 'completed', passed: true });
      const d = await cli('diff', first, b.json.run_id);
      expect(d.code).toBe(0);
      const f = d.json.first_divergence;
      expect(f).toMatchObject({
        type: 'changed',
        left_kind: 'model_responded',
        right_kind: 'model_responded',
      });
      // The first exchange of the run: its first model_responded.
      const events = await pl(['--folder', folder, '--json', 'events', first]);
      const firstExchange = events.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
        .find((e: any) => e.kind === 'model_responded');
      expect(f.left_seq).toBe(firstExchange.seq);
      expect(d.json.cause).toMatchObject({ cause: 'request' });
      expect(d.json.cause.part).toMatch(/^messages\[\d+\]$/);
      expect(d.json.cause.setup).toContain('<workspace>/CLAUDE.md added');
      // The text form says the same for people.
      const text = await pl(['--folder', folder, 'diff', first, b.json.run_id]);
      expect(text.stdout).toContain('cause: request: ');
      expect(text.stdout).toContain('agents set up differently: <workspace>/CLAUDE.md added');
    });
  },
);

describe('repeat Codex (the CLI, sim source)', { timeout: 600_000 }, () => {
  it('--repeat 2: pass rate 2/2, and the runs do not part (its own caches and rollout names set aside)', async () => {
    const r = await cli('run', 'fix-discount', '--agent', 'codex', '--repeat', '2');
    expect(r.code, r.stderr).toBe(0);
    expect(r.json, JSON.stringify(r.json.part_from_first)).toMatchObject({
      passed: 2,
      total: 2,
      pass_rate: 1,
      runs_like_first: 1,
    });
    const d = await cli('diff', r.json.runs[0].run_id, r.json.runs[1].run_id);
    expect(d.json.first_divergence).toBeNull();
    expect(d.json.cause).toBeNull();
  });
});
