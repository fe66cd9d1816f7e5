import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { pgUnavailable, startCluster, type ClusterOptions, type PgCluster } from '../../support/pg-cluster';

export * from '../../support/pg-cluster';

/**
 * A cluster for one test file, when PostgreSQL is here: `db()` makes a fresh database on it and
 * gives its URL. Without PostgreSQL, `reason` says why and the file's PostgreSQL tests skip (the
 * reason is printed once).
 */
export function clusterForFile(opts: ClusterOptions = {}): {
  reason: string | null;
  db: () => Promise<string>;
  cluster: () => PgCluster;
} {
  const reason = pgUnavailable();
  let c: PgCluster | null = null;
  let n = 0;
  if (reason) {
    console.log(`PostgreSQL tests SKIPPED: ${reason}`);
  } else {
    beforeAll(async () => {
      c = await startCluster(opts);
    }, 120_000);
    afterAll(() => c?.stop());
  }
  return {
    reason,
    cluster: () => c!,
    db: async () => {
      const name = `t${process.pid}_${++n}`;
      const client = new pg.Client(c!.url());
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return c!.url(name);
    },
  };
}
