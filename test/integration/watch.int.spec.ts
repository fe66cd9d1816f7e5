import { afterEach, describe, expect, it } from 'vitest';
import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { ProofloopService } from '../../electron/service/service';
import { cli, freshFolder } from './helpers/tmp';

const line = (seq: number) =>
  JSON.stringify({
    seq,
    run_id: 'agent-x',
    kind: seq === 1 ? 'run_started' : 'context_updated',
    at: `2026-11-29T08:00:${String(seq).padStart(2, '0')}.000Z`,
    payload: seq === 1 ? { task_id: 't', goal: 'g', agent: { name: 'other' } } : { op: 'append', n: seq },
  }) + '\n';

/** Resolves with the first push that matches, or rejects after `ms`. */
function nextPush(
  service: ProofloopService,
  match: (channel: string, payload: unknown) => boolean,
  ms = 15_000,
) {
  return new Promise<unknown>((resolve, reject) => {
    const timer = setTimeout(() => (off(), reject(new Error('no matching push'))), ms);
    const off = service.onPush((channel, payload) => {
      if (!match(channel, payload)) return;
      clearTimeout(timer);
      off();
      resolve(payload);
    });
  });
}

describe('a live folder', () => {
  let cleanup: (() => void)[] = [];
  afterEach(() => {
    cleanup.forEach((c) => c());
    cleanup = [];
  });

  it('imports JSONL that another agent writes, as it grows, and hears other processes append', async () => {
    const f = freshFolder();
    const service = new ProofloopService();
    cleanup.push(() => service.closeFolder(), f.cleanup);
    await service.openFolder(f.dir);
    service.keepLive();

    // An agent starts writing its own events.jsonl into the folder.
    const file = path.join(f.dir, 'agent-x', 'events.jsonl');
    mkdirSync(path.dirname(file));
    let pushed = nextPush(
      service,
      (c, p) => c === 'events.appended' && (p as { run_id: string }).run_id === 'agent-x',
    );
    appendFileSync(file, line(1) + line(2));
    expect(await pushed).toMatchObject({ from_seq: 1, to_seq: 2 });

    // It goes on: only the new lines are imported.
    pushed = nextPush(service, (c, p) => c === 'events.appended' && (p as { to_seq: number }).to_seq === 3);
    appendFileSync(file, line(3));
    expect(await pushed).toMatchObject({ run_id: 'agent-x', from_seq: 3, to_seq: 3 });
    expect((await service.invoke('run.get', { run_id: 'agent-x' })).event_count).toBe(3);

    // Another process appends to the same ledger: the app hears it too.
    pushed = nextPush(
      service,
      (c, p) => c === 'events.appended' && (p as { run_id: string }).run_id === 'from-cli',
    );
    const r = await cli([
      '--folder',
      f.dir,
      'append',
      'from-cli',
      'run_started',
      JSON.stringify({ task_id: 't', goal: 'g', agent: { name: 'cli' } }),
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(await pushed).toMatchObject({ from_seq: 1, to_seq: 1 });
  });
});

describe('runs that appear in a live folder, each in a new directory', () => {
  it('are each imported, though the watcher does not see a file made in a directory it has just seen appear', async () => {
    const f = freshFolder();
    const service = new ProofloopService();
    await service.openFolder(f.dir);
    service.keepLive();
    try {
      // chokidar reads a new directory, then watches it: a file made between the two is never
      // reported (paulmillr/chokidar#1422). An agent makes its run's folder and file back to back,
      // so now and then one lands in that gap. One at a time: any later import would find it.
      const missed: string[] = [];
      for (let i = 0; i < 30; i++) {
        const runId = `run-${i}`;
        const file = path.join(f.dir, runId, 'events.jsonl');
        const listed = nextPush(
          service,
          (c, p) => c === 'events.appended' && (p as { run_id: string }).run_id === runId,
          5_000,
        ).then(
          () => true,
          () => false,
        );
        mkdirSync(path.dirname(file));
        if (i % 3 > 0) await new Promise((r) => setTimeout(r, i % 3));
        appendFileSync(file, line(1).replaceAll('agent-x', runId));
        if (!(await listed)) missed.push(runId);
      }
      expect(missed).toEqual([]);
    } finally {
      await service.closeFolder();
      f.cleanup();
    }
  });
});
