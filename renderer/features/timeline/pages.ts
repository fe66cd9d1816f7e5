/** Events per page: one 'events.read' call (the event cache's and the conversation's unit). */
export const PAGE_SIZE = 500;

export const pageOf = (seq: number): number => Math.floor((seq - 1) / PAGE_SIZE);
