import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Ledger } from '../../electron/ledger';
import { freshFolder } from './helpers/tmp';
import { Worker } from 'node:worker_threads';
import {
  Activity,
  attachSnapshotter,
  buildSnapshotsInBackground,
  changesAt,
  diffRuns,
  diffRunsParallel,
  diffRunsReference,
  encodeState,
  maintainSnapshots,
  SNAPSHOT_EVERY,
  stateAt,
} from '../../electron/state';
import { QUIET_MS } from '../../electron/state/activity';
import type { NewEvent } from '../../shared/protocol';
import { evolve, initialState, PROJECTION_VERSION } from '../../shared/state';

/**
 * A small agent loop with denials, errors, verdicts, an unknown kind and an event after the end (an
 * annotation: the ledger refuses any other kind there).
 */
function items(n: number, salt = ''): NewEvent[] {
  const out: NewEvent[] = [
    {
      kind: 'run_started',
      payload: {
        task_id: 't',
        goal: 'fix',
        agent: { name: 'sim', variant: 'careful' },
        budget: { steps: 50 },
      },
    },
  ];
  let c = 0;
  while (out.length < n) {
    const id = `c${++c}`;
    out.push({
      kind: 'model_proposed',
      payload: { call_id: id, tool: 'read_file', args: { path: `f${c % 7}.ts` }, tokens: 10 },
    });
    if (c % 9 === 0)
      out.push({ kind: 'action_denied', payload: { call_id: id, rule: 'no', reason: 'outside' } });
    else {
      out.push({ kind: 'action_allowed', payload: { call_id: id, rule: 'yes' } });
      out.push({ kind: 'tool_invoked', payload: { call_id: id, tool: 'read_file', args: {} } });
      out.push({
        kind: 'tool_returned',
        payload: {
          call_id: id,
          status: c % 5 ? 'ok' : 'error',
          duration_ms: c % 13,
          excerpt: `r${c}${salt}`,
        },
      });
    }
    if (c % 11 === 0) out.push({ kind: 'file_changed', payload: { path: `f${c % 7}.ts`, patch: `p${c}` } });
    if (c % 17 === 0) out.push({ kind: 'judge_verdict', payload: { passed: c % 2 === 0 } });
    if (c % 23 === 0) out.push({ kind: 'something_new', payload: { x: c } });
  }
  out.length = n - 3;
  out.push({ kind: 'tool_returned', payload: { call_id: 'ghost', status: 'ok', duration_ms: 1 } });
  out.push({ kind: 'run_completed', payload: { outcome: 'passed' } });
  out.push({ kind: 'event_annotated', payload: { target_seq: 1, note: 'after the end' } });
  return out;
}

let folder: string;
let ledger: Ledger;

beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'pl-'));
  ledger = Ledger.open(folder);
});
afterEach(() => {
  ledger.close();
  rmSync(folder, { recursive: true, force: true });
});

function write(runId: string, evs: NewEvent[], batch = 37): void {
  const w = ledger.writer(runId);
  for (let i = 0; i < evs.length; i += batch) w.appendBatch(evs.slice(i, i + batch));
  w.close();
}

const snapshotCount = () =>
  (ledger.db.prepare('SELECT COUNT(*) AS n FROM snapshots').get() as { n: number }).n;
const json = (x: unknown) => JSON.stringify(x);

