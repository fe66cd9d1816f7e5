import type pg from 'pg';
import { ProofloopError } from '../../../shared/result';
import {
  migrationHash,
  migrationName,
  migrationSql,
  migrations as allMigrations,
  pendingMigrations,
  type AppliedMigration,
  type Migration,
} from '../migrations';

/** The advisory lock key all ProofLoop processes take to migrate one database: one at a time. */
export const MIGRATION_LOCK = 0x70726f6f; // "proo"

/**
 * Brings the database's schema to `migrations` (migrations.ts, the one list of both engines):
 * refuses one applied migration that was edited since (its sha256 differs) or a schema newer than
 * this ProofLoop. Pending ones are applied in one transaction under pg_advisory_xact_lock, re-read
 * once the lock is held, so two processes opening the same new database never race one migration:
 * the second waits, then finds nothing to do. A role that may not create tables (a reader) only checks.
 */
export async function migratePg(
  client: pg.ClientBase,
  where: string,
  migrations: readonly Migration[] = allMigrations,
): Promise<void> {
  const first = await appliedOf(client);
  if (first && pendingMigrations(first, 'postgres', where, migrations).length === 0) return;
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, sha256 text NOT NULL, applied_at text NOT NULL)`);
    for (const m of pendingMigrations((await appliedOf(client)) ?? [], 'postgres', where, migrations)) {
      const sql = migrationSql(m, 'postgres');
      if (sql) await client.query(sql);
      await client.query(
        'INSERT INTO schema_migrations (version, name, sha256, applied_at) VALUES ($1, $2, $3, $4)',
        [m.version, migrationName(m, 'postgres'), migrationHash(m, 'postgres'), new Date().toISOString()],
      );
    }
    await client.query('COMMIT');
  } catch (e) {
    await client.query('ROLLBACK').catch(() => undefined);
    if (e instanceof ProofloopError) throw e;
    throw new ProofloopError('io', `cannot migrate the ledger at ${where}: ${(e as Error).message}`);
  }
}

async function appliedOf(client: pg.ClientBase): Promise<AppliedMigration[] | null> {
  const t = await client.query<{ t: string | null }>(`SELECT to_regclass('schema_migrations')::text AS t`);
  if (!t.rows[0]?.t) return null;
  const r = await client.query<AppliedMigration>(
    'SELECT version, name, sha256 FROM schema_migrations ORDER BY version',
  );
  return r.rows;
}
