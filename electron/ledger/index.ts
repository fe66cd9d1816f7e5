export {
  Ledger,
  RunWriter,
  type ImportedEvent,
  type LedgerReader,
  type CreateRunOptions,
  type AppendListener,
} from './ledger';
export type { SerializedItems } from './append-source';
export {
  ChainVerifier,
  digestRunIdOf,
  statedLinksOf,
  verifyEvents,
  withRecorded,
  type VerifyReport,
} from './verify';
export { repairMirrors } from './mirror';
export { ledgerPath } from './open';
export * from './types';
