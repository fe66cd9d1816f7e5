/** A JSON-safe attribute value after decoding (AnyValue, bounded). */
export type AttrValue = string | number | boolean | null | AttrValue[] | { [k: string]: AttrValue };
export type Attrs = Record<string, AttrValue>;

export interface Scope {
  name: string;
  version?: string;
}

/** One span as the receiver sees it, from protobuf or JSON alike. */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  kind: number;
  /** Unix nanoseconds, as a decimal string (64-bit: more than a double holds). */
  startNs: string;
  endNs: string;
  attributes: Attrs;
  events: { name: string; timeNs: string; attributes: Attrs }[];
  links: { traceId: string; spanId: string; attributes: Attrs }[];
  status: { code: number; message?: string };
  resource: Attrs;
  scope: Scope;
}

export interface OtlpLog {
  timeNs: string;
  observedNs: string;
  severityNumber: number;
  severityText: string;
  /** The record's event name: `eventName` (OTLP 1.5+), else the `event.name` attribute. */
  eventName: string;
  body: AttrValue;
  attributes: Attrs;
  traceId: string | null;
  spanId: string | null;
  resource: Attrs;
  scope: Scope;
}

export type Signal = 'traces' | 'logs' | 'metrics';

export type Decoded =
  | { signal: 'traces'; records: OtlpSpan[] }
  | { signal: 'logs'; records: OtlpLog[] }
  | { signal: 'metrics'; points: number };

/** A request that cannot be decoded: a 400 with this message (it names the field). */
export class DecodeError extends Error {
  override name = 'DecodeError';
}
