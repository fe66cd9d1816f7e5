import type pg from 'pg';
import { sha256Hex } from '../../crypto';
import { ProofloopError } from '../../../shared/result';
import type { Migration } from '../migrations';

/** The advisory lock key all ProofLoop processes take to migrate one database: one at a time. */
export const MIGRATION_LOCK = 0x70726f6f; // "proo"

interface Applied {
  version: number;
  name: string;
  sha256: string;
}

/**
 * Brings the database's schema to `migrations`: refuses one applied migration that was edited
 * since (its sha256 differs) or a schema newer than this ProofLoop. Pending ones are applied in one
 * transaction under pg_advisory_xact_lock, re-read once the lock is held, so two processes opening
 * the same new database never race one migration: the second waits, then finds nothing to do. A
 * role that may not create tables (a reader) only checks.
 */
export async function migratePg(
  client: pg.ClientBase,
  where: string,
  migrations: readonly Migration[],
): Promise<void> {
  const first = await appliedOf(client);
  if (first && upToDate(first, migrations, where)) return;
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, sha256 text NOT NULL, applied_at text NOT NULL)`);
    const applied = (await appliedOf(client)) ?? [];
    if (!upToDate(applied, migrations, where)) {
      const done = new Set(applied.map((a) => a.version));
      for (const m of migrations) {
        if (done.has(m.version)) continue;
        await client.query(m.sql);
        await client.query(
          'INSERT INTO schema_migrations (version, name, sha256, applied_at) VALUES ($1, $2, $3, $4)',
          [m.version, m.name, sha256Hex(m.sql), new Date().toISOString()],
        );
      }
    }
    await client.query('COMMIT');
  } catch (e) {
    await client.query('ROLLBACK').catch(() => undefined);
    if (e instanceof ProofloopError) throw e;
    throw new ProofloopError('io', `cannot migrate the ledger at ${where}: ${(e as Error).message}`);
  }
}

async function appliedOf(client: pg.ClientBase): Promise<Applied[] | null> {
  const t = await client.query<{ t: string | null }>(`SELECT to_regclass('schema_migrations')::text AS t`);
  if (!t.rows[0]?.t) return null;
  const r = await client.query<Applied>(
    'SELECT version, name, sha256 FROM schema_migrations ORDER BY version',
  );
  return r.rows;
}

/** Whether every migration is applied; throws on an edited one or a newer schema. */
function upToDate(applied: readonly Applied[], migrations: readonly Migration[], where: string): boolean {
  const latest = migrations.at(-1)?.version ?? 0;
  for (const a of applied) {
    if (a.version > latest) {
      throw new ProofloopError(
        'invalid_input',
        `${where} has schema version ${a.version}, newer than this ProofLoop knows (${latest}); upgrade ProofLoop`,
      );
    }
    const m = migrations.find((x) => x.version === a.version);
    if (m && sha256Hex(m.sql) !== a.sha256) {
      throw new ProofloopError(
        'invalid_input',
        `${where}: migration ${a.version} (${a.name}) was edited after it was applied`,
      );
    }
  }
  return migrations.every((m) => applied.some((a) => a.version === m.version));
}
