import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { PostgresEngine } from '../../electron/ledger/postgres/engine';
import { clusterForFile } from './helpers/pg-cluster';

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
      const n = await c.query<{ n: string }>('SELECT count(*) AS n FROM events');
      expect(Number(n.rows[0]!.n)).toBe(2);
    });
    const e = await PostgresEngine.connect(url);
    expect((await e.verify('r')).ok).toBe(true);
    await e.close();
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
      await expect(alice.q(`UPDATE runs SET meta = '{}'`)).rejects.toThrow(/permission denied/);
      await expect(alice.q('DROP TABLE events')).rejects.toThrow(/must be owner/);
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
    } finally {
      await bob.close();
    }
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
