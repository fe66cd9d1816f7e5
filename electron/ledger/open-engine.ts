import { isPostgresUrl, PostgresEngine } from './postgres/engine';
import { SqliteEngine } from './sqlite-engine';
import type { LedgerEngine } from './engine';

/**
 * The ledger a spec names: a postgres:// (or postgresql://) URL is a team's PostgreSQL server,
 * anything else a runs folder's embedded SQLite ledger. The CLI's `--ledger` gives the spec, else
 * PROOFLOOP_LEDGER, else the runs folder.
 */
export async function openEngine(spec: string): Promise<LedgerEngine> {
  if (isPostgresUrl(spec)) return PostgresEngine.connect(spec);
  return new SqliteEngine(spec);
}

/** The --ledger option, else PROOFLOOP_LEDGER when it names a server; undefined: the runs folder. */
export function ledgerSpec(option: string | undefined): string | undefined {
  return option ?? (process.env.PROOFLOOP_LEDGER || undefined);
}

export { isPostgresUrl };