describe('snapshots', () => {
  it('state via snapshots equals the full fold at every seq; written as the run grows', () => {
    const every = 25;
    const detach = attachSnapshotter(ledger, { every });
    write('r1', items(400));
    detach();
    expect(snapshotCount()).toBe(Math.floor(400 / every));
    let folded = initialState('r1');
    for (const e of ledger.iterate('r1')) {
      folded = evolve(folded, e);
      const snap = stateAt(ledger, 'r1', e.seq, { every });
      expect(json(snap.state)).toBe(json(folded));
      expect(snap.folded).toBeLessThan(every);
      if (e.seq >= every) expect(snap.via).toBe('snapshot');
    }
    const full = stateAt(ledger, 'r1', 400, { full: true });
    expect(full).toMatchObject({ via: 'fold', folded: 400 });
    expect(json(full.state)).toBe(json(folded));
    expect(folded.notes.items).toContainEqual(expect.objectContaining({ code: 'unknown_call' }));
    expect(folded.counts.something_new).toBeGreaterThan(0);
  });

  it('deleting snapshots changes no answer (and they are written again on the way)', () => {
    write('r1', items(300));
    maintainSnapshots(ledger, 'r1', { every: 20 });
    expect(snapshotCount()).toBe(15);
    const seqs = [0, 1, 19, 20, 21, 150, 299, 300];
    const before = seqs.map((s) => json(stateAt(ledger, 'r1', s, { every: 20 }).state));
    const changesBefore = json(changesAt(ledger, 'r1', 150, { every: 20 }));
    ledger.db.exec('DELETE FROM snapshots');
    const after = seqs.map((s) => stateAt(ledger, 'r1', s, { every: 20, write: false }));
    expect(after.map((a) => json(a.state))).toEqual(before);
    expect(after[5]).toMatchObject({ via: 'fold', folded: 150 });
    expect(json(changesAt(ledger, 'r1', 150, { every: 20, write: false }))).toBe(changesBefore);
    expect(snapshotCount()).toBe(0);
    // A fold stores the snapshots it passes.
    expect(json(stateAt(ledger, 'r1', 300, { every: 20 }).state)).toBe(before[7]);
    expect(snapshotCount()).toBe(15);
  });

  it('a changed PROJECTION_VERSION ignores old snapshots, and maintenance deletes them', () => {
    write('r1', items(120));
    // A snapshot of another projection version that would give a wrong answer if it were read.
    const bogus = { ...initialState('r1'), seq: 100, projection: 'state-0', status: 'failed' };
    ledger.db
      .prepare('INSERT INTO snapshots (run_id, seq, version, state) VALUES (?, ?, ?, ?)')
      .run('r1', 100, 'state-0', JSON.stringify(bogus));
    // And one stamped with our version in the column but broken inside: skipped too.
    ledger.db
      .prepare('INSERT INTO snapshots (run_id, seq, version, state) VALUES (?, ?, ?, ?)')
      .run('r1', 110, PROJECTION_VERSION, 'bm90IGRlZmxhdGU=');
    const r = stateAt(ledger, 'r1', 115, { every: 1000 });
    expect(r.via).toBe('fold');
    expect(r.state.status).toBe('running');
    expect(r.state.projection).toBe(PROJECTION_VERSION);
    // Snapshots written under another version are ignored by this one.
    maintainSnapshots(ledger, 'r1', { every: 10, version: 'state-next' });
    expect(stateAt(ledger, 'r1', 115, { every: 10, write: false }).via).toBe('fold');
    maintainSnapshots(ledger, 'r1', { every: 10 });
    const versions = ledger.db.prepare('SELECT DISTINCT version FROM snapshots').pluck().all();
    expect(versions).toEqual([PROJECTION_VERSION]);
    expect(stateAt(ledger, 'r1', 115, { every: 10 }).via).toBe('snapshot');
  });

  it('stores snapshots compressed, and reads plain JSON ones too', () => {
    write('r1', items(60));
    const s = stateAt(ledger, 'r1', 50, { full: true }).state;
    expect(encodeState(s)).toMatch(/^[A-Za-z0-9+/]+=*$/);
    ledger.db
      .prepare('INSERT INTO snapshots (run_id, seq, version, state) VALUES (?, ?, ?, ?)')
      .run('r1', 50, PROJECTION_VERSION, JSON.stringify(s));
    const r = stateAt(ledger, 'r1', 55, { every: 1000 });
    expect(r).toMatchObject({ via: 'snapshot', from_seq: 50, folded: 5 });
    expect(json(r.state)).toBe(json(stateAt(ledger, 'r1', 55, { full: true }).state));
  });

  it('changes at a seq are the difference of the states at seq-1 and seq', () => {
    write('r1', items(40));
    const c = changesAt(ledger, 'r1', 3);
    expect(c.kind).toBe('action_allowed');
    expect(c.changes.map((x) => x.path)).toEqual(
      expect.arrayContaining(['seq', 'calls.items[call_id=c1].status', 'calls.items[call_id=c1].decision']),
    );
    expect(() => stateAt(ledger, 'r1', 41)).toThrow(/has 40 events/);
    expect(() => stateAt(ledger, 'nope', 1)).toThrow(/no run/);
  });

  it('diffs two runs of the ledger', () => {
    write('left-run-1', items(200));
    write(
      'right-run-2',
      items(200, '!').map((e, i) => (i < 100 ? items(200)[i]! : e)),
    );
    const d = diffRuns(ledger, 'left-run-1', 'right-run-2');
    expect(d.counts.same + d.counts.changed + d.counts.only_left).toBe(200);
    expect(d.first_divergence?.left_kind).toBe('tool_returned');
    expect(d.first_divergence!.left_seq!).toBeGreaterThan(100);
    const same = diffRuns(ledger, 'left-run-1', 'left-run-1');
    expect(same.identical).toBe(true);
  });

  it('gives the same diff with part of both runs prepared in a worker thread', async () => {
    write('left-run-1', items(300));
    write(
      'right-run-2',
      items(300, '!').map((e, i) => (i % 7 ? items(300)[i]! : e)),
    );
    // Any size of run goes to the worker here; its share and a share of nothing or everything.
    for (const workerShare of [0.5, 0.3, 0, 1]) {
      const parallel = await diffRunsParallel(
        ledger,
        'left-run-1',
        'right-run-2',
        {},
        { minEvents: 0, workerShare, evenWhenBusy: true },
      );
      expect(parallel).toEqual(diffRuns(ledger, 'left-run-1', 'right-run-2'));
      expect(parallel.counts.changed).toBeGreaterThan(0);
    }
  });

  it('reads stored payload text the fast way with the same result as parsing every event', () => {
    write('left-run-1', items(300));
    write(
      'right-run-2',
      items(300, '!').map((e, i) => (i % 5 ? items(300)[i]! : e)),
    );
    const fast = diffRuns(ledger, 'left-run-1', 'right-run-2');
    expect(fast).toEqual(diffRunsReference(ledger, 'left-run-1', 'right-run-2'));
    expect(fast.counts.changed + fast.counts.only_left + fast.counts.only_right).toBeGreaterThan(0);
    expect(diffRuns(ledger, 'left-run-1', 'left-run-1')).toEqual(
      diffRunsReference(ledger, 'left-run-1', 'left-run-1'),
    );
  });
});

