export {
  Ledger,
  RunWriter,
  type ImportedEvent,
  type LedgerReader,
  type CreateRunOptions,
  type AppendListener,
  type SerializedItems,
} from './ledger';
export { ChainVerifier, digestRunIdOf, verifyEvents, type VerifyReport } from './verify';
export { repairMirrors } from './mirror';
export { ledgerPath } from './open';
export * from './types';
