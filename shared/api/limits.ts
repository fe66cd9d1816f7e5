/**
 * Bounds of the contract that the page needs as well: apart from the schemas (ledger.ts) so that
 * the renderer reads them without building the contract's zod schemas.
 */

/** Rows the runs list asks for in one `runs.details` call: more than a screen, bounded for the service's thread. */
export const RUNS_DETAILS_MAX = 100;