describe('recent states', () => {
  it('stepping starts from a state computed moments ago and answers as the full fold does', () => {
    const f = freshFolder();
    const ledger = Ledger.open(f.dir);
    const w = ledger.writer('step');
    w.append('run_started', { task_id: 't', goal: 'g', agent: { name: 'sim' } });
    for (let i = 1; i < 1200; i++) {
      w.append('model_proposed', { call_id: `c${i}`, tool: 'read_file', args: { path: `f${i % 7}` } });
    }
    w.close();
    ledger.db.prepare('DELETE FROM snapshots').run();
    const first = stateAt(ledger, 'step', 700, { recent: true, write: false });
    expect(first.via).toBe('fold');
    for (const seq of [701, 702, 705, 704]) {
      const r = stateAt(ledger, 'step', seq, { recent: true, write: false });
      expect(r.via).toBe('recent');
      expect(r.folded).toBeLessThanOrEqual(3);
      expect(r.state).toEqual(stateAt(ledger, 'step', seq, { full: true }).state);
    }
    ledger.close();
    f.cleanup();
  });
});

describe('snapshots built in the background', () => {
  it('wait while the page is being used, and are built once it is quiet', async () => {
    write('bg', items(3 * SNAPSHOT_EVERY + 20));
    ledger.db.prepare('DELETE FROM snapshots').run();
    let busy = true;
    const job = buildSnapshotsInBackground(ledger, { busy: () => busy });
    await new Promise((r) => setTimeout(r, 300));
    expect(snapshotCount(), 'nothing built while busy').toBe(0);
    busy = false;
    expect(await job.done).toBeGreaterThan(0);
    expect(snapshotCount()).toBe(3);
    // What they hold is what a full fold gives.
    expect(json(stateAt(ledger, 'bg', 2 * SNAPSHOT_EVERY).state)).toBe(
      json(stateAt(ledger, 'bg', 2 * SNAPSHOT_EVERY, { full: true }).state),
    );
  });

  it('a cancelled job waiting for a quiet page ends', async () => {
    write('bg', items(3 * SNAPSHOT_EVERY + 20));
    ledger.db.prepare('DELETE FROM snapshots').run();
    const job = buildSnapshotsInBackground(ledger, { busy: () => true });
    await new Promise((r) => setTimeout(r, 120));
    job.cancel();
    expect(await job.done).toBe(0);
    expect(snapshotCount()).toBe(0);
  });

  it("the page's activity still counts in a process that has run for a month", () => {
    // Milliseconds since the cell's base pass 2^31 after 24.8 days: a 32-bit cell wrapped there.
    const month = Activity.of({ buffer: new SharedArrayBuffer(8), base: Date.now() - 30 * 86_400_000 });
    month.touch();
    expect(month.busy()).toBe(true);
  });

  it("the page's activity is seen by another thread, as it happens", async () => {
    const activity = Activity.create();
    expect(activity.busy(), 'never touched').toBe(false);
    const worker = new Worker(
      `const { workerData, parentPort } = require('node:worker_threads');
       const cell = new BigInt64Array(workerData.buffer);
       parentPort.on('message', () => parentPort.postMessage(Date.now() - workerData.base - Number(Atomics.load(cell, 0))));`,
      { eval: true, workerData: activity.shared },
    );
    try {
      const ask = () => new Promise<number>((r) => (worker.once('message', r), worker.postMessage('?')));
      expect(await ask(), 'untouched: long ago').toBeGreaterThanOrEqual(QUIET_MS);
      activity.touch();
      expect(activity.busy()).toBe(true);
      expect(await ask(), 'touched after the worker started: shared, not copied').toBeLessThan(QUIET_MS);
      await new Promise((r) => setTimeout(r, QUIET_MS + 50));
      expect(activity.busy()).toBe(false);
      expect(Activity.of(activity.shared).busy()).toBe(false);
    } finally {
      await worker.terminate();
    }
  });
});
