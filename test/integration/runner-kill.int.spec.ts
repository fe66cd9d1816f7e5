import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Ledger, verifyEvents } from '../../electron/ledger';
import { RunHost } from '../../electron/runner/host';
import { mulberry32 } from '../../shared/prng';
import { freshFolder, repoRoot, runTs } from './helpers/tmp';

const TASKS = path.join(repoRoot, 'tasks');
const cleanups: (() => void)[] = [];
afterAll(() => cleanups.forEach((c) => c()));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts a CLI run and SIGKILLs it once its mirror holds `killAfter` events. */
async function killedRun(folder: string, task: string, variant: string, seed: number, killAfter: number) {
  const { child, done } = runTs(
    'electron/cli/main.ts',
    ['--folder', folder, '--json', 'run', task, '--variant', variant, '--seed', String(seed)],
    {
      env: { PROOFLOOP_CLI_ENTRY: '1' },
    },
  );
  const deadline = Date.now() + 20_000;
  let killed = false;
  while (Date.now() < deadline) {
    const dirs = existsSync(folder) ? readdirSync(folder).filter((n) => !n.startsWith('.')) : [];
    const mirror = dirs[0] ? path.join(folder, dirs[0], 'events.jsonl') : null;
    const lines = mirror && existsSync(mirror) ? readFileSync(mirror, 'utf8').split('\n').length - 1 : 0;
    if (lines >= killAfter) {
      killed = child.kill('SIGKILL');
      break;
    }
    if (child.exitCode !== null) break;
    await sleep(5);
  }
  await done;
  return killed;
}

describe('SIGKILL at random points', () => {
  it('leaves ledgers that verify, and resume completes each of 20 runs', async () => {
    const rand = mulberry32(20261129);
    const variants = ['careful', 'hasty', 'leaky'];
    const tasks = ['fix-discount', 'fix-median', 'fix-slugify', 'fix-pagination'];
    const plan = Array.from({ length: 20 }, (_, i) => ({
      task: tasks[i % tasks.length]!,
      variant: variants[Math.floor(rand() * variants.length)]!,
      seed: 1 + Math.floor(rand() * 1000),
      killAfter: 1 + Math.floor(rand() * 26),
    }));
    let killedCount = 0;
    // Two at a time: the machine has two cores.
    const outcomes: string[] = [];
    for (let i = 0; i < plan.length; i += 2) {
      await Promise.all(
        plan.slice(i, i + 2).map(async (p) => {
          const f = freshFolder();
          cleanups.push(f.cleanup);
          const killed = await killedRun(f.dir, p.task, p.variant, p.seed, p.killAfter);
          if (killed) killedCount += 1;
          const ledger = Ledger.open(f.dir);
          try {
            const run = ledger.runs()[0]!;
            const report = verifyEvents(run.run_id, ledger.iterate(run.run_id), {
              expectedHead: { seq: run.head_seq, hash: run.head_hash },
            });
            expect(report.findings, JSON.stringify(p)).toEqual([]);
            const last = ledger.event(run.run_id, run.head_seq);
            if (last?.kind !== 'run_completed') {
              const r = await new RunHost(ledger, { tasksDir: TASKS }).resume(run.run_id);
              const end = await r.done;
              expect(end, JSON.stringify(p)).toMatchObject({ status: 'completed', outcome: 'passed' });
              const after = ledger.run(run.run_id)!;
              const again = verifyEvents(run.run_id, ledger.iterate(run.run_id), {
                expectedHead: { seq: after.head_seq, hash: after.head_hash },
              });
              expect(again.ok).toBe(true);
              expect(ledger.read(run.run_id, { kinds: ['run_resumed'] })).toHaveLength(1);
            }
            outcomes.push(ledger.event(run.run_id, ledger.run(run.run_id)!.head_seq)!.kind);
          } finally {
            ledger.close();
          }
        }),
      );
    }
    expect(outcomes).toHaveLength(20);
    expect(outcomes.every((k) => k === 'run_completed')).toBe(true);
    expect(killedCount).toBeGreaterThanOrEqual(15);
  }, 120_000);
});
