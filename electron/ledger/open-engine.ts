import { SqliteEngine } from './sqlite-engine';
import type { LedgerEngine } from './engine';

/**
 * The ledger a spec names: a postgres:// (or postgresql://) URL is a team's PostgreSQL server,
 * anything else a runs folder's embedded SQLite ledger. The CLI's `--ledger` gives the spec, else
 * PROOFLOOP_LEDGER, else the runs folder.
 */
export async function openEngine(spec: string): Promise<LedgerEngine> {
  if (isPostgresUrl(spec)) {
    // Loaded when a server is named: the PostgreSQL client and its engine are ~1/6 of the CLI's
    // bundle, and every command on a runs folder (serve on a few sessions most of all) paid for them.
    const { PostgresEngine } = await import('./postgres/engine');
    return PostgresEngine.connect(spec);
  }
  return new SqliteEngine(spec);
}

/** The --ledger option, else PROOFLOOP_LEDGER when it names a server; undefined: the runs folder. */
export function ledgerSpec(option: string | undefined): string | undefined {
  return option ?? (process.env.PROOFLOOP_LEDGER || undefined);
}

export const isPostgresUrl = (s: string | undefined): s is string => !!s && /^postgres(ql)?:\/\//i.test(s);
