import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { PostgresEngine } from '../../electron/ledger/postgres/engine';
import { pgUnavailable, promote, startCluster, type PgCluster } from './helpers/pg-cluster';
import { runTs } from './helpers/tmp';

/**
 * A primary with a synchronous streaming replica (two local clusters): the primary is killed
 * (SIGKILL) while a writer process appends, the replica is promoted, and the ledger is read and
 * written there. What the writer had acknowledged must be there, with the same hashes.
 */
const reason = pgUnavailable();
if (reason) console.log(`PostgreSQL failover test SKIPPED: ${reason}`);
const test = reason ? it.skip : it;

async function waitFor<T>(what: string, fn: () => Promise<T | null>, ms = 60_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => null);
    if (v !== null) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('PostgreSQL ledger: failover to a synchronous replica', { timeout: 240_000 }, () => {
  test('SIGKILL the primary during appends, promote the replica: nothing acknowledged is lost and the chain verifies', async () => {
    let primary: PgCluster | null = null;
    let replica: PgCluster | null = null;
    try {
      primary = await startCluster({
        conf: ['wal_level = replica', 'max_wal_senders = 4', 'synchronous_commit = on'],
        hba: ['host replication all 127.0.0.1/32 trust'],
      });
      const admin = new pg.Client(primary.url());
      await admin.connect();
      await admin.query('CREATE DATABASE ledger');
      await admin.end();
      await (await PostgresEngine.connect(primary.url('ledger'))).close();
      // Once promoted it has no standby of its own: it must not wait for one (a failover tool sets this).
      replica = await startCluster({
        replicaOf: { port: primary.port },
        conf: ["synchronous_standby_names = ''"],
      });
      // Synchronous from now on: a commit on the primary returns only once the replica has it.
      await waitFor('a synchronous standby', async () => {
        const c = new pg.Client(primary!.url());
        await c.connect();
        try {
          await c.query(`ALTER SYSTEM SET synchronous_standby_names = '*'`);
          await c.query('SELECT pg_reload_conf()');
          const r = await c.query<{ sync_state: string }>('SELECT sync_state FROM pg_stat_replication');
          return r.rows.some((x) => x.sync_state === 'sync') ? true : null;
        } finally {
          await c.end();
        }
      });
      const lines: string[] = [];
      let acks = 0;
      let resolveAcks: () => void = () => undefined;
      const enough = new Promise<void>((r) => (resolveAcks = r));
      process.stderr.write('failover: replica streaming synchronously; appending\n');
      const w = runTs(
        'test/integration/helpers/pg-writer-child.ts',
        [primary.url('ledger'), 'fo', '100000', '50', '2000'],
        {
          onLine: (l) => {
            lines.push(l);
            if (l.startsWith('ACK ') && ++acks === 5) resolveAcks();
          },
        },
      );
      await enough;
      process.kill(primary.pid(), 'SIGKILL');
      const ended = await w.done;
      expect(ended.code, ended.stdout + ended.stderr).not.toBe(0);
      const acked = lines
        .filter((l) => l.startsWith('ACK '))
        .map((l) => ({ seq: Number(l.split(' ')[1]), hash: l.split(' ')[2]! }));
      expect(acked.length).toBeGreaterThanOrEqual(5);

      promote(replica);
      const engine = await waitFor('the promoted replica', () =>
        PostgresEngine.connect(replica!.url('ledger')),
      );
      try {
        for (const a of acked) expect((await engine.event('fo', a.seq))?.hash).toBe(a.hash);
        const v = await engine.verify('fo');
        expect(v.ok).toBe(true);
        expect(v.head_seq).toBeGreaterThanOrEqual(acked.at(-1)!.seq);
        // The dead writer's lease lapses on the new primary too; another writer resumes the run.
        const resumed = await waitFor('the lease to lapse', () =>
          engine.writer('fo', { label: 'after failover' }).catch(() => null),
        );
        const more = await resumed.appendBatch([
          { kind: 'model_responded', payload: { content: 'after failover' } },
        ]);
        await resumed.close();
        expect(more[0]!.seq).toBe(v.head_seq + 1);
        expect((await engine.verify('fo')).ok).toBe(true);
      } finally {
        await engine.close();
      }
    } finally {
      replica?.stop();
      primary?.stop();
    }
  });
});
