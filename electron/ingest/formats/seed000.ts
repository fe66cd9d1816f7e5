import { envelopeEvent } from './envelope';
import type { FormatAdapter } from './types';

/**
 * Seed article 000's lines `{seq, run_id, kind, at, payload}`, without v, prev or hash: an
 * unchained run, sealed when imported. How its payloads read as protocol v1 is
 * shared/formats/seed000.ts. It claims any object, so it is asked last.
 */
export const seed000Format: FormatAdapter = {
  name: 'seed000',
  label: 'seed 000 JSONL',
  detect: (first) => 'seq' in first || 'kind' in first,
  map(record) {
    const ev = envelopeEvent(record, false);
    return 'error' in ev ? ev : [ev];
  },
  runId: (first) => (typeof first.run_id === 'string' ? first.run_id : null),
};
