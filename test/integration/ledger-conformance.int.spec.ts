import { describe, expect, it } from 'vitest';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Ledger } from '../../electron/ledger';
import { SqliteEngine } from '../../electron/ledger/sqlite-engine';
import { PostgresEngine } from '../../electron/ledger/postgres/engine';
import { portableRun, type LedgerEngine } from '../../electron/ledger/engine';
import { pushRuns } from '../../electron/ledger/push';
import { folderArtifactDigests } from '../../electron/ledger/artifacts';
import { readArtifact } from '../../electron/ledger/artifact-store';
import { ingestFile } from '../../electron/ingest';
import { readFileSync } from 'node:fs';
import { RunHost } from '../../electron/runner/host';
import { startOtlpReceiver } from '../../electron/otlp';
import { importIntoEngine } from '../../electron/ingest/team';
import { ZERO_HASH } from '../../shared/protocol';
import { ProofloopError } from '../../shared/result';
import { clusterForFile } from './helpers/pg-cluster';
import { homeForFile, perTest, repoRoot } from './helpers/tmp';
import { chained, chainedDeep } from './helpers/trust-cases';
import { writeSessionWithMovedValue } from './helpers/moved-value';

/**
 * One suite, both engines: what the ledger promises (electron/ledger/engine.ts) holds for the
 * embedded SQLite ledger and for PostgreSQL alike. Without PostgreSQL the second half skips, saying why.
 */
const { folder, later } = perTest();
homeForFile('pl-conf-');
const pg = clusterForFile();

const CLAUDE_SESSION =
  'test/fixtures/claude-code/projects/-home-marco-projects-spotter-worktrees-spotter-4te/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl';

type Make = () => Promise<LedgerEngine>;
const engines: [string, Make, string | null][] = [
  ['sqlite', () => Promise.resolve(new SqliteEngine(folder())), null],
  ['postgres', async () => PostgresEngine.connect(await pg.db()), pg.reason],
];

async function open(make: Make): Promise<LedgerEngine> {
  const e = await make();
  later(() => void e.close());
  return e;
}

const started = (task = 't1') => ({
  kind: 'run_started',
  payload: { task_id: task, goal: 'fix it', agent: { name: 'sim', variant: 'good', seed: 1 } },
  at: '2026-12-01T00:00:00.000Z',
});
const step = (i: number) => ({
  kind: 'model_proposed',
  payload: { call_id: `c${i}`, tool: 'read_file', args: { path: `f${i}.py` }, tokens: 10 + i },
  at: `2026-12-01T00:00:${String(i % 60).padStart(2, '0')}.000Z`,
});

