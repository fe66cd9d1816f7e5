import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { migrations } from '../../electron/ledger/migrations';
import { PostgresEngine } from '../../electron/ledger/postgres/engine';
import { clusterForFile } from './helpers/pg-cluster';
import { runTs } from './helpers/tmp';

/**
 * Many processes on one PostgreSQL ledger, each a real Node process (helpers/pg-writer-child.ts):
 * contention for a run, a writer frozen or killed mid-append, and a reader of the cross-run feed
 * while transactions commit out of order.
 */
const pgc = clusterForFile();
const test = pgc.reason ? it.skip : it;
const CHILD = 'test/integration/helpers/pg-writer-child.ts';

interface Child {
  lines: string[];
  child: ReturnType<typeof runTs>['child'];
  done: ReturnType<typeof runTs>['done'];
  /** Resolves with the first line matching `re`. */
  until: (re: RegExp) => Promise<string>;
}

function writerChild(args: (string | number)[], stdin = false): Child {
  const lines: string[] = [];
  const waiters: { re: RegExp; resolve: (l: string) => void }[] = [];
  const { child, done } = runTs(CHILD, args.map(String), {
    stdin,
    onLine: (l) => {
      lines.push(l);
      for (const w of [...waiters]) {
        if (w.re.test(l)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(l);
        }
      }
    },
  });
  return {
    lines,
    child,
    done,
    until: (re) => {
      const hit = lines.find((l) => re.test(l));
      if (hit) return Promise.resolve(hit);
      return new Promise((resolve, reject) => {
        waiters.push({ re, resolve });
        void done.then((r) =>
          reject(new Error(`child ended (${r.code}) before ${re}: ${r.stdout}\n${r.stderr}`)),
        );
      });
    },
  };
}

async function gapsAndDuplicates(
  url: string,
  runId: string,
): Promise<{ n: number; max: number; distinct: number }> {
  const c = new pg.Client(url);
  await c.connect();
  try {
    const r = await c.query<{ n: string; max: string | null; distinct: string }>(
      `SELECT count(*) AS n, max(seq) AS max, count(DISTINCT seq) AS distinct
         FROM events JOIN runs USING (run_no) WHERE run_id = $1`,
      [runId],
    );
    const row = r.rows[0]!;
    return { n: Number(row.n), max: Number(row.max ?? 0), distinct: Number(row.distinct) };
  } finally {
    await c.end();
  }
}

const acks = (lines: readonly string[]) =>
  lines
    .filter((l) => l.startsWith('ACK '))
    .map((l) => ({ seq: Number(l.split(' ')[1]), hash: l.split(' ')[2]! }));

