import { decodeRequest, type Encoding } from './decode';
import type { PreparedPart, RecordOf, RunKeys } from './run-keys';
import type { Decoded, Signal } from './types';

/** A request as the receiver's thread appends it: its parts per run key. */
export interface Prepared {
  signal: Signal;
  parts: PreparedPart[];
}

export type DecodeAnswer =
  { id: number; ok: true; prepared: Prepared } | { id: number; ok: false; refused: boolean; message: string };

/** What the decode thread is told besides bodies; in order with them. */
export type DecodeControl = { control: 'reset' } | { control: 'released'; key: string };

export function recordsOf(d: Decoded): RecordOf[] {
  if (d.signal === 'traces') return d.records.map((r) => ({ kind: 'span' as const, r }));
  if (d.signal === 'logs') return d.records.map((r) => ({ kind: 'log' as const, r }));
  return d.records.map((r) => ({ kind: 'metric' as const, r }));
}

/** A body decoded, keyed, mapped and serialised (the same in either thread); throws DecodeError. */
export function prepareRequest(keys: RunKeys, signal: Signal, body: Buffer, encoding: Encoding): Prepared {
  const d = decodeRequest(signal, body, encoding);
  return { signal: d.signal, parts: keys.prepare(recordsOf(d)) };
}
