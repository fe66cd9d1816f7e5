import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import {
  statSync,
  appendFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
  readFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Ledger, digestRunIdOf, verifyEvents } from '../../electron/ledger';
import { ingestFile, ingestFolder, verifyFile } from '../../electron/ingest';
import { importFile } from '../../electron/ingest/importer';
import { generateFile } from '../../bench/ingest';
import { stateAt } from '../../electron/state';

const FIX = resolve(__dirname, '../fixtures');
const dirs: string[] = [];
const ledgers: Ledger[] = [];

function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'pl-'));
  dirs.push(d);
  return d;
}
function open(folder: string): Ledger {
  const l = Ledger.open(folder);
  ledgers.push(l);
  return l;
}
afterEach(() => {
  for (const l of ledgers.splice(0)) l.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Copies test/fixtures/ingest/<name>.jsonl to <folder>/imp/<name>/events.jsonl. */
function withFixture(name: string): { folder: string; file: string; key: string } {
  const folder = tmp();
  const key = `imp/${name}/events.jsonl`;
  mkdirSync(join(folder, 'imp', name), { recursive: true });
  cpSync(join(FIX, 'ingest', `${name}.jsonl`), join(folder, key));
  return { folder, file: join(folder, key), key };
}
const seqsOf = (l: Ledger, run: string) => l.read(run).map((e) => e.seq);

/** A generated run's file with some of its lines (0-based) edited as objects. */
function generatedWithEdits(
  file: string,
  n: number,
  runId: string,
  edits: Record<number, (o: Record<string, unknown>) => void>,
): void {
  generateFile(file, n, runId);
  const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
  for (const [i, edit] of Object.entries(edits)) {
    const o = JSON.parse(lines[Number(i)]!) as Record<string, unknown>;
    edit(o);
    lines[Number(i)] = JSON.stringify(o);
  }
  writeFileSync(file, lines.join('\n') + '\n');
}

describe('findings, one fixture per code', () => {
  const cases: { code: string; line: number; seq: number | null; run: string; imported: number[] }[] = [
    { code: 'broken_json', line: 3, seq: null, run: 'fx', imported: [1, 2, 3] },
    { code: 'truncated_line', line: 3, seq: 3, run: 'fx', imported: [1, 2] },
    { code: 'seq_gap', line: 3, seq: 4, run: 'fx', imported: [1, 2, 4, 5] },
    { code: 'seq_duplicate', line: 3, seq: 2, run: 'fx', imported: [1, 2, 3] },
    { code: 'seq_out_of_order', line: 4, seq: 2, run: 'fx', imported: [1, 2, 3, 4] },
    { code: 'run_id_mismatch', line: 3, seq: 3, run: 'fx', imported: [1, 2, 3] },
    // Stored as written, with its finding: an event that fails its schema is not dropped.
    { code: 'invalid_event', line: 2, seq: 2, run: 'fx', imported: [1, 2, 3] },
    { code: 'not_utf8', line: 2, seq: null, run: 'fx', imported: [1, 2] },
    { code: 'chain_broken', line: 3, seq: 3, run: 'px', imported: [1, 2, 3, 4] },
  ];
  for (const c of cases) {
    it(`${c.code}: reported at its line and seq, the valid events around it imported`, async () => {
      const { folder, key } = withFixture(c.code);
      const l = open(folder);
      await ingestFolder(l);
      const f = l.findings(c.run).filter((x) => x.code === c.code);
      expect(f.length, JSON.stringify(l.findings())).toBeGreaterThanOrEqual(1);
      expect(f[0]).toMatchObject({ code: c.code, file: key, line: c.line, seq: c.seq });
      expect(seqsOf(l, c.run)).toEqual(c.imported);
      // verifyFile finds the same thing without storing.
      const reports = await verifyFile(join(folder, key));
      const vf = reports.flatMap((r) => r.findings).filter((x) => x.code === c.code);
      expect(vf[0]).toMatchObject({ code: c.code, line: c.line, seq: c.seq });
      expect(reports.every((r) => r.ok === (r.findings.length === 0))).toBe(true);
    });
  }

  it('line_too_long: skipped to its newline, reported, the next line imported', async () => {
    const { folder, file, key } = withFixture('line_too_long');
    const l = open(folder);
    await importFile(l, file, { key, maxLine: 1024, blockSize: 300 });
    // Its first bytes name its seq, though the line is never held whole.
    expect(l.findings('fx').find((x) => x.code === 'line_too_long')).toMatchObject({
      line: 2,
      seq: 2,
      file: key,
    });
    expect(seqsOf(l, 'fx')).toEqual([1, 2]);
    const v = await verifyFile(file, { maxLine: 1024 });
    expect(v[0]!.findings.map((x) => [x.code, x.line])).toEqual([['line_too_long', 2]]);
  });

  it('line_too_long at the default 16 MiB bound', async () => {
    const folder = tmp();
    const file = join(folder, 'big', 'events.jsonl');
    mkdirSync(join(folder, 'big'));
    const line = (seq: number, content: string) =>
      JSON.stringify({ seq, run_id: 'big', kind: 'model_responded', at: 'now', payload: { content } });
    writeFileSync(file, `${line(1, 'a')}\n${line(2, 'x'.repeat(17 << 20))}\n${line(2, 'b')}\n`);
    const l = open(folder);
    await ingestFolder(l);
    expect(l.findings('big').map((f) => [f.code, f.line])).toEqual([['line_too_long', 2]]);
    expect(seqsOf(l, 'big')).toEqual([1, 2]);
  });
});

describe('seed formats', () => {
  it('seed 000: runs/demo-001 with seqs 1-4, unchained, its chain computed on import', async () => {
    const folder = tmp();
    cpSync(join(FIX, 'seed000'), folder, { recursive: true });
    const l = open(folder);
    const s = await ingestFolder(l);
    expect(s).toEqual({ files: 1, events: 4, findings: 0 });
    const run = l.run('demo-001')!;
    expect(run).toMatchObject({
      source: 'imported',
      format: 'seed000',
      chained: false,
      origin: 'runs/demo-001/events.jsonl',
    });
    expect(run.head_seq).toBe(4);
    const events = l.read('demo-001');
    expect(events.map((e) => [e.seq, e.kind])).toEqual([
      [1, 'run_started'],
      [2, 'model_proposed'],
      [3, 'run_started'],
      [4, 'model_proposed'],
    ]);
    // Stored exactly as the file has it; protocol v1's defaults are the projection's, on read.
    const lines = readFileSync(join(folder, 'runs/demo-001/events.jsonl'), 'utf8').trimEnd().split('\n');
    expect(events.map((e) => e.payload)).toEqual(
      lines.map((t) => (JSON.parse(t) as { payload: unknown }).payload),
    );
    expect(events.map((e) => e.source?.line)).toEqual([1, 2, 3, 4]);
    const state = stateAt(l, 'demo-001', 2).state;
    expect(state.task).toMatchObject({ task_id: 'demo-001' });
    expect(state.agent).toMatchObject({ name: 'unknown' });
    expect(state.calls.items.map((c) => [c.call_id, c.tool])).toEqual([['seq-2', 'read_file']]);
    expect(state.notes.items.filter((n) => n.code === 'invalid_payload')).toEqual([]);
    expect(verifyEvents('demo-001', events).ok).toBe(true);
    expect(run.head_hash).toBe(events[3]!.hash);
    const v = await verifyFile(join(folder, 'runs/demo-001/events.jsonl'));
    expect(v).toMatchObject([{ ok: true, run_id: 'demo-001', events: 4, head_seq: 4, chained: false }]);
  });

  it('seed 004: one run per aggregate, kinds mapped to protocol v1, originals kept', async () => {
    const folder = tmp();
    cpSync(join(FIX, 'seed004'), folder, { recursive: true });
    const l = open(folder);
    const s = await ingestFolder(l);
    expect(s.events).toBe(5);
    expect(l.findings()).toEqual([]);
    const run = l.run('task-demo-001')!;
    expect(run).toMatchObject({
      format: 'seed004',
      chained: false,
      status: 'completed',
      task_id: 'task-demo-001',
    });
    const events = l.read('task-demo-001');
    expect(events.map((e) => [e.seq, e.kind])).toEqual([
      [1, 'run_started'],
      [2, 'tool_invoked'],
      [3, 'tool_returned'],
      [4, 'model_responded'],
      [5, 'run_completed'],
    ]);
    // The payloads as written; the source's event_id and event_type are provenance, not payload.
    const lines = readFileSync(join(folder, 'data', readdirSync(join(folder, 'data'))[0]!), 'utf8')
      .trimEnd()
      .split('\n')
      .map((t) => JSON.parse(t) as { payload: unknown; event_id: string; event_type: string });
    expect(events.map((e) => e.payload)).toEqual(lines.map((o) => o.payload));
    expect(events[2]!.source?.ids).toMatchObject({ event_type: 'tool_result', event_id: lines[2]!.event_id });
    const state = stateAt(l, 'task-demo-001', 5).state;
    expect(state.status).toBe('completed');
    expect(state.task).toMatchObject({ task_id: 'task-demo-001', goal: '计算 23 乘以 17' });
    expect(state.agent).toMatchObject({ name: 'deepseek-chat' });
    expect(state.notes.items.filter((n) => n.code === 'invalid_payload')).toEqual([]);
    expect(verifyEvents('task-demo-001', events).ok).toBe(true);
  });

  it('skips .proofloop, node_modules and the mirrors of executed runs', async () => {
    const folder = tmp();
    const l = open(folder);
    const w = l.writer('exec-1');
    w.append('run_started', { task_id: 't', goal: 'g', agent: { name: 'a' } });
    w.close();
    mkdirSync(join(folder, 'node_modules', 'x'), { recursive: true });
    cpSync(join(FIX, 'seed000/runs/demo-001/events.jsonl'), join(folder, 'node_modules/x/events.jsonl'));
    const s = await ingestFolder(l);
    expect(s).toEqual({ files: 0, events: 0, findings: 0 });
    expect(l.runs().map((r) => r.run_id)).toEqual(['exec-1']);
  });

  it('leaves alone a .jsonl that no format claims (any name but events.jsonl), and does not read it again', async () => {
    const folder = tmp();
    const l = open(folder);
    mkdirSync(join(folder, 'notes'), { recursive: true });
    // Another program's JSONL, and lines seed 000 would claim in a file not named events.jsonl.
    writeFileSync(join(folder, 'notes', 'todo.jsonl'), '{"task":"write docs","done":false}\n');
    writeFileSync(join(folder, 'notes', 'log.jsonl'), '{"seq":1,"kind":"note","payload":{}}\n');
    const s = await ingestFolder(l);
    expect(s.events).toBe(0);
    expect(s.findings).toBe(0);
    expect(l.runs()).toEqual([]);
    // Remembered: the next open does not look at them, even grown.
    const unclaimed = l.db
      .prepare("SELECT file FROM imports WHERE json_extract(state, '$.unclaimed') ORDER BY file")
      .pluck()
      .all();
    expect(unclaimed).toEqual(['notes/log.jsonl', 'notes/todo.jsonl']);
    appendFileSync(join(folder, 'notes', 'todo.jsonl'), '{"task":"test","done":true}\n');
    expect(await ingestFolder(l)).toMatchObject({ events: 0, findings: 0 });
    expect(l.runs()).toEqual([]);
    // The same line in an events.jsonl is a run.
    mkdirSync(join(folder, 'r'), { recursive: true });
    writeFileSync(join(folder, 'r', 'events.jsonl'), '{"seq":1,"kind":"note","payload":{}}\n');
    expect((await ingestFolder(l)).events).toBe(1);
    expect(l.runs()).toHaveLength(1);
  });

  it("skips a real agent's home in an executed run (the runner imports its transcripts itself, redacted), not a home elsewhere", async () => {
    const folder = tmp();
    const l = open(folder);
    const w = l.writer('exec-2');
    w.append('run_started', { task_id: 't', goal: 'g', agent: { name: 'claude-code' } });
    w.close();
    const session = join(FIX, 'claude-code/projects/-home-marco-projects-spotter/tool_heavy.jsonl');
    // Written by the agent while it runs: not the folder's to import.
    mkdirSync(join(folder, 'exec-2', 'home', '.claude', 'projects', 'p'), { recursive: true });
    cpSync(session, join(folder, 'exec-2', 'home', '.claude', 'projects', 'p', 's.jsonl'));
    // A folder named like a run that ProofLoop did not execute: its home is an ordinary folder.
    mkdirSync(join(folder, 'copied', 'home'), { recursive: true });
    cpSync(session, join(folder, 'copied', 'home', 'tool_heavy.jsonl'));
    const s = await ingestFolder(l);
    expect(s.files).toBe(1);
    expect(
      l
        .runs()
        .map((r) => r.origin)
        .filter(Boolean),
    ).toEqual(['copied/home/tool_heavy.jsonl']);
  });
});

describe('incremental import', () => {
  it('re-open reads only the new bytes', async () => {
    const folder = tmp();
    cpSync(join(FIX, 'seed000'), folder, { recursive: true });
    const file = join(folder, 'runs/demo-001/events.jsonl');
    let l = open(folder);
    await ingestFolder(l);
    l.close();
    ledgers.pop();
    const more = [5, 6, 7].map((seq) =>
      JSON.stringify({
        seq,
        run_id: 'demo-001',
        kind: 'model_responded',
        at: 'x',
        payload: { content: `${seq}` },
      }),
    );
    appendFileSync(file, more.join('\n') + '\n');
    l = open(folder);
    const s = await ingestFolder(l);
    expect(s.events).toBe(3);
    expect(seqsOf(l, 'demo-001')).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(verifyEvents('demo-001', l.read('demo-001')).ok).toBe(true);
    expect((await ingestFolder(l)).events).toBe(0);
    expect(l.findings()).toEqual([]);
  });

  it('a rewritten file is reported once and not re-imported over the old run', async () => {
    const folder = tmp();
    cpSync(join(FIX, 'seed000'), folder, { recursive: true });
    const file = join(folder, 'runs/demo-001/events.jsonl');
    const l = open(folder);
    await ingestFolder(l);
    const before = l.read('demo-001');
    writeFileSync(file, readFileSync(file, 'utf8').replace('修复折扣计算', 'something else entirely'));
    await ingestFolder(l);
    await ingestFolder(l);
    expect(l.findings('demo-001').map((f) => f.code)).toEqual(['file_rewritten']);
    expect(l.read('demo-001')).toEqual(before);
    // shrinking is a rewrite too
    const f2 = withFixture('seq_gap');
    const l2 = open(f2.folder);
    await ingestFolder(l2);
    writeFileSync(f2.file, readFileSync(f2.file, 'utf8').split('\n').slice(0, 2).join('\n') + '\n');
    await ingestFolder(l2);
    expect(l2.findings('fx').map((f) => f.code)).toEqual(['seq_gap', 'file_rewritten']);
  });

  it('a truncated last line is imported once the writer completes it, and its finding dropped', async () => {
    const { folder, file, key } = withFixture('truncated_line');
    const l = open(folder);
    await ingestFolder(l);
    await ingestFolder(l); // reported once
    expect(l.findings('fx').map((f) => [f.code, f.line, f.file])).toEqual([['truncated_line', 3, key]]);
    const full = JSON.stringify({
      seq: 3,
      run_id: 'fx',
      kind: 'model_responded',
      at: '2025-01-01T12:00:03.000001+00:00',
      payload: { content: 'step 3' },
    });
    const have = readFileSync(file, 'utf8').split('\n').at(-1)!;
    appendFileSync(file, full.slice(have.length) + '\n');
    const s = await ingestFolder(l);
    expect(s.events).toBe(1);
    expect(seqsOf(l, 'fx')).toEqual([1, 2, 3]);
    expect(l.findings('fx')).toEqual([]);
  });

  it('ingestFile imports a .jsonl named directly, outside the folder', async () => {
    const folder = tmp();
    const outside = join(tmp(), 'exported.jsonl');
    cpSync(join(FIX, 'ingest/chain_broken.jsonl'), outside);
    const l = open(folder);
    const s = await ingestFile(l, outside);
    expect(s.events).toBe(4);
    expect(l.run('px')).toMatchObject({ chained: true, format: 'proofloop', origin: outside });
    expect(l.findings('px')[0]).toMatchObject({ code: 'chain_broken', file: outside, line: 3 });
  });
});

describe('chained ProofLoop files', () => {
  it('a generated run imports with its head hash, and verifies', async () => {
    const folder = tmp();
    const file = join(folder, 'agent', 'events.jsonl');
    generateFile(file, 25_000, 'gen-1');
    const l = open(folder);
    const s = await ingestFolder(l);
    expect(s).toEqual({ files: 1, events: 25_000, findings: 0 });
    const run = l.run('gen-1')!;
    expect(run).toMatchObject({ head_seq: 25_000, event_count: 25_000, chained: true, status: 'completed' });
    const [report] = await verifyFile(file);
    expect(report).toMatchObject({
      ok: true,
      events: 25_000,
      head_seq: 25_000,
      head_hash: run.head_hash,
      chained: true,
    });
    expect(verifyEvents('gen-1', l.iterate('gen-1')).ok).toBe(true);
    // Import commits skip the fsync (they can be read again from the file); appends must not.
    expect(l.db.pragma('synchronous', { simple: true })).toBe(2);
  });

  it('an event altered after it was written is reported in a file large enough for the parse workers', async () => {
    const folder = tmp();
    const file = join(folder, 'agent', 'events.jsonl');
    // Over the 8 MiB from which files are parsed in worker threads (parallel.ts).
    generatedWithEdits(file, 30_000, 'altered', {
      20_000: (o) => ((o.payload as Record<string, unknown>).tampered = true),
    });
    expect(statSync(file).size).toBeGreaterThan(8 << 20);
    const l = open(folder);
    await ingestFolder(l);
    const broken = l.findings('altered').filter((f) => f.code === 'chain_broken');
    expect(broken.map((f) => [f.line, f.seq])).toEqual([[20_001, 20_001]]);
    expect(broken[0]!.message).toMatch(/content does not match its hash/);
  });

  it('a hash or prev that is not 64 hex digits is an invalid event, one that is but does not link is a broken chain', async () => {
    const folder = tmp();
    generatedWithEdits(join(folder, 'agent', 'events.jsonl'), 6, 'hexes', {
      1: (o) => (o.hash = 'Z'.repeat(64)), // 64 characters, not hex
      3: (o) => (o.prev = (o.prev as string).toUpperCase().replace(/[0-9]/g, 'A')), // not lowercase hex
      4: (o) => (o.hash = 'a'.repeat(64)), // hex, does not link
    });
    const l = open(folder);
    await ingestFolder(l);
    const found = l.findings('hexes').map((f) => [f.code, f.line, f.seq, f.message]);
    expect(found).toContainEqual(['invalid_event', 2, 2, expect.stringMatching(/hash/)]);
    expect(found).toContainEqual(['invalid_event', 4, 4, expect.stringMatching(/prev/)]);
    expect(found.filter(([code, line]) => code === 'chain_broken' && line === 5).length).toBeGreaterThan(0);
    expect(found.some(([code, line]) => code === 'invalid_event' && line === 5)).toBe(false);
  });

  it('a run stored under a new id (its id was taken) keeps its source id for its digests, and verifies', async () => {
    const folder = tmp();
    generateFile(join(folder, 'a', 'events.jsonl'), 50, 'same-id');
    generateFile(join(folder, 'b', 'events.jsonl'), 30, 'same-id');
    const l = open(folder);
    await ingestFolder(l);
    const runs = l.runs().filter((r) => r.run_id.startsWith('same-id'));
    expect(runs.map((r) => r.run_id).sort()).toEqual(['same-id', 'same-id:2']);
    const renamed = l.run('same-id:2')!;
    expect(digestRunIdOf(renamed)).toBe('same-id');
    for (const r of runs) {
      const report = verifyEvents(r.run_id, l.iterate(r.run_id), {
        expectedHead: { seq: r.head_seq, hash: r.head_hash },
        digestRunId: digestRunIdOf(r),
      });
      expect(report.findings).toEqual([]);
    }
    // Digests taken with the id it is stored under would not link.
    expect(verifyEvents('same-id:2', l.iterate('same-id:2')).ok).toBe(false);
  });

  it('a seq beyond the largest a run can have (2^32 - 1) is an invalid event, and takes no other seq', async () => {
    const folder = tmp();
    generatedWithEdits(join(folder, 'agent', 'events.jsonl'), 3, 'big-seq', {
      2: (o) => (o.seq = 2 ** 32 + 3),
    });
    const l = open(folder);
    await ingestFolder(l);
    const found = l.findings('big-seq').map((f) => [f.code, f.line, f.seq, f.message]);
    expect(found).toContainEqual(['invalid_event', 3, 2 ** 32 + 3, expect.stringMatching(/seq/)]);
    expect(seqsOf(l, 'big-seq')).toEqual([1, 2]);
    expect(l.event('big-seq', 3)).toBeUndefined();
  });

  it('two processes importing one folder at once import each event once', async () => {
    const folder = tmp();
    generateFile(join(folder, 'a', 'events.jsonl'), 40_000, 'conc-a');
    cpSync(join(FIX, 'seed004'), folder, { recursive: true });
    const script = join(folder, 'ingest-once.mts');
    writeFileSync(
      script,
      `import { Ledger } from ${JSON.stringify(resolve(__dirname, '../../electron/ledger'))};
import { ingestFolder } from ${JSON.stringify(resolve(__dirname, '../../electron/ingest'))};
const l = Ledger.open(process.argv[2]!);
const s = await ingestFolder(l);
l.close();
console.log(JSON.stringify(s));\n`,
    );
    open(folder).close(); // create the ledger first so both processes only import
    ledgers.pop();
    const run = () =>
      new Promise<{ code: number | null; out: string; err: string }>((done) => {
        const p = spawn(process.execPath, ['--import', 'tsx', script, folder], {
          cwd: resolve(__dirname, '../..'),
        });
        let out = '';
        let err = '';
        p.stdout.on('data', (d: Buffer) => (out += d.toString()));
        p.stderr.on('data', (d: Buffer) => (err += d.toString()));
        p.on('close', (code) => done({ code, out, err }));
      });
    const [a, b] = await Promise.all([run(), run()]);
    expect(a.code, a.err).toBe(0);
    expect(b.code, b.err).toBe(0);
    const sa = JSON.parse(a.out) as { events: number };
    const sb = JSON.parse(b.out) as { events: number };
    expect(sa.events + sb.events).toBe(40_005);
    const l = open(folder);
    expect(l.run('conc-a')).toMatchObject({ head_seq: 40_000, event_count: 40_000 });
    expect(l.run('task-demo-001')).toMatchObject({ head_seq: 5, event_count: 5 });
    expect(l.findings()).toEqual([]);
  });
});
