import { describe, expect, it } from 'vitest';
import { Ledger } from '../../electron/ledger';
import { clusterForFile } from './helpers/pg-cluster';
import { cli, homeForFile, perTest } from './helpers/tmp';
import { writeSessionWithMovedValue } from './helpers/moved-value';

/** `proofloop push/pull` and the read commands on `--ledger postgres://…`, as a user runs them. */
const pgc = clusterForFile();
const test = pgc.reason ? it.skip : it;
const { folder } = perTest();
homeForFile('pl-team-cli-');

function localRun(dir: string, runId: string, goal: string): string {
  const l = Ledger.open(dir);
  try {
    const w = l.writer(runId);
    w.appendBatch([
      {
        kind: 'run_started',
        payload: { task_id: 'fix-add', goal, agent: { name: 'sim', variant: 'good', seed: 1 } },
      },
      {
        kind: 'model_proposed',
        payload: { call_id: 'c1', tool: 'read_file', args: { path: 'a.py' }, tokens: 5 },
      },
      { kind: 'model_responded', payload: { content: 'done', tokens: 2 } },
    ]);
    w.close();
    return l.run(runId)!.head_hash;
  } finally {
    l.close();
  }
}

describe('team ledger on the command line', { timeout: 180_000 }, () => {
  test('push copies a run with its digests, twice is a no-op, a differing chain is refused by name; pull brings it back; runs/events/verify/state read the server', async () => {
    const url = await pgc.db();
    const a = folder();
    const head = localRun(a, 'r1', 'add two numbers');

    const p1 = await cli(['--folder', a, 'push', 'r1', '--to', url]);
    expect(p1.stderr).toBe('');
    expect(p1.stdout).toMatch(
      /^copied r1: 3 events to postgres:\/\/postgres@127\.0\.0\.1:\d+\/\w+, head seq 3/,
    );
    const p2 = await cli(['--folder', a, 'push', 'r1', '--to', url]);
    expect(p2.stdout).toMatch(/^unchanged r1: already at/);

    const v = await cli(['--ledger', url, '--json', 'verify', 'r1']);
    expect(v.code).toBe(0);
    expect(JSON.parse(v.stdout)).toMatchObject({
      ok: true,
      runs: [{ run_id: 'r1', events: 3, head_seq: 3, head_hash: head }],
    });
    const runs = await cli(['runs'], { PROOFLOOP_LEDGER: url });
    expect(runs.stdout).toMatch(/r1\s+running\s+executed\s+fix-add\s+good\s+3\s+chained/);
    const ev = await cli(['--ledger', url, '--json', 'events', 'r1', '--from', '2']);
    expect(
      ev.stdout
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { seq: number }).seq),
    ).toEqual([2, 3]);
    const st = await cli(['--ledger', url, '--json', 'state', 'r1', '--at', '2']);
    expect(JSON.parse(st.stdout)).toMatchObject({ seq: 2, state: { seq: 2, task: { task_id: 'fix-add' } } });

    // Another folder's run of the same id, with another chain.
    const b = folder();
    localRun(b, 'r1', 'another goal');
    const refused = await cli(['--folder', b, 'push', 'r1', '--to', url]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /run r1 differs from the run r1 at postgres:\/\/.*: at seq 3 its hash is [0-9a-f]{16}… there and [0-9a-f]{16}… here; refused/,
    );

    const c = folder();
    const pulled = await cli(['--folder', c, 'pull', 'r1', '--from', url]);
    expect(pulled.stdout).toMatch(/^copied r1: 3 events to .*, head seq 3/);
    const vc = await cli(['--folder', c, '--json', 'verify', 'r1']);
    expect(JSON.parse(vc.stdout)).toMatchObject({ ok: true, runs: [{ head_seq: 3, head_hash: head }] });
  });

  test('push moves a run’s artifacts: a value its import moved out of an event reads whole from the team ledger, and after pull', async () => {
    const url = await pgc.db();
    const a = folder();
    // The real session, one tool output made larger than an event keeps (64 KB).
    const big = writeSessionWithMovedValue(a);
    expect((await cli(['--folder', a, 'open', a])).code).toBe(0);
    const events = await cli(['--folder', a, '--json', 'events', 'session']);
    const moved = events.stdout
      .trim()
      .split('\n')
      .flatMap(
        (l) => (JSON.parse(l) as { source?: { artifacts?: { digest: string }[] } }).source?.artifacts ?? [],
      );
    expect(moved).toHaveLength(1);
    const digest = moved[0]!.digest;

    const pushed = await cli(['--folder', a, 'push', 'session', '--to', url]);
    expect(pushed.stderr).toBe('');
    expect(pushed.stdout).toMatch(/^copied session: \d+ events to .*\(1 artifact copied\)$/m);
    const there = await cli(['--ledger', url, 'artifact', 'session', digest]);
    expect(there.code).toBe(0);
    expect(there.stdout).toBe(big);
    // Another id reads nothing of it.
    const other = await cli(['--ledger', url, 'artifact', 'r1', digest]);
    expect(other.code).not.toBe(0);

    const c = folder();
    const pulled = await cli(['--folder', c, 'pull', 'session', '--from', url]);
    expect(pulled.stdout).toMatch(/\(1 artifact copied\)$/m);
    expect((await cli(['--folder', c, 'artifact', 'session', digest])).stdout).toBe(big);
  });

  test('an unreachable server is an error naming it, without its password', async () => {
    const r = await cli(['--ledger', 'postgres://me:s3cret@127.0.0.1:1/none', 'runs']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/cannot reach the ledger at postgres:\/\/me:\*\*\*@127\.0\.0\.1:1\/none/);
    expect(r.stderr).not.toContain('s3cret');
  });
});
