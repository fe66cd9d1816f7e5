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

/**
 * One data point of a metric (or, for a metric that has none, the metric itself, value null): a
 * record like a span or a log, so that every point sent is an event (decode-json.ts, metricsOf).
 */
export interface OtlpMetric {
  name: string;
  description: string;
  unit: string;
  /** gauge, sum, histogram, exponential_histogram, summary; '' for a metric with no data. */
  type: string;
  /** A sum's isMonotonic; null for the other types. */
  monotonic: boolean | null;
  /** AggregationTemporality (1 delta, 2 cumulative); null where the type has none. */
  temporality: number | null;
  startNs: string;
  timeNs: string;
  /** The point's attributes (Claude Code puts `session.id` here). */
  attributes: Attrs;
  /** gauge/sum: the number; histogram, exponential_histogram, summary: their fields; null: no point. */
  value: AttrValue;
  /** Points name no trace; the fields are here so a point keys to a run as a log does. */
  traceId: null;
  spanId: null;
  resource: Attrs;
  scope: Scope;
}

export type Signal = 'traces' | 'logs' | 'metrics';

export type Decoded =
  | { signal: 'traces'; records: OtlpSpan[] }
  | { signal: 'logs'; records: OtlpLog[] }
  | { signal: 'metrics'; records: OtlpMetric[] };

/** A request that cannot be decoded: a 400 with this message (it names the field). */
export class DecodeError extends Error {
  override name = 'DecodeError';
}
