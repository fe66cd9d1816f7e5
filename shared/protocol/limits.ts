/** The largest seq a run can have: the ledger keys events by run number and a 32-bit seq. */
export const MAX_SEQ = 2 ** 32 - 1;

/**
 * The deepest nesting of objects and arrays a payload may have. Every walker of payloads (canonical
 * JSON, digests, redaction, checks, the projection, diff, bundles, the renderer's trees) may then
 * recurse without a stack the input controls: a deeper line is refused where it comes in, by
 * `depthOverText` or `depthOverValue`, never walked.
 */
export const MAX_DEPTH = 256;
