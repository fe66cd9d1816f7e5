import { SqliteEngine } from './sqlite-engine';
import type { LedgerEngine } from './engine';

/**
 * The ledger a spec names: a postgres:// (or postgresql://) URL is a team's PostgreSQL server,
 * anything else a runs folder's embedded SQLite ledger. The CLI's `--ledger` gives the spec, else
 * PROOFLOOP_LEDGER, else the runs folder.
 */
export async function openEngine(spec: string): Promise<LedgerEngine> {
  if (isPostgresUrl(spec)) {
    // Loaded when a server is named: evaluating the PostgreSQL client and its engine at start cost
    // every command on a runs folder ~5 MB of RSS (`proofloop --version` 72 -> 67 MB).
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
