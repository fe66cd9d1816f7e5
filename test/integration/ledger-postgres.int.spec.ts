import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { PostgresEngine } from '../../electron/ledger/postgres/engine';
import { COPY_FROM } from '../../electron/ledger/postgres/writer';
import { migratePg } from '../../electron/ledger/postgres/migrate';
import { migrationHash, migrationName, migrations } from '../../electron/ledger/migrations';
import { clusterForFile } from './helpers/pg-cluster';

/** An artifact as a push stores it: its text and the sha256 of its UTF-8 bytes. */
const ART = {
  text: 'a whole tool output',
  digest: createHash('sha256').update('a whole tool output').digest('hex'),
};

/** What only the PostgreSQL engine has: triggers, roles, the head check, the migration check. */
const pgc = clusterForFile();
const test = pgc.reason ? it.skip : it;

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client(url);
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

const asUser = (url: string, user: string) => url.replace('postgres@', `${user}@`);

async function seeded(url: string): Promise<void> {
  const e = await PostgresEngine.connect(url);
  const w = await e.writer('r', { create: {} });
  await w.appendBatch([
    { kind: 'run_started', payload: { task_id: 't', goal: 'g', agent: { name: 'sim' } } },
    { kind: 'model_responded', payload: { content: 'hi' } },
  ]);
  await w.close();
  await e.close();
}

