import type { PushName, PushOf } from '../../shared/api/contract';
import type { Ledger } from '../ledger';
import type { LedgerEngine } from '../ledger/engine';

/**
 * What every domain's handlers may use: the open ledger (through the one engine interface, and the
 * runs folder's SQLite ledger itself where an operation has a faster embedded path), its folder,
 * and the push channel.
 */
export interface ServiceContext {
  /** The open ledger, whichever engine keeps it; throws a clear error when none is open. */
  engine(): LedgerEngine;
  /**
   * The open runs folder's SQLite ledger, or null when the open ledger is a team's server: the
   * embedded fast paths (worker-thread diff and export, SQL search) use it, the rest go through engine().
   */
  sqlite(): Ledger | null;
  /**
   * The open runs folder's SQLite ledger, for what only a runs folder has (its import bookkeeping,
   * bundles opened into it): on a team ledger, an error that says so.
   */
  ledger(): Ledger;
  /**
   * The local folder: the runs folder, or for a team ledger the folder this process keeps its
   * local files in (run workspaces and artifacts, bundles written).
   */
  folder(): string;
  emit<P extends PushName>(channel: P, payload: PushOf<P>): void;
  /** Directory of the task catalog (built-in or --tasks). */
  tasksDir(): string;
}
