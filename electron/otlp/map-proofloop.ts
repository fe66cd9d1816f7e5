import { KIND_RE } from '../../shared/protocol';
import type { Attrs } from './types';
import { isoOf, type LogMapper, type MappedItem, type SpanMapper } from './map-util';

/**
 * What `proofloop export-otlp` wrote (export.ts): every record carries its event's kind, schema
 * version and payload as `proofloop.kind`, `proofloop.v` and `proofloop.payload` beside the GenAI
 * attributes, so a run sent out and received back is the same run, event for event.
 */
export const PAYLOAD_KEY = 'proofloop.payload';

/** `at` is asked only for a record export-otlp wrote (this family is asked first of every record). */
function restore(a: Attrs, at: () => string | undefined): MappedItem[] | null {
  const kind = a['proofloop.kind'];
  const text = a[PAYLOAD_KEY];
  if (typeof kind !== 'string' || !KIND_RE.test(kind) || typeof text !== 'string') return null;
  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return null;
  const v = a['proofloop.v'];
  return [
    {
      kind,
      at: typeof a['proofloop.at'] === 'string' ? a['proofloop.at'] : at(),
      payload: payload as Record<string, unknown>,
      ...(typeof v === 'number' && v > 1 ? { v } : {}),
    },
  ];
}

export const proofloopSpans: SpanMapper = {
  family: 'proofloop',
  span: (s) => restore(s.attributes, () => isoOf(s.startNs)),
};
export const proofloopLogs: LogMapper = {
  family: 'proofloop',
  log: (l) => restore(l.attributes, () => isoOf(l.timeNs)),
};