describe.each(engines)('ledger engine: %s', (name, make, skip) => {
  const test = skip ? it.skip : it;

  test('appends chain from seq 1 without a gap, read back by range, tail and seq', async () => {
    const e = await open(make);
    const w = await e.writer('r1', { create: {} });
    const a = await w.appendBatch([started(), ...Array.from({ length: 9 }, (_, i) => step(i + 1))]);
    const b = await w.append('model_responded', { content: 'done', tokens: 3 });
    await w.close();
    expect(a.map((x) => x.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(b.seq).toBe(11);
    expect(a[0]!.prev).toBe(ZERO_HASH);
    expect(b.prev).toBe(a[9]!.hash);
    const all = await e.read('r1');
    expect(all.map((x) => x.hash)).toEqual([...a, b].map((x) => x.hash));
    expect(all[3]!.payload).toEqual(step(3).payload);
    expect((await e.tail('r1', 8)).map((x) => x.seq)).toEqual([9, 10, 11]);
    expect((await e.read('r1', { from: 2, to: 4 })).map((x) => x.seq)).toEqual([2, 3, 4]);
    expect((await e.read('r1', { kinds: ['run_started', 'model_responded'] })).map((x) => x.seq)).toEqual([
      1, 11,
    ]);
    const e5 = await e.event('r1', 5);
    expect(e5?.prev).toBe(a[3]!.hash);
    const run = await e.run('r1');
    expect(run).toMatchObject({
      head_seq: 11,
      head_hash: b.hash,
      event_count: 11,
      task_id: 't1',
      status: 'running',
    });
    expect(run?.writer).toBeNull();
    const v = await e.verify('r1');
    expect(v).toMatchObject({ ok: true, events: 11, head_seq: 11, head_hash: b.hash });
  });

  test('a second writer of a run is refused by name; after close another may write on', async () => {
    const e = await open(make);
    const w1 = await e.writer('r2', { create: {}, label: 'first' });
    await w1.append('run_started', started().payload);
    await expect(e.writer('r2', { label: 'second' })).rejects.toThrow(
      /run r2 already has a writer: pid \d+ on .*first/,
    );
    expect((await e.run('r2'))?.writer?.label).toBe('first');
    await w1.close();
    const w2 = await e.writer('r2');
    expect((await w2.append('model_responded', { content: 'x' })).seq).toBe(2);
    await w2.close();
    expect((await e.verify('r2')).ok).toBe(true);
  });

  test('bad items fail the whole batch; a run takes nothing after run_completed but annotations', async () => {
    const e = await open(make);
    const w = await e.writer('r3', { create: {} });
    await w.appendBatch([started()]);
    await expect(w.appendBatch([step(1), { kind: 'Bad Kind', payload: {} }])).rejects.toThrow(/snake_case/);
    await expect(w.append('model_proposed', { call_id: 'c1' })).rejects.toThrow(ProofloopError);
    expect((await e.run('r3'))?.head_seq).toBe(1);
    await w.append('run_completed', { outcome: 'passed' });
    await expect(w.append('model_responded', { content: 'late' })).rejects.toThrow(/has completed/);
    expect((await w.append('event_annotated', { target_seq: 1, note: 'ok' })).seq).toBe(3);
    await w.close();
    expect(await e.run('r3')).toMatchObject({ status: 'completed', head_seq: 3 });
  });

  test('the bytes hashed are the bytes stored: key order, \\u0000, unicode and big numbers verify', async () => {
    const e = await open(make);
    const w = await e.writer('r4', { create: {} });
    const odd = {
      z: 1,
      a: 'nul\u0000here',
      '10': 'ten',
      '9': 'nine',
      é: '✓ 𝄞',
      n: 1e21,
      f: 0.1,
      neg: -5,
      deep: { b: [1, { y: 2, x: 1 }] },
    };
    const [ev] = await w.appendBatch([
      { kind: 'custom_thing', payload: odd, at: '2026-12-01T00:00:00.000Z' },
    ]);
    await w.close();
    const back = await e.event('r4', 1);
    expect(back?.payload).toEqual(odd);
    expect(back?.hash).toBe(ev!.hash);
    expect((await e.verify('r4')).ok).toBe(true);
    // The same item appended to the embedded ledger chains to the same hash: one protocol, two engines.
    const ref = Ledger.open(folder());
    later(() => ref.close());
    const rw = ref.writer('r4');
    const [same] = rw.appendBatch([{ kind: 'custom_thing', payload: odd, at: '2026-12-01T00:00:00.000Z' }]);
    rw.close();
    expect(same!.hash).toBe(ev!.hash);
  });

  test('credentials are redacted before hashing, as the embedded ledger does', async () => {
    const e = await open(make);
    const w = await e.writer('r5', { create: {} });
    const [ev] = await w.appendBatch([
      {
        kind: 'model_responded',
        payload: { content: 'key sk-ant-api03-' + 'a'.repeat(90) },
        at: '2026-12-01T00:00:00.000Z',
      },
    ]);
    await w.close();
    const stored = await e.event('r5', 1);
    expect(JSON.stringify(stored?.payload)).not.toContain('aaaaaaaaaa');
    expect(stored?.payload).toEqual(ev!.payload);
    expect((await e.verify('r5')).ok).toBe(true);
  });

  test('the cross-run feed gives every event of every run exactly once, page by page', async () => {
    const e = await open(make);
    const runs = ['fa', 'fb', 'fc'];
    const writers = await Promise.all(runs.map((r) => e.writer(r, { create: {} })));
    let cursor = '';
    const seen: string[] = [];
    const drain = async () => {
      for (;;) {
        const p = await e.feed(cursor, 7);
        for (const x of p.events) seen.push(`${x.run_id}/${x.seq}`);
        cursor = p.cursor;
        if (p.events.length === 0) break;
      }
    };
    for (let round = 0; round < 3; round++) {
      for (const w of writers) await w.appendBatch(Array.from({ length: 5 }, (_, i) => step(round * 5 + i)));
      await drain();
    }
    await Promise.all(writers.map((w) => w.close()));
    await drain();
    expect(seen.length).toBe(45);
    expect(new Set(seen).size).toBe(45);
    for (const r of runs)
      expect(seen.filter((s) => s.startsWith(`${r}/`)).map((s) => Number(s.split('/')[1]))).toEqual(
        Array.from({ length: 15 }, (_, i) => i + 1),
      );
  });

  test("the feed's end is where a reader of only what comes next starts", async () => {
    const e = await open(make);
    expect((await e.feed(await e.feedEnd())).events).toEqual([]);
    const w = await e.writer('fe', { create: {} });
    await w.appendBatch([started(), step(1)]);
    const end = await e.feedEnd();
    expect((await e.feed(end)).events).toEqual([]);
    await w.appendBatch([step(2), step(3)]);
    const w2 = await e.writer('fe2', { create: {} });
    await w2.appendBatch([started()]);
    await Promise.all([w.close(), w2.close()]);
    const next = await e.feed(end);
    expect(next.events.map((x) => `${x.run_id}/${x.seq}`).sort()).toEqual(['fe/3', 'fe/4', 'fe2/1']);
    expect((await e.feed(next.cursor)).events).toEqual([]);
  });

  test('state at a seq is the fold of the events up to it, from a snapshot or not', async () => {
    const e = await open(make);
    const w = await e.writer('r6', { create: {} });
    await w.appendBatch([started(), ...Array.from({ length: 700 }, (_, i) => step(i + 1))]);
    await w.close();
    const at650 = await e.stateAt('r6', 650);
    expect(at650.seq).toBe(650);
    expect(at650.state.seq).toBe(650);
    const again = await e.stateAt('r6', 650);
    expect(again.state).toEqual(at650.state);
    // The embedded ledger folds the same events to the same state.
    const ref = new SqliteEngine(folder());
    later(() => void ref.close());
    const rw = await ref.writer('r6', { create: {} });
    await rw.appendBatch([started(), ...Array.from({ length: 700 }, (_, i) => step(i + 1))]);
    await rw.close();
    expect((await ref.stateAt('r6', 650)).state).toEqual(at650.state);
    // A fold longer than one round trip's page (5,000 events on PostgreSQL), from no snapshot.
    const long = [started(), ...Array.from({ length: 5300 }, (_, i) => step(i + 1))];
    const lw = await e.writer('r6-long', { create: {} });
    await lw.appendBatch(long);
    await lw.close();
    const rl = await ref.writer('r6-long', { create: {} });
    await rl.appendBatch(long);
    await rl.close();
    const far = await e.stateAt('r6-long', 5250);
    expect(far.state.seq).toBe(5250);
    expect(far.state).toEqual((await ref.stateAt('r6-long', 5250)).state);
  });

  test('chained events put from elsewhere keep their hashes; one that does not continue the head is refused', async () => {
    const e = await open(make);
    const src = new SqliteEngine(folder());
    later(() => void src.close());
    const w = await src.writer('moved', { create: {} });
    await w.appendBatch([started(), step(1), step(2), step(3)]);
    await w.close();
    const run = (await src.run('moved'))!;
    const evs = await src.readChained('moved', 1, 100);
    await e.putChained(portableRun(run), evs.slice(0, 2));
    await expect(e.putChained(portableRun(run), evs.slice(3))).rejects.toThrow(/do not continue its head/);
    await e.putChained(portableRun(run), evs.slice(2));
    expect((await e.run('moved'))?.head_hash).toBe(run.head_hash);
    expect((await e.verify('moved')).ok).toBe(true);
    expect(await e.readChained('moved', 1, 100)).toEqual(evs);
  });

  test('imported runs (a real Claude Code session, a seed-004 log) move in with their digests and verify the same', async () => {
    // Imported through the ingest adapters into a runs folder, then pushed: the runs' own bytes.
    const dir = folder();
    mkdirSync(path.join(dir, 'seed'), { recursive: true });
    const seed = path.join(dir, 'seed', 'events.jsonl');
    copyFileSync(path.join(repoRoot, 'test/fixtures/seed004/data/events.jsonl'), seed);
    const session = path.join(dir, 'session.jsonl');
    copyFileSync(path.join(repoRoot, CLAUDE_SESSION), session);
    const local = Ledger.open(dir);
    later(() => local.close());
    await ingestFile(local, seed);
    await ingestFile(local, session);
    const runs = local.runs();
    expect(runs.length).toBeGreaterThan(0);
    const e = await open(make);
    const from = new SqliteEngine(local);
    const pushed = await pushRuns(
      from,
      e,
      runs.map((r) => r.run_id),
    );
    expect(pushed.every((p) => p.action === 'copied')).toBe(true);
    for (const r of runs) {
      const there = await e.verify(r.run_id);
      const here = await from.verify(r.run_id);
      expect(there).toMatchObject({ head_seq: here.head_seq, head_hash: here.head_hash, ok: here.ok });
      expect((await e.read(r.run_id)).map((x) => x.payload)).toEqual(
        local.read(r.run_id).map((x) => x.payload),
      );
    }
  });

  test("a run's findings and meta move with it: it verifies and reads the same on both ledgers, and again after pull", async () => {
    // An imported chained file whose line 2 nests too deep to check: the run stores seqs 1, 3 and 4,
    // records an invalid_event finding, and states line 2's chain fields (meta.stated_links), by
    // which seq 3 links on. Without its findings and meta a copy would verify otherwise.
    const dir = folder();
    mkdirSync(path.join(dir, 'deep'), { recursive: true });
    writeFileSync(path.join(dir, 'deep', 'events.jsonl'), chainedDeep('deep0', 4, 2, 5000, 'objects'));
    const local = Ledger.open(dir);
    later(() => local.close());
    await ingestFile(local, path.join(dir, 'deep', 'events.jsonl'));
    const from = new SqliteEngine(local);
    const here = await from.verify('deep0');
    expect(here.ok).toBe(false);
    expect(here.findings.map((f) => [f.code, f.line])).toEqual([['invalid_event', 2]]);
    expect(local.read('deep0').map((x) => x.seq)).toEqual([1, 3, 4]);

    const e = await open(make);
    const [first] = await pushRuns(from, e, ['deep0']);
    expect(first).toMatchObject({ action: 'copied', events: 3, findings: 1 });
    expect(await e.verify('deep0')).toEqual(here);
    expect(await e.findings('deep0')).toEqual(await from.findings('deep0'));
    const there = (await e.run('deep0'))!;
    expect(there.meta).toEqual(local.run('deep0')!.meta);
    expect(there.findings).toBe(1);

    // Twice: nothing moves.
    expect((await pushRuns(from, e, ['deep0']))[0]).toMatchObject({
      action: 'same',
      findings: 0,
      meta: false,
    });
    expect(await e.findings('deep0')).toHaveLength(1);

    // What a later pass records (a finding, a meta change) moves on the next push, once.
    local.addFindings('deep0', [
      { code: 'file_rewritten', file: 'deep/events.jsonl', line: 3, seq: null, message: 'line 3 changed' },
    ]);
    local.db.prepare(`UPDATE runs SET meta = json_set(meta, '$.note', 'later') WHERE run_id = 'deep0'`).run();
    expect((await pushRuns(from, e, ['deep0']))[0]).toMatchObject({
      action: 'same',
      findings: 1,
      meta: true,
    });
    expect((await pushRuns(from, e, ['deep0']))[0]).toMatchObject({ findings: 0, meta: false });
    const again = await from.verify('deep0');
    expect(again.findings.map((f) => f.code)).toEqual(['invalid_event', 'file_rewritten']);
    expect(await e.verify('deep0')).toEqual(again);
    expect((await e.run('deep0'))!.meta).toEqual(local.run('deep0')!.meta);

    // Pulled into another folder: the same verdict, findings and meta.
    const back = new SqliteEngine(folder());
    later(() => void back.close());
    expect((await pushRuns(e, back, ['deep0']))[0]).toMatchObject({ action: 'copied', findings: 2 });
    expect(await back.verify('deep0')).toEqual(again);
    expect(await back.findings('deep0')).toEqual(await from.findings('deep0'));
    expect((await back.run('deep0'))!.meta).toEqual(local.run('deep0')!.meta);
  });

  test('an imported run whose lines are not all events moves whole: a first line that is no event, and a gap where a page of the copy ends', async () => {
    // Two chained files as ProofLoop writes them, each with one line that is no event: line 1 of
    // one, line 10,001 of the other (push copies 10,000 events a page). Their runs keep the seqs of
    // their lines, so one starts at seq 2 and the other's second page at seq 10,002.
    const dir = folder();
    const put = (id: string, n: number, bad: number) => {
      const lines = chained(id, n);
      lines[bad - 1] = '{"seq": not json';
      mkdirSync(path.join(dir, id), { recursive: true });
      writeFileSync(path.join(dir, id, 'events.jsonl'), lines.join('\n') + '\n');
    };
    put('first-bad', 5, 1);
    put('page-gap', 10_003, 10_001);
    const local = Ledger.open(dir);
    later(() => local.close());
    for (const id of ['first-bad', 'page-gap']) await ingestFile(local, path.join(dir, id, 'events.jsonl'));
    expect(local.read('first-bad').map((x) => x.seq)).toEqual([2, 3, 4, 5]);
    expect(local.read('page-gap', { from: 9_999, to: 10_003 }).map((x) => x.seq)).toEqual([
      9_999, 10_000, 10_002, 10_003,
    ]);
    const from = new SqliteEngine(local);
    const e = await open(make);
    const pushed = await pushRuns(from, e, ['first-bad', 'page-gap']);
    expect(pushed.map((p) => [p.run_id, p.action, p.events])).toEqual([
      ['first-bad', 'copied', 4],
      ['page-gap', 'copied', 10_002],
    ]);
    for (const id of ['first-bad', 'page-gap']) expect(await e.verify(id)).toEqual(await from.verify(id));
    // Twice: nothing moves; and another copy of the same run from seq 1 is still refused.
    expect((await pushRuns(from, e, ['page-gap']))[0]).toMatchObject({ action: 'same', events: 0 });
    const again = await from.readChained('page-gap', 1, 3);
    await expect(e.putChained(portableRun((await from.run('page-gap'))!), again)).rejects.toThrow(
      /do not continue its head/,
    );
  });

  test('a runner run and OTLP spans written to a folder move in with their digests and verify the same', async () => {
    // The runner (real simulated model, policy and judge processes) and the OTLP receiver write the
    // embedded ledger; push moves their runs through the interface.
    const dir = folder();
    const local = Ledger.open(dir);
    later(() => local.close());
    const host = new RunHost(local, { tasksDir: path.join(repoRoot, 'tasks') });
    const started = host.start({ task_id: 'fix-median', variant: 'careful', seed: 1, mode: 'live' });
    await started.done;
    const rx = await startOtlpReceiver({ ledger: () => local, port: 0 });
    const body = readFileSync(path.join(repoRoot, 'test/fixtures/otlp/openllmetry-openai-0.62.3.json'));
    const res = await fetch(`http://127.0.0.1:${rx.port}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(res.status).toBe(200);
    await rx.close();
    const ids = local.runs().map((r) => r.run_id);
    expect(ids).toContain(started.run_id);
    expect(ids.length).toBeGreaterThan(1);
    const e = await open(make);
    const from = new SqliteEngine(local);
    await pushRuns(from, e, ids);
    for (const id of ids) {
      const here = await from.verify(id);
      expect(await e.verify(id)).toMatchObject({
        ok: true,
        head_seq: here.head_seq,
        head_hash: here.head_hash,
      });
    }
    expect((await e.run(started.run_id))?.status).toBe('completed');
    // The runner's artifacts (tool outputs, model requests) moved with its run: read whole there.
    const digests = await from.artifactDigests(started.run_id);
    expect(digests.length).toBeGreaterThan(0);
    expect(await e.artifactDigests(started.run_id)).toEqual(digests);
    for (const d of digests)
      expect(await e.artifact(started.run_id, d)).toBe(await from.artifact(started.run_id, d));
  });

  test("a run's artifacts move with it: an import's whole values read there, and again after pull; none is stored unchecked", async () => {
    // The import moves the session's too large tool output to an artifact; its event keeps an excerpt.
    const dir = folder();
    const big = writeSessionWithMovedValue(dir);
    const local = Ledger.open(dir);
    later(() => local.close());
    await ingestFile(local, path.join(dir, 'session.jsonl'));
    const [run] = local.runs();
    const from = new SqliteEngine(local);
    const digests = await from.artifactDigests(run!.run_id);
    expect(digests).toHaveLength(1);
    expect(await from.artifact(run!.run_id, digests[0]!)).toBe(big);

    const e = await open(make);
    const [pushed] = await pushRuns(from, e, [run!.run_id]);
    expect(pushed).toMatchObject({ action: 'copied', artifacts: 1, artifacts_missing: 0 });
    expect(await e.artifactDigests(run!.run_id)).toEqual(digests);
    expect(await e.artifact(run!.run_id, digests[0]!)).toBe(big);
    // Only through its run: another run's id reads nothing of it.
    expect(await e.artifact('no-such-run', digests[0]!)).toBeNull();
    // Twice: nothing moves.
    expect((await pushRuns(from, e, [run!.run_id]))[0]).toMatchObject({ action: 'same', artifacts: 0 });

    // Pulled into another folder: read whole there too.
    const back = new SqliteEngine(folder());
    later(() => void back.close());
    expect((await pushRuns(e, back, [run!.run_id]))[0]).toMatchObject({ action: 'copied', artifacts: 1 });
    expect(await back.artifact(run!.run_id, digests[0]!)).toBe(big);

    // A text that is not what its digest names is refused by name, and nothing is stored.
    const wrong = { digest: digests[0]!.replace(/^./, (c) => (c === '0' ? '1' : '0')), text: big };
    await expect(e.putArtifacts(run!.run_id, [wrong])).rejects.toThrow(/does not match its digest/);
    expect(await e.artifact(run!.run_id, wrong.digest)).toBeNull();
    await expect(e.putArtifacts('no-such-run', [])).rejects.toThrow(/no run no-such-run/);
  });

  test('the runner, the OTLP receiver and a folder import write through the interface itself', async () => {
    const e = await open(make);
    // The runner holds the run's writer on the engine (a lease on PostgreSQL) for the whole run;
    // its workspace and artifacts are in a local folder.
    const runsRoot = folder();
    const host = new RunHost(e, { tasksDir: path.join(repoRoot, 'tasks'), runsRoot });
    const run = host.start({ task_id: 'fix-median', variant: 'careful', seed: 1, mode: 'live' });
    await run.ready;
    expect((await e.run(run.run_id))?.source).toBe('executed');
    const end = await run.done;
    expect(end).toMatchObject({ status: 'completed', outcome: 'passed' });
    // Its artifacts, written in the local folder as it ran, are on the ledger once it ends.
    const local = folderArtifactDigests(path.join(runsRoot, run.run_id));
    expect(local.length).toBeGreaterThan(0);
    expect(await e.artifactDigests(run.run_id)).toEqual(local);
    for (const d of local)
      expect(await e.artifact(run.run_id, d)).toBe(readArtifact(path.join(runsRoot, run.run_id), d));
    expect(await e.run(run.run_id)).toMatchObject({
      status: 'completed',
      head_seq: end.head_seq,
      writer: null,
    });
    expect((await e.verify(run.run_id)).ok).toBe(true);
    const kinds = (await e.read(run.run_id)).map((x) => x.kind);
    expect(kinds[0]).toBe('run_started');
    expect(kinds).toContain('judge_verdict');
    // A second writer of a run the runner holds is refused by name while it runs.
    const held = host.start({ task_id: 'fix-median', variant: 'careful', seed: 2, mode: 'live' });
    await held.ready;
    await expect(e.writer(held.run_id, { label: 'intruder' })).rejects.toThrow(/already has a writer/);
    await held.done;

    // OTLP: the receiver appends to the engine (no runs folder at all), one live writer per run.
    const rx = await startOtlpReceiver({
      ledger: () => {
        throw new Error('no runs folder: the engine takes the records');
      },
      engine: () => e,
      port: 0,
    });
    const body = readFileSync(path.join(repoRoot, 'test/fixtures/otlp/openllmetry-openai-0.62.3.json'));
    const post = () =>
      fetch(`http://127.0.0.1:${rx.port}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
    const res = await post();
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    await rx.close();
    const otlp = (await e.runs()).filter((r) => r.format === 'otlp');
    expect(otlp.length).toBe(1);
    expect(otlp[0]!.event_count).toBeGreaterThan(0);
    expect(otlp[0]!.writer).toBeNull();
    expect((await e.verify(otlp[0]!.run_id)).ok).toBe(true);

    // A folder import: the adapters, then every run into the engine with its digests; twice: nothing new.
    const dir = folder();
    mkdirSync(path.join(dir, 'seed'), { recursive: true });
    copyFileSync(
      path.join(repoRoot, 'test/fixtures/seed004/data/events.jsonl'),
      path.join(dir, 'seed', 'events.jsonl'),
    );
    copyFileSync(path.join(repoRoot, CLAUDE_SESSION), path.join(dir, 'session.jsonl'));
    const first = await importIntoEngine(dir, e);
    expect(first.imported.events).toBeGreaterThan(0);
    expect(first.refused).toEqual([]);
    expect(first.pushed.length).toBeGreaterThan(1);
    expect(first.pushed.every((p) => p.action === 'copied')).toBe(true);
    for (const p of first.pushed) {
      const v = await e.verify(p.run_id);
      expect(v, p.run_id).toMatchObject({ head_seq: p.head_seq, head_hash: p.head_hash });
    }
    const again = await importIntoEngine(dir, e);
    expect(again.imported.events).toBe(0);
    expect(again.pushed.every((p) => p.action === 'same')).toBe(true);
  });
});
