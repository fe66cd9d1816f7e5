import { afterAll, describe, expect, it } from 'vitest';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ProofloopService } from '../../electron/service/service';
import { LIST_COUNTS_EVENTS, LIST_GLANCES } from '../../electron/service/summary';
import { seed000 } from './helpers/trust-cases';
import { usageTokens } from '../../shared/formats/claude-code';
import { freshFolder } from './helpers/tmp';

type Obj = Record<string, unknown>;
const FIX = path.join(__dirname, '../fixtures');
const SESSION = 'ae4a77f8-aedd-4bc1-888f-c94edc91af04';
const PROJECT = '-home-marco-projects-spotter-worktrees-spotter-4te';

describe('run.summary and folder.findings (what the runs list shows)', () => {
  const f = freshFolder();
  const home = mkdtempSync(path.join(os.tmpdir(), 'proofloop-home-'));
  const before = process.env.PROOFLOOP_HOME;
  process.env.PROOFLOOP_HOME = home;
  const service = new ProofloopService();
  afterAll(() => {
    service.closeFolder();
    f.cleanup();
    rmSync(home, { recursive: true, force: true });
    if (before === undefined) delete process.env.PROOFLOOP_HOME;
    else process.env.PROOFLOOP_HOME = before;
  });

  it('reads a Claude Code session’s project, model, first prompt and tokens (once per message.id)', async () => {
    cpSync(path.join(FIX, 'claude-code/projects', PROJECT), path.join(f.dir, PROJECT), { recursive: true });
    await service.openFolder(f.dir);
    const lines = readFileSync(path.join(FIX, 'claude-code/projects', PROJECT, `${SESSION}.jsonl`), 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as Obj);
    // Expected from the file itself: the last usage of each message.id, summed.
    const last = new Map<string, unknown>();
    for (const l of lines) {
      const m = l.message as Obj | undefined;
      if (l.type === 'assistant' && m?.usage) last.set(String(m.id), m.usage);
    }
    const tokens = [...last.values()].reduce((t: number, u) => t + usageTokens(u), 0);
    const firstModel = lines.find((l) => l.type === 'assistant')!.message as Obj;
    const cwd = lines.find((l) => typeof l.cwd === 'string')!.cwd;

    const s = await service.invoke('run.summary', { run_id: SESSION });
    expect(s.format).toBe('claude_code');
    expect(s.project).toBe(cwd);
    expect(s.model).toBe(firstModel.model);
    expect(s.title).toMatch(/^Work on bead spotter-4te/);
    expect(s.tokens).toBe(tokens);
    // A naive sum over lines counts a message once per content block: more.
    const naive = lines
      .filter((l) => l.type === 'assistant')
      .reduce((t, l) => t + usageTokens((l.message as Obj).usage), 0);
    expect(naive).toBeGreaterThan(tokens);
    // The state panel's projection counts them the same way, at the session's last event.
    const run = (await service.invoke('runs.list', {})).find((r) => r.run_id === SESSION)!;
    const at = await service.invoke('state.at', { run_id: SESSION, seq: run.head_seq });
    expect(at.state.budget.used.tokens).toBe(tokens);
  });

  it('a Codex rollout’s tokens in the state are its last cumulative total, as Codex counts them', async () => {
    const rel = '2025/12/10/rollout-2025-12-10T04-55-16-019b04ae-b1c6-7c72-a134-a4c2de66058c.jsonl';
    const src = path.join(FIX, 'codex/sessions', rel);
    mkdirSync(path.join(f.dir, 'codex'), { recursive: true });
    cpSync(src, path.join(f.dir, 'codex', path.basename(rel)));
    await service.openFolder(f.dir);
    const totals = readFileSync(src, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"token_count"'))
      .map(
        (l) => (JSON.parse(l) as Obj).payload as { info?: { total_token_usage?: { total_tokens?: number } } },
      )
      .map((p) => p.info?.total_token_usage?.total_tokens)
      .filter((t): t is number => typeof t === 'number');
    expect(totals.length).toBeGreaterThan(1);
    const id = path.basename(rel, '.jsonl');
    const run = (await service.invoke('runs.list', {})).find((r) => r.run_id === id)!;
    const at = await service.invoke('state.at', { run_id: id, seq: run.head_seq });
    expect(at.state.budget.used.tokens).toBe(totals.at(-1));
    // A sum of the token_count events would count each turn again in every later total.
    expect(totals.reduce((a, b) => a + b, 0)).toBeGreaterThan(totals.at(-1)!);
  });

  it('runs.details: several rows in one call, with the counts of the state at their heads', async () => {
    const runs = await service.invoke('runs.list', {});
    expect(runs.length).toBeGreaterThanOrEqual(2);
    const ids = runs.map((r) => r.run_id);
    const got = await service.invoke('runs.details', { run_ids: [...ids, 'no-such-run', ids[0]!] });
    // Every listed run once, in the order asked; a run that does not exist is left out.
    expect(got.map((d) => d.run_id)).toEqual(ids);
    for (const d of got) {
      const run = runs.find((r) => r.run_id === d.run_id)!;
      const at = await service.invoke('state.at', { run_id: d.run_id, seq: run.head_seq });
      expect(d.head_seq).toBe(run.head_seq);
      expect(d.calls).toBe(at.state.calls.total);
      expect(d.errors).toBe(at.state.errors.total);
      expect(d.tokens).toBe(at.state.budget.used.tokens);
      const { calls: _c, errors: _e, ...glance } = d;
      expect(glance).toEqual(await service.invoke('run.summary', { run_id: d.run_id }));
    }
    expect(got.find((d) => d.run_id === SESSION)!.calls).toBeGreaterThan(0);
    await expect(service.invoke('runs.details', { run_ids: [] })).rejects.toThrow(/run_ids/);
  });

  it('runs.list carries each run’s glance and a small run’s counts (its row whole with the list, no second request)', async () => {
    const runs = await service.invoke('runs.list', {});
    expect(runs.reduce((n, r) => n + r.head_seq, 0)).toBeLessThanOrEqual(LIST_COUNTS_EVENTS);
    const details = await service.invoke('runs.details', { run_ids: runs.map((r) => r.run_id) });
    for (const r of runs) {
      expect(r.glance, r.run_id).toEqual(details.find((d) => d.run_id === r.run_id));
      const { calls: _c, errors: _e, ...glance } = r.glance!;
      expect(glance).toEqual(await service.invoke('run.summary', { run_id: r.run_id }));
    }
    expect(runs.find((r) => r.run_id === SESSION)!.glance!.title).toMatch(/^Work on bead spotter-4te/);
    expect(runs.find((r) => r.run_id === SESSION)!.glance!.calls).toBeGreaterThan(0);
  });

  it('a list folds at most LIST_COUNTS_EVENTS events for counts; a larger run’s come with runs.details, then with the list', async () => {
    const g = freshFolder();
    const svc = new ProofloopService();
    try {
      const put = (id: string, n: number) => {
        mkdirSync(path.join(g.dir, id));
        writeFileSync(path.join(g.dir, id, 'events.jsonl'), seed000(id, n));
      };
      put('small-a', 4);
      put('big', LIST_COUNTS_EVENTS + 1);
      put('small-b', 6);
      await svc.openFolder(g.dir);
      const byId = async () => new Map((await svc.invoke('runs.list', {})).map((r) => [r.run_id, r]));
      const first = await byId();
      expect([...first.keys()].sort()).toEqual(['big', 'small-a', 'small-b']);
      for (const id of ['small-a', 'small-b'])
        expect(first.get(id)!.glance, id).toMatchObject({ calls: 0, errors: 0 });
      // Its glance (title, model) still comes with the list; only its counts wait for its row.
      const big = first.get('big')!.glance!;
      expect(big.title).toBe('g');
      expect(big.calls).toBeUndefined();
      const [d] = await svc.invoke('runs.details', { run_ids: ['big'] });
      expect(d).toMatchObject({ run_id: 'big', head_seq: LIST_COUNTS_EVENTS + 1, calls: 0, errors: 0 });
      // Counts already folded cost the list nothing: they come with it from then on.
      expect((await byId()).get('big')!.glance).toEqual(d);
    } finally {
      svc.closeFolder();
      g.cleanup();
    }
  });

  it('a list carries the glances of its LIST_GLANCES most recently active runs, the others none', async () => {
    const g = freshFolder();
    const svc = new ProofloopService();
    try {
      await svc.openFolder(g.dir);
      const n = LIST_GLANCES + 5;
      for (let i = 0; i < n; i++) {
        await svc.invoke('events.append', {
          run_id: `r${String(i).padStart(3, '0')}`,
          kind: 'run_started',
          payload: { task_id: 't', goal: `goal ${i}`, agent: { name: 'me' } },
        });
      }
      const first = await svc.invoke('runs.list', {});
      const glanced = first.filter((r) => r.glance).map((r) => r.run_id);
      expect(glanced).toHaveLength(LIST_GLANCES);
      // The runs made first are the least recently active: they wait for the next list.
      const oldestGlanced = first
        .filter((r) => r.glance)
        .reduce((t, r) => (r.last_at! < t ? r.last_at! : t), '~');
      for (const r of first.filter((x) => !x.glance))
        expect(r.last_at! <= oldestGlanced, r.run_id).toBe(true);
      expect(glanced).not.toContain('r000');
      // A run that grows is the most recently active: its glance comes with the next list.
      await svc.invoke('events.append', {
        run_id: 'r000',
        kind: 'event_annotated',
        payload: { target_seq: 1, note: 'n' },
      });
      const second = await svc.invoke('runs.list', {});
      expect(second.filter((r) => r.glance)).toHaveLength(LIST_GLANCES);
      expect(second.find((r) => r.run_id === 'r000')!.glance).toMatchObject({ title: 'goal 0', head_seq: 2 });
      // The others are read as their rows are shown.
      const rest = second.filter((r) => !r.glance).map((r) => r.run_id);
      const details = await svc.invoke('runs.details', { run_ids: rest });
      expect(details.map((d) => d.title)).toEqual(rest.map((id) => `goal ${Number(id.slice(1))}`));
    } finally {
      svc.closeFolder();
      g.cleanup();
    }
  });

  it('lists the findings of a file that made no run, with its text', async () => {
    mkdirSync(path.join(f.dir, 'deep'), { recursive: true });
    const line = `{"seq":1,"run_id":"deep","kind":"run_started","at":"2026-01-01T00:00:00Z","payload":${'['.repeat(5000)}${']'.repeat(5000)}}`;
    writeFileSync(path.join(f.dir, 'deep/events.jsonl'), line + '\n');
    await service.openFolder(f.dir);
    const r = await service.invoke('folder.findings', {});
    expect(r.total).toBe(1);
    expect(r.findings[0]).toMatchObject({
      code: 'invalid_event',
      file: 'deep/events.jsonl',
      line: 1,
      run_id: null,
    });
    expect(line.startsWith(r.findings[0]!.excerpt!.slice(0, 100))).toBe(true);
    expect((await service.invoke('runs.list', {})).some((x) => x.run_id === 'deep')).toBe(false);
  });
});
