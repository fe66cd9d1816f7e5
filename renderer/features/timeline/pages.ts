/** Events per page: one 'events.read' call (the event cache's and the conversation's unit). */
export const PAGE_SIZE = 500;

export const pageOf = (seq: number): number => Math.floor((seq - 1) / PAGE_SIZE);

/**
 * Whether a seq that its loaded page does not hold is a gap in the run (the source skipped it)
 * rather than an event appended after the page was read: only a seq up to the head the page was
 * read at, and the run's head now, can be a gap. (A live run's page keeps showing while it is read
 * again; the seqs it grew by are pending, not missing.)
 */
export const isGap = (held: boolean, readAtHead: number, head: number, seq: number): boolean =>
  !held && seq >= 1 && seq <= Math.min(readAtHead, head);
