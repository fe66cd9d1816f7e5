import { envelopeEvent } from './envelope';
import type { FormatAdapter } from './types';

/**
 * ProofLoop's own envelope `{seq, run_id, kind, v, at, payload, prev, hash[, digest]}`. Chained:
 * the chain the line carries is checked by the importer, never recomputed.
 */
export const proofloopFormat: FormatAdapter = {
  name: 'proofloop',
  label: 'ProofLoop run',
  detect: (first) => 'prev' in first || 'hash' in first,
  map(record) {
    const ev = envelopeEvent(record, true);
    if ('error' in ev) return ev;
    ev.chain = { prev: record.prev, hash: record.hash, digest: record.digest };
    return [ev];
  },
  runId: (first) => (typeof first.run_id === 'string' ? first.run_id : null),
};
