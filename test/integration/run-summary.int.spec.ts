import { afterAll, describe, expect, it } from 'vitest';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ProofloopService } from '../../electron/service/service';
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
