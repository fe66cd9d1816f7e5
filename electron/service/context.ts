import type { PushName, PushOf } from '../../shared/api/contract';
import type { Ledger } from '../ledger';

/** What every domain's handlers may use: the open ledger, its folder, and the push channel. */
export interface ServiceContext {
  /** The open ledger; throws a clear error when no folder is open. */
  ledger(): Ledger;
  folder(): string;
  emit<P extends PushName>(channel: P, payload: PushOf<P>): void;
  /** Directory of the task catalog (built-in or --tasks). */
  tasksDir(): string;
}
