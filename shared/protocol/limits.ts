/** The largest seq a run can have: the ledger keys events by run number and a 32-bit seq. */
export const MAX_SEQ = 2 ** 32 - 1;