describe('PostgreSQL ledger: append-only, roles, migrations', () => {
  test('triggers refuse UPDATE, DELETE and TRUNCATE of events even to the owner, and a head that moves back', async () => {
    const url = await pgc.db();
    await seeded(url);
    await withClient(url, async (c) => {
      await expect(c.query(`UPDATE events SET kind = 'x'`)).rejects.toThrow(
        /UPDATE of events refused: the ledger is append-only/,
      );
      await expect(c.query('DELETE FROM events')).rejects.toThrow(/DELETE of events refused/);
      await expect(c.query('TRUNCATE events CASCADE')).rejects.toThrow(/TRUNCATE of events refused/);
      await expect(c.query('DELETE FROM runs')).rejects.toThrow(/DELETE of runs refused/);
      await expect(c.query('UPDATE runs SET head_seq = 1')).rejects.toThrow(
        /head cannot move from seq 2 back to seq 1/,
      );
      // A head moved past the stored events is refused at commit.
      await expect(c.query('UPDATE runs SET head_seq = 3')).rejects.toThrow(
        /head seq 3 names no stored event/,
      );
      // An event inserted past the head, with no head move, is refused.
      await expect(
        c.query(
          `INSERT INTO events (run_no, seq, kind, v, at, payload, hash) SELECT run_no, 3, 'x', 1, 'now', '\\x7b7d', '\\x${'00'.repeat(32)}' FROM runs`,
        ),
      ).rejects.toThrow(/run r event seq 3 is past its head seq 2/);
      // An event of no run (no foreign key since migration 5: the statement trigger checks it).
      await expect(
        c.query(
          `INSERT INTO events (run_no, seq, kind, v, at, payload, hash) VALUES (999, 1, 'x', 1, 'now', '\\x7b7d', '\\x${'00'.repeat(32)}')`,
        ),
      ).rejects.toThrow(/events of run_no 999 name no run/);
      const n = await c.query<{ n: string }>('SELECT count(*) AS n FROM events');
      expect(Number(n.rows[0]!.n)).toBe(2);
    });
    const e = await PostgresEngine.connect(url);
    expect((await e.verify('r')).ok).toBe(true);
    await e.close();
  });

  test("the feed's end is its last event when transaction ids cross a power of ten (numbers, not text)", async () => {
    const url = await pgc.db();
    const e = await PostgresEngine.connect(url);
    try {
      const w = await e.writer('xids', { create: {} });
      await w.appendBatch([
        { kind: 'run_started', payload: { task_id: 't', goal: 'g', agent: { name: 'sim' } } },
      ]);
      // Spend transaction ids up to just below the next power of ten, then append across it.
      const now = Number((await e.q<{ x: string }>('SELECT pg_current_xact_id()::text AS x')).rows[0]!.x);
      const next = 10 ** Math.ceil(Math.log10(now + 2));
      expect(next - now).toBeLessThan(100_000);
      for (let x = now + 1; x < next - 1; x++) await e.q('SELECT pg_current_xact_id()');
      const below = await w.appendBatch([{ kind: 'model_responded', payload: { content: 'below' } }]);
      await e.q('SELECT pg_current_xact_id()');
      await w.appendBatch([{ kind: 'model_responded', payload: { content: 'above' } }]);
      await w.close();
      const txs = (
        await e.q<{ tx: string }>(
          `SELECT tx::text AS tx FROM events e JOIN runs r USING (run_no)
           WHERE r.run_id = 'xids' AND e.seq >= $1 ORDER BY e.seq`,
          [below[0]!.seq],
        )
      ).rows.map((r) => r.tx);
      expect(txs[0]!.length).toBeLessThan(txs[1]!.length);
      // Text order puts '9…' after '10…': the end would be the event below, and the one above news again.
      expect((await e.feed(await e.feedEnd())).events).toEqual([]);
    } finally {
      await e.close();
    }
  });

  test('the writer role appends and reads but cannot edit events; the reader role only reads', async () => {
    const url = await pgc.db();
    await seeded(url);
    await withClient(url, async (c) => {
      await c.query(`DO $$ BEGIN
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'alice') THEN CREATE ROLE alice LOGIN IN ROLE proofloop_writer; END IF;
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'bob') THEN CREATE ROLE bob LOGIN IN ROLE proofloop_reader; END IF;
      END $$`);
    });
    const alice = await PostgresEngine.connect(asUser(url, 'alice'));
    try {
      const w = await alice.writer('by-alice', { create: {} });
      await w.append('run_started', { task_id: 't', goal: 'g', agent: { name: 'sim' } });
      await w.close();
      expect((await alice.verify('by-alice')).ok).toBe(true);
      await expect(alice.q(`UPDATE events SET kind = 'x'`)).rejects.toThrow(
        /permission denied for table events/,
      );
      await expect(alice.q('DELETE FROM events')).rejects.toThrow(/permission denied for table events/);
      await expect(alice.q('TRUNCATE events')).rejects.toThrow(/permission denied/);
      // A run's meta moves with it by push (migration 5); its seq, head and source stay the ledger's.
      await expect(alice.q(`UPDATE runs SET source = 'bundle'`)).rejects.toThrow(/permission denied/);
      await expect(alice.q(`UPDATE runs SET run_id = 'x'`)).rejects.toThrow(/permission denied/);
      await expect(alice.q('DROP TABLE events')).rejects.toThrow(/must be owner/);
      // A run's artifacts go in with a push (migration 6), and are never edited or taken out.
      expect(await alice.putArtifacts('by-alice', [ART])).toBe(1);
      expect(await alice.artifact('by-alice', ART.digest)).toBe(ART.text);
      await expect(alice.q(`UPDATE artifacts SET content = 'x'`)).rejects.toThrow(/permission denied/);
      await expect(alice.q('DELETE FROM run_artifacts')).rejects.toThrow(/permission denied/);
    } finally {
      await alice.close();
    }
    const bob = await PostgresEngine.connect(asUser(url, 'bob'));
    try {
      expect((await bob.runs()).map((r) => r.run_id).sort()).toEqual(['by-alice', 'r']);
      expect((await bob.verify('r')).ok).toBe(true);
      expect((await bob.feed('')).events.length).toBe(3);
      await expect(bob.writer('r')).rejects.toThrow(/permission denied/);
      await expect(bob.createRun('new-run')).rejects.toThrow(/permission denied/);
      expect(await bob.artifact('by-alice', ART.digest)).toBe(ART.text);
      await expect(bob.putArtifacts('r', [ART])).rejects.toThrow(/permission denied/);
    } finally {
      await bob.close();
    }
  });

  test(`a large append (COPY_FROM events or more: the head moved, then COPY) chains like a small one; a writer that lost its lease is refused at one and stores nothing`, async () => {
    const url = await pgc.db();
    const e = await PostgresEngine.connect(url);
    try {
      const items = (n: number, from: number) =>
        Array.from({ length: n }, (_, i) => ({
          kind: 'model_proposed',
          payload: {
            call_id: `c${from + i}`,
            tool: 'read_file',
            args: { path: `é/${from + i}.py` },
            tokens: i,
          },
        }));
      const w = await e.writer('big', { create: {}, leaseMs: 300 });
      await w.appendBatch([
        { kind: 'run_started', payload: { task_id: 't', goal: 'g', agent: { name: 'sim' } } },
      ]);
      const big = await w.appendBatch(items(COPY_FROM + 50, 1));
      expect(big.map((x) => x.seq)).toEqual(Array.from({ length: COPY_FROM + 50 }, (_, i) => i + 2));
      await w.appendBatch(items(3, 1000));
      expect(await e.verify('big')).toMatchObject({ ok: true, events: COPY_FROM + 54 });
      expect((await e.read('big', { from: 2, to: 2 }))[0]!.payload).toEqual(items(1, 1)[0]!.payload);

      // Frozen past its lease (its renewal timer stopped as a frozen process's would), taken over.
      (w as unknown as { timer: NodeJS.Timeout }).timer.unref();
      clearInterval((w as unknown as { timer: NodeJS.Timeout }).timer);
      await new Promise((r) => setTimeout(r, 450));
      const w2 = await e.writer('big', { leaseMs: 10_000 });
      await expect(w.appendBatch(items(COPY_FROM, 2000))).rejects.toThrow(
        new RegExp(`lost its lock: its lease \\(fence ${w.fence}\\) was taken by another writer`),
      );
      const head = (await e.run('big'))!;
      expect(head.head_seq).toBe(COPY_FROM + 54);
      await w2.appendBatch(items(COPY_FROM, 3000));
      await w2.close();
      expect(await e.verify('big')).toMatchObject({ ok: true, events: 2 * COPY_FROM + 54 });
    } finally {
      await e.close();
    }
  });

  test('a database migrated by the former list (PostgreSQL 1-3) opens: the rest of the one list is applied under the lock', async () => {
    const url = await pgc.db();
    await withClient(url, (c) => migratePg(c, 'former', migrations.slice(0, 3)));
    await seeded(url);
    const rows = await withClient(url, (c) =>
      c.query<{ version: number; name: string; sha256: string }>(
        'SELECT version, name, sha256 FROM schema_migrations ORDER BY version',
      ),
    );
    expect(rows.rows.map((r) => [r.version, r.name])).toEqual(
      migrations.map((m) => [m.version, migrationName(m, 'postgres')]),
    );
    expect(rows.rows.map((r) => r.sha256)).toEqual(migrations.map((m) => migrationHash(m, 'postgres')));
    const e = await PostgresEngine.connect(url);
    expect((await e.verify('r')).ok).toBe(true);
    await e.close();
  });

  test('a migration edited after it was applied is refused by name', async () => {
    const url = await pgc.db();
    await (await PostgresEngine.connect(url)).close();
    await withClient(url, (c) => c.query(`UPDATE schema_migrations SET sha256 = 'x' WHERE version = 2`));
    await expect(PostgresEngine.connect(url)).rejects.toThrow(
      /migration 2 \(writer and reader roles\) was edited after it was applied/,
    );
  });

  test('the payload is stored as the canonical bytes that were hashed (bytea, not jsonb): the server can recompute the link', async () => {
    const url = await pgc.db();
    const e = await PostgresEngine.connect(url);
    const w = await e.writer('bytes', { create: {} });
    await w.appendBatch([
      { kind: 'custom', payload: { b: 'nul\u0000', a: 1 }, at: '2026-12-01T00:00:00.000Z' },
    ]);
    await w.close();
    // hash = sha256(prev hex + sha256(JCS of {at, kind, payload, run_id, seq, v}) hex), prev of seq 1 is 64 zeros.
    const r = await e.q<{ payload: Buffer; t: string; ok: boolean }>(
      `SELECT payload, pg_typeof(payload)::text AS t,
              sha256(convert_to(repeat('0', 64) || encode(sha256(
                convert_to('{"at":"2026-12-01T00:00:00.000Z","kind":"custom","payload":', 'UTF8') || payload ||
                convert_to(',"run_id":"bytes","seq":1,"v":1}', 'UTF8')), 'hex'), 'UTF8')) = hash AS ok
         FROM events`,
    );
    await e.close();
    expect(r.rows[0]!.t).toBe('bytea');
    expect(r.rows[0]!.payload.toString('utf8')).toBe('{"a":1,"b":"nul\\u0000"}');
    expect(r.rows[0]!.ok).toBe(true);
  });
});
