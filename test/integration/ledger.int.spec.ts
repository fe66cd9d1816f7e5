import { describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Ledger, ledgerPath, repairMirrors, verifyEvents } from '../../electron/ledger';
import { openDatabase } from '../../electron/ledger/open';
import { freshFolder, perTest, runTs, cli } from './helpers/tmp';
import { migrations } from '../../electron/ledger/migrations';
import { kindsQuery } from '../../electron/ledger/kinds-index';

const started = {
  task_id: 'discount',
  goal: 'fix the discount',
  agent: { name: 'sim', variant: 'careful', seed: 1 },
};
const { folder } = perTest();

describe('ledger on a real SQLite file', () => {
  it('continues seq and the chain after a restart', () => {
    const dir = folder();
    let ledger = Ledger.open(dir);
    let w = ledger.writer('demo-001');
    w.append('run_started', started);
    w.append('model_proposed', { call_id: 'c1', tool: 'read_file', args: { path: 'price.js' } });
    w.close();
    ledger.close();

    ledger = Ledger.open(dir);
    w = ledger.writer('demo-001');
    const third = w.append('action_allowed', { call_id: 'c1', rule: 'read:**' });
    w.append('tool_invoked', { call_id: 'c1', tool: 'read_file', args: { path: 'price.js' } });
    w.close();
    expect(third.seq).toBe(3);
    const events = ledger.read('demo-001');
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    expect(events[2]!.prev).toBe(events[1]!.hash);
    const run = ledger.run('demo-001')!;
    expect(
      verifyEvents('demo-001', events, { expectedHead: { seq: run.head_seq, hash: run.head_hash } }).ok,
    ).toBe(true);
    ledger.close();
  });

  it('refuses UPDATE and DELETE on events, from any connection', () => {
    const dir = folder();
    const ledger = Ledger.open(dir);
    const w = ledger.writer('r');
    w.append('run_started', started);
    w.close();
    ledger.close();
    const raw = new Database(ledgerPath(dir));
    expect(() => raw.prepare("UPDATE events SET payload = '{}'").run()).toThrow(
      /append-only: UPDATE refused/,
    );
    expect(() => raw.prepare('DELETE FROM events').run()).toThrow(/append-only: DELETE refused/);
    expect(raw.prepare('SELECT COUNT(*) AS n FROM events').get()).toEqual({ n: 1 });
    raw.close();
  });

  it('refuses a payload that fails its kind schema, naming the field, and commits nothing', () => {
    const dir = folder();
    const ledger = Ledger.open(dir);
    const w = ledger.writer('r');
    w.append('run_started', started);
    expect(() =>
      w.appendBatch([
        { kind: 'model_responded', payload: { content: 'ok' } },
        { kind: 'tool_returned', payload: { call_id: 'c1' } },
      ]),
    ).toThrow(/payload of tool_returned: status/);
    expect(ledger.run('r')!.head_seq).toBe(1);
    // Numbers without a JSON form are refused, not turned into null behind the caller's back.
    expect(() => w.append('model_responded', { content: 'ok', note: NaN })).toThrow(
      /payload of model_responded: NaN is not allowed/,
    );
    expect(() => w.append('mystery_kind', { nested: [Infinity] })).toThrow(/Infinity is not allowed/);
    expect(ledger.run('r')!.head_seq).toBe(1);
    w.close();
    ledger.close();
  });

  it('4 processes on 4 runs and 2 processes on one run: no gap, no duplicate, the second writer refused', async () => {
    const dir = folder();
    Ledger.open(dir).close();
    const runs = ['a', 'b', 'c', 'd'];
    const results = await Promise.all(
      runs.map((r) => runTs('test/integration/helpers/append-worker.ts', [dir, r, '300']).done),
    );
    for (const r of results) expect(r.code, r.stderr).toBe(0);

    // Two writers on one run: the second starts while the first holds the run.
    const release = path.join(dir, 'release');
    let first!: ReturnType<typeof runTs>;
    const locked = new Promise<void>((resolve) => {
      first = runTs('test/integration/helpers/append-worker.ts', [dir, 'shared', '1500'], {
        onLine: (l) => l === 'locked' && resolve(),
        env: { PROOFLOOP_HOLD: release },
      });
    });
    await locked;
    const second = await runTs('test/integration/helpers/append-worker.ts', [dir, 'shared', '1500']).done;
    expect(second.code).toBe(3);
    expect(second.stdout).toMatch(/conflict run shared already has a writer: pid \d+/);
    writeFileSync(release, '');
    expect((await first.done).code).toBe(0);
    // Once the first writer is gone, a new one continues the same run.
    const third = await runTs('test/integration/helpers/append-worker.ts', [dir, 'shared', '500', '50']).done;
    expect(third.stdout).toContain('done 2000');

    const ledger = Ledger.open(dir);
    for (const [run, n] of [...runs.map((r) => [r, 300] as const), ['shared', 2000] as const]) {
      const seqs = ledger.read(run).map((e) => e.seq);
      expect(seqs.length).toBe(n);
      expect(seqs.every((s, i) => s === i + 1)).toBe(true);
      expect(verifyEvents(run, ledger.iterate(run)).ok).toBe(true);
    }
    ledger.close();
  });

  it('a changed byte inside any payload value makes verify name that seq', async () => {
    const dir = folder();
    const ledger = Ledger.open(dir);
    const w = ledger.writer('r');
    w.append('run_started', started);
    for (let i = 0; i < 20; i++) {
      w.append('tool_returned', {
        call_id: `c${i}`,
        status: 'ok',
        duration_ms: i,
        excerpt: `line ${i}: total = price * 0.9`,
        bytes: 30 + i,
      });
    }
    w.close();
    ledger.close();

    // Tamper below the ledger: drop the guard trigger as an attacker with file access would.
    const raw = new Database(ledgerPath(dir));
    raw.exec('DROP TRIGGER events_no_update');
    const targets = [1, 7, 21];
    for (const seq of targets) {
      const row = raw.prepare('SELECT payload FROM events WHERE run_no = 1 AND seq = ?').get(seq) as {
        payload: string;
      };
      // One byte of a value: the first digit or letter inside a string value.
      const at = row.payload.search(/:"[a-z0-9]/) + 2;
      const flipped =
        row.payload.slice(0, at) + (row.payload[at] === 'x' ? 'y' : 'x') + row.payload.slice(at + 1);
      raw.prepare('UPDATE events SET payload = ? WHERE run_no = 1 AND seq = ?').run(flipped, seq);
    }
    raw.close();

    const out = await cli(['--folder', dir, '--json', 'verify', 'r']);
    expect(out.code).toBe(1);
    const report = JSON.parse(out.stdout) as { ok: boolean; findings: { code: string; seq: number }[] };
    expect(report.ok).toBe(false);
    const named = [...new Set(report.findings.filter((f) => f.code === 'chain_broken').map((f) => f.seq))];
    expect(named).toEqual(targets);
  });

  it('verify of a file that is not there names the file, not a run', async () => {
    const dir = folder();
    const missing = await cli(['--folder', dir, 'verify', 'logs/events.jsonl']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('logs/events.jsonl: no such file (');
    expect(missing.stderr).toContain(`no run of that id in ${dir}`);
    // A plain run id that is not there is still a missing run.
    const noRun = await cli(['--folder', dir, 'verify', 'demo-001']);
    expect(noRun.code).toBe(2);
    expect(noRun.stderr).toMatch(/no run "demo-001"/);
  });

  it('append from the CLI says why a payload is refused, and commits nothing', async () => {
    const dir = folder();
    const notJson = await cli(['--folder', dir, 'append', 'r', 'model_responded', '{"content":"hi"']);
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toMatch(/^proofloop: payload-json is not JSON/);
    const badField = await cli(['--folder', dir, 'append', 'r', 'tool_returned', '{"call_id":"c1"}']);
    expect(badField.code).toBe(2);
    expect(badField.stderr).toMatch(/payload of tool_returned: status/);
    const ok = await cli(['--folder', dir, '--json', 'append', 'r', 'model_responded', '{"content":"hi"}']);
    expect(ok.code).toBe(0);
    expect((JSON.parse(ok.stdout) as { seq: number }).seq).toBe(1);
  });

  it('writes a JSONL mirror after each commit and repairs a lagging or torn one from the database', () => {
    const dir = folder();
    const ledger = Ledger.open(dir);
    const w = ledger.writer('m');
    w.append('run_started', started);
    for (let i = 0; i < 9; i++) w.append('context_updated', { op: 'append', i });
    w.close();
    const mirror = path.join(dir, 'm', 'events.jsonl');
    const lines = readFileSync(mirror, 'utf8').trimEnd().split('\n');
    expect(lines.length).toBe(10);
    // Lose the last three lines and tear the one before.
    writeFileSync(mirror, lines.slice(0, 6).join('\n') + '\n' + lines[6]!.slice(0, 20));
    expect(repairMirrors(ledger)).toEqual(['m']);
    const repaired = readFileSync(mirror, 'utf8').trimEnd().split('\n');
    expect(repaired).toEqual(lines);
    expect(repairMirrors(ledger)).toEqual([]);
    ledger.close();
  });

  it('takes kinds named like Object.prototype members as ordinary unknown kinds', () => {
    const ledger = Ledger.open(folder());
    const w = ledger.writer('proto-kinds');
    w.append('run_started', started);
    for (const kind of ['constructor', 'to_string', 'value_of']) w.append(kind, { note: kind });
    w.close();
    const run = ledger.run('proto-kinds')!;
    expect(run.status).toBe('running');
    expect(run.event_count).toBe(4);
    expect(ledger.read('proto-kinds', { kinds: ['constructor'] }).map((e) => e.seq)).toEqual([2]);
    ledger.close();
  });

  it('refuses a ledger written by a newer schema, and one whose applied migration was edited', () => {
    const dir = folder();
    Ledger.open(dir).close();
    const raw = new Database(ledgerPath(dir));
    raw.pragma('user_version = 99');
    raw.close();
    expect(() => Ledger.open(dir)).toThrow(/schema version 99, newer than this ProofLoop knows/);

    const dir2 = folder();
    Ledger.open(dir2).close();
    const raw2 = new Database(ledgerPath(dir2));
    raw2.prepare("UPDATE schema_migrations SET sha256 = 'edited' WHERE version = 1").run();
    raw2.close();
    expect(() => Ledger.open(dir2)).toThrow(/migration 1 \(initial\) was edited after it was applied/);
    expect(existsSync(ledgerPath(dir2))).toBe(true);
  });
});

describe('reads by seq', () => {
  it('never reach into the next run: seqs beyond the largest a run can have find nothing', () => {
    const ledger = Ledger.open(folder());
    for (const run of ['first', 'second']) {
      const w = ledger.writer(run);
      w.append('run_started', started);
      w.append('note_added', { text: run });
      w.close();
    }
    // Events are keyed by (run number << 32) + seq: seq 2^32 + 1 of the first run would be the
    // second run's seq 1 if seqs were not bounded.
    expect(ledger.event('first', 2 ** 32 + 1)).toBeUndefined();
    expect(ledger.event('first', 0)).toBeUndefined();
    expect(ledger.read('first', { from: 1, to: 2 ** 32 + 2 }).map((e) => e.run_id)).toEqual([
      'first',
      'first',
    ]);
    expect(ledger.read('first', { kinds: ['note_added', 'model_proposed'], to: 2 ** 40 }).length).toBe(1);
    expect(ledger.read('second', { from: -5 }).map((e) => e.seq)).toEqual([1, 2]);
    ledger.close();
  });
});

describe('reads by kind', () => {
  const kindsOf = (i: number) =>
    ['model_proposed', 'action_allowed', 'tool_invoked', 'tool_returned', 'action_denied', 'judge_verdict'][
      i % 6
    ]!;
  const payloadOf = (kind: string, i: number): Record<string, unknown> => {
    const call_id = `c${i}`;
    switch (kind) {
      case 'model_proposed':
        return { call_id, tool: 'read_file', args: { path: `f${i}` } };
      case 'action_allowed':
        return { call_id, rule: 'read:**' };
      case 'tool_invoked':
        return { call_id, tool: 'read_file', args: { path: `f${i}` } };
      case 'tool_returned':
        return { call_id, status: 'ok', duration_ms: i };
      case 'action_denied':
        return { call_id, rule: 'write:/etc/**', reason: 'outside the workspace' };
      default:
        return { passed: i % 2 === 0, tests_passed: i, tests_failed: 0, command: 'npm test' };
    }
  };
  function fill(ledger: Ledger, n: number): void {
    const w = ledger.writer('kinds');
    w.append('run_started', started);
    w.appendBatch(
      Array.from({ length: n }, (_, i) => ({ kind: kindsOf(i), payload: payloadOf(kindsOf(i), i) })),
    );
    w.close();
  }
  const seqsOf = (ledger: Ledger, kinds: string[], from?: number) =>
    ledger.read('kinds', { kinds, from }).map((e) => e.seq);
  const expected = (ledger: Ledger, kinds: string[], from = 1) =>
    ledger
      .read('kinds')
      .filter((e) => kinds.includes(e.kind) && e.seq >= from)
      .map((e) => e.seq);

  it('find rare, bulk and mixed kinds alike, and rare kinds through the partial index', () => {
    const ledger = Ledger.open(folder());
    fill(ledger, 600);
    for (const kinds of [
      ['action_denied'],
      ['action_denied', 'judge_verdict', 'run_started'],
      ['tool_returned'],
      ['tool_returned', 'action_denied'],
      ['no_such_kind'],
    ]) {
      expect(seqsOf(ledger, kinds), kinds.join()).toEqual(expected(ledger, kinds));
      expect(seqsOf(ledger, kinds, 300), kinds.join()).toEqual(expected(ledger, kinds, 300));
    }
    // The timeline's markers and "next notable" read rare kinds of runs of a million events: they
    // must not scan the run.
    const planOf = (kinds: string[]) => {
      const k = kindsQuery('seq', kinds);
      const plan = ledger.db.prepare(`EXPLAIN QUERY PLAN ${k.sql}`).all(...k.params(1, 1, 1e9, -1));
      return (plan as { detail: string }[]).map((p) => p.detail).join(' ');
    };
    expect(planOf(['action_denied', 'judge_verdict'])).toMatch(/USING (COVERING )?INDEX events_by_rare_kind/);
    // Bulk kinds and plain ranges go by the rowid: a run's seqs are one range of ids.
    expect(planOf(['tool_returned', 'action_denied'])).toMatch(
      /USING INTEGER PRIMARY KEY \(rowid>\? AND rowid<\?\)/,
    );
    ledger.close();
  });

  it.each([1, 2])('are the same after a ledger of schema %i with events in it is migrated', (schema) => {
    // The source: an executed run, and an imported one whose redacted events carry their digests.
    const source = folder();
    const src = Ledger.open(source);
    fill(src, 120);
    src.createRun('imported-run', { source: 'imported' });
    const imported = Array.from({ length: 5 }, (_, i) => ({
      seq: i + 1,
      kind: 'note_added',
      v: 1,
      at: `2026-01-01T00:00:0${i}.000Z`,
      payloadJson: JSON.stringify({ text: `note ${i}` }),
      hash: (i + 1).toString(16).padStart(64, 'a'),
      digest: i % 2 === 0 ? (i + 1).toString(16).padStart(64, 'd') : null,
    }));
    src.db.transaction(() => src.insertImported('imported-run', imported))();
    const runs = ['kinds', 'imported-run'];
    const want = runs.map((r) => src.read(r));
    src.close();
    // The same rows in a ledger built by migrations 1..schema only, in that schema's events table.
    const dir = folder();
    const old = openDatabase(ledgerPath(dir), { migrations: migrations.slice(0, schema) });
    expect(old.pragma('user_version', { simple: true })).toBe(schema);
    old.exec(`ATTACH '${ledgerPath(source)}' AS src;
      INSERT INTO runs SELECT * FROM src.runs;
      INSERT INTO events (run_no, seq, kind, v, at, payload, hash, digest)
        SELECT run_no, seq, kind, v, at, payload, hash, digest FROM src.events;
      DETACH src;`);
    old.close();

    const ledger = Ledger.open(dir);
    expect(ledger.db.pragma('user_version', { simple: true })).toBe(migrations.length);
    const indexes = ledger.db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events'")
      .pluck()
      .all();
    expect(indexes).toEqual(['events_by_rare_kind']);
    expect(runs.map((r) => ledger.read(r))).toEqual(want);
    expect(ledger.event('kinds', 61)).toEqual(want[0]![60]);
    expect(verifyEvents('kinds', ledger.iterate('kinds')).ok).toBe(true);
    expect(seqsOf(ledger, ['action_denied']).length).toBe(20);
    expect(seqsOf(ledger, ['action_denied'])).toEqual(expected(ledger, ['action_denied']));
    // Still append-only, and seq continues.
    expect(() => ledger.db.prepare('DELETE FROM events').run()).toThrow(/append-only: DELETE refused/);
    const w = ledger.writer('kinds');
    expect(w.append('note_added', { text: 'after the migration' }).seq).toBe(122);
    w.close();
    expect(verifyEvents('kinds', ledger.iterate('kinds')).ok).toBe(true);
    // The view for sqlite3 shells reads one run by its range of ids.
    const viewed = ledger.db
      .prepare("SELECT seq, hash FROM events_v WHERE run_id = 'kinds' ORDER BY seq")
      .all();
    expect(viewed.length).toBe(122);
    expect(viewed[60]).toEqual({ seq: 61, hash: want[0]![60]!.hash });
    const plan = ledger.db
      .prepare("EXPLAIN QUERY PLAN SELECT * FROM events_v WHERE run_id = 'kinds'")
      .all() as { detail: string }[];
    expect(plan.map((p) => p.detail).join(' ')).toMatch(
      /SEARCH e USING INTEGER PRIMARY KEY \(rowid>\? AND rowid<\?\)/,
    );
    ledger.close();
  });
});

describe('mirror lines', () => {
  it('are byte-identical to toJsonLine of the stored events', async () => {
    const { toJsonLine } = await import('../../shared/protocol');
    const f = freshFolder();
    const ledger = Ledger.open(f.dir);
    const w = ledger.writer('quote-run');
    w.append('run_started', { ...started, goal: 'ünïcode "quoted" \n newline' });
    w.append('mystery_kind', { nested: { a: [1, 2.5, null, true] } });
    w.close();
    const mirror = readFileSync(path.join(f.dir, 'quote-run', 'events.jsonl'), 'utf8');
    expect(mirror).toBe(
      ledger
        .read('quote-run')
        .map((e) => toJsonLine(e) + '\n')
        .join(''),
    );
    ledger.close();
    f.cleanup();
  });
});