// Eight Node processes start on a machine of 2 shared cores: allow minutes, not the default minute.
describe('PostgreSQL ledger under concurrency', { timeout: 240_000 }, () => {
  test('8 processes, 4 runs, 2 writers contending for each: one writes, the other is refused by name; no gap, no duplicate, every chain verifies', async () => {
    const url = await pgc.db();
    // Made first, so that the 8 do not race to create the schema (that race is tested below).
    await (await PostgresEngine.connect(url)).close();
    const runs = ['ra', 'rb', 'rc', 'rd'];
    const kids = runs.flatMap((r) =>
      [0, 1].map(() => ({ run: r, c: writerChild([url, r, 5, 200, 10_000, 'wait'], true) })),
    );
    await Promise.all(kids.map((k) => k.c.until(/^(READY|REFUSED)/)));
    for (const k of kids) if (k.c.lines.some((l) => l.startsWith('READY'))) k.c.child.stdin.end('go\n');
    const results = await Promise.all(kids.map((k) => k.c.done));
    const engine = await PostgresEngine.connect(url);
    try {
      for (const r of runs) {
        const pair = kids.filter((k) => k.run === r);
        const winners = pair.filter((k) => k.c.lines.includes('DONE'));
        const losers = pair.filter((k) => k.c.lines.some((l) => l.startsWith('REFUSED')));
        expect(winners.length, `${r}: ${JSON.stringify(results)}`).toBe(1);
        expect(losers.length).toBe(1);
        expect(losers[0]!.c.lines.find((l) => l.startsWith('REFUSED'))).toMatch(
          new RegExp(`run ${r} already has a writer: pid \\d+ on .+ \\(child \\d+\\)`),
        );
        expect(await gapsAndDuplicates(url, r)).toEqual({ n: 1000, max: 1000, distinct: 1000 });
        const v = await engine.verify(r);
        expect(v).toMatchObject({ ok: true, events: 1000 });
        expect(acks(winners[0]!.c.lines).at(-1)).toEqual({ seq: 1000, hash: v.head_hash });
      }
    } finally {
      await engine.close();
    }
  });

  test('a writer frozen past its lease loses the run: another takes it, and the first is refused by name when it wakes', async () => {
    const url = await pgc.db();
    await (await PostgresEngine.connect(url)).close();
    const a = writerChild([url, 'frozen', 1000, 20, 600]);
    await a.until(/^ACK /);
    a.child.kill('SIGSTOP');
    try {
      const b = writerChild([url, 'frozen', 5, 20, 600, '', 0, 10_000]);
      expect((await b.done).stdout).toContain('DONE');
    } finally {
      a.child.kill('SIGCONT');
    }
    await a.done;
    expect(a.lines.find((l) => l.startsWith('REFUSED'))).toMatch(
      /the writer of run frozen lost its lock: its lease \(fence \d+\)/,
    );
    const engine = await PostgresEngine.connect(url);
    try {
      const v = await engine.verify('frozen');
      expect(v.ok).toBe(true);
      expect(v.events).toBe(acks(a.lines).length * 20 + 100);
    } finally {
      await engine.close();
    }
  });

  test('a writer killed mid-batch loses nothing it had acknowledged; its lease expires and another resumes the run', async () => {
    const url = await pgc.db();
    await (await PostgresEngine.connect(url)).close();
    const a = writerChild([url, 'killed', 10_000, 2000, 1500]);
    await a.until(/^ACK .*\n?/);
    await new Promise((r) => setTimeout(r, 300));
    a.child.kill('SIGKILL');
    await a.done;
    const acked = acks(a.lines);
    expect(acked.length).toBeGreaterThan(0);
    const started = Date.now();
    const b = writerChild([url, 'killed', 2, 100, 1500, '', 0, 20_000]);
    const ready = await b.until(/^READY/);
    // Not before the dead writer's lease ran out (1.5 s from its last append).
    expect(Date.now() - started).toBeGreaterThan(300);
    expect(ready).toMatch(/^READY \d+$/);
    expect((await b.done).stdout).toContain('DONE');
    const engine = await PostgresEngine.connect(url);
    try {
      for (const k of acked) expect((await engine.event('killed', k.seq))?.hash).toBe(k.hash);
      const v = await engine.verify('killed');
      expect(v.ok).toBe(true);
      expect(v.head_seq).toBeGreaterThanOrEqual(acked.at(-1)!.seq + 200);
      expect(await gapsAndDuplicates(url, 'killed')).toEqual({
        n: v.head_seq,
        max: v.head_seq,
        distinct: v.head_seq,
      });
    } finally {
      await engine.close();
    }
  });

  test('a reader of the cross-run feed sees every event exactly once while 8 writers hold their transactions open for random times', async () => {
    const url = await pgc.db();
    const reader = await PostgresEngine.connect(url);
    const kids = Array.from({ length: 8 }, (_, i) => writerChild([url, `feed${i}`, 12, 25, 10_000, '', 250]));
    const seen: string[] = [];
    let cursor = '';
    // What polling an ever-growing column would do: read past the highest transaction seen. It skips
    // what commits late; kept here to show that this test does make transactions commit out of order.
    const naive = new Set<string>();
    let naiveAfter = '0';
    let running = true;
    const all = Promise.all(kids.map((k) => k.done)).then((r) => {
      running = false;
      return r;
    });
    const client = new pg.Client(url);
    await client.connect();
    try {
      while (running) {
        const p = await reader.feed(cursor, 500);
        for (const e of p.events) seen.push(`${e.run_id}/${e.seq}`);
        cursor = p.cursor;
        const n = await client.query<{ tx: string; run_id: string; seq: string }>(
          `SELECT e.tx::text AS tx, r.run_id, e.seq FROM events e JOIN runs r USING (run_no)
            WHERE e.tx > $1::xid8 ORDER BY e.tx`,
          [naiveAfter],
        );
        for (const row of n.rows) naive.add(`${row.run_id}/${row.seq}`);
        if (n.rows.length > 0) naiveAfter = n.rows.at(-1)!.tx;
        await new Promise((r) => setTimeout(r, 5));
      }
      const results = await all;
      for (const r of results) expect(r.stdout, r.stderr).toContain('DONE');
      for (;;) {
        const p = await reader.feed(cursor, 500);
        if (p.events.length === 0) break;
        for (const e of p.events) seen.push(`${e.run_id}/${e.seq}`);
        cursor = p.cursor;
      }
    } finally {
      await client.end();
      await reader.close();
    }
    expect(seen.length).toBe(8 * 12 * 25);
    expect(new Set(seen).size).toBe(seen.length);
    for (let i = 0; i < 8; i++) {
      const mine = seen.filter((s) => s.startsWith(`feed${i}/`)).map((s) => Number(s.split('/')[1]));
      expect(mine).toEqual(Array.from({ length: 300 }, (_, j) => j + 1));
    }
    expect(naive.size, 'the naive reader should have skipped late commits').toBeLessThan(seen.length);
  });

  test('processes opening one new database at once migrate it once, under the advisory lock', async () => {
    const url = await pgc.db();
    const engines = await Promise.all(Array.from({ length: 6 }, () => PostgresEngine.connect(url)));
    try {
      const r = await engines[0]!.q<{ version: number }>(
        'SELECT version FROM schema_migrations ORDER BY version',
      );
      expect(r.rows.map((x) => x.version)).toEqual(migrations.map((m) => m.version));
    } finally {
      await Promise.all(engines.map((e) => e.close()));
    }
  });
});
