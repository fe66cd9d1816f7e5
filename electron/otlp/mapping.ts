import { checkPayload, KIND_RE, type NewEvent } from '../../shared/protocol';
import type { OtlpLog, OtlpMetric, OtlpSpan } from './types';
import type { LogMapper, MappedItem, RunMapState, SpanMapper } from './map-util';
import { PAYLOAD_KEY, proofloopLogs, proofloopSpans } from './map-proofloop';
import { openinferenceSpans } from './map-openinference';
import { genaiLogs, genaiSpans } from './map-genai';
import { agentLogs } from './map-agent-logs';
import { fallbackLogs, fallbackSpans } from './map-fallback';
import { metricItem } from './map-metrics';

/**
 * The mapping families, in the order they are asked; the first that claims a record maps it, and
 * the fallback claims everything. Adding a family: one map-*.ts file and one entry here.
 */
const SPAN_MAPPERS: readonly SpanMapper[] = [proofloopSpans, openinferenceSpans, genaiSpans, fallbackSpans];
const LOG_MAPPERS: readonly LogMapper[] = [proofloopLogs, agentLogs, genaiLogs, fallbackLogs];

// The raw records are built with their keys in canonical (sorted) order, as are decoded attributes
// (decode.ts): canonical JSON then copies only the small objects around them, not the raw record
// (sortedForStringify measured ~11% of the decode thread's time with the keys in arrival order).

function spanRaw(s: OtlpSpan, withResource: boolean, family: string): Record<string, unknown> {
  return {
    attributes: s.attributes,
    end_ns: s.endNs,
    ...(s.events.length > 0 ? { events: s.events.slice(0, 64) } : {}),
    ...(s.events.length > 64 ? { events_not_kept: s.events.length - 64 } : {}),
    ...(s.links.length > 0 ? { links: s.links.slice(0, 16) } : {}),
    mapped_by: family,
    name: s.name,
    parent_span_id: s.parentSpanId,
    ...(withResource ? { resource: s.resource } : {}),
    scope: s.scope,
    signal: 'span',
    span_id: s.spanId,
    span_kind: s.kind,
    start_ns: s.startNs,
    status: s.status,
    trace_id: s.traceId,
  };
}

function logRaw(l: OtlpLog, withResource: boolean, family: string): Record<string, unknown> {
  return {
    attributes: l.attributes,
    body: l.body,
    event_name: l.eventName || null,
    mapped_by: family,
    observed_ns: l.observedNs,
    ...(withResource ? { resource: l.resource } : {}),
    scope: l.scope,
    severity: { number: l.severityNumber, text: l.severityText },
    signal: 'log',
    ...(l.spanId ? { span_id: l.spanId } : {}),
    time_ns: l.timeNs,
    ...(l.traceId ? { trace_id: l.traceId } : {}),
  };
}

/**
 * The events of one record with its raw form beside them as `payload.otel` (on the first; the
 * others name the record's ids). An item its kind's schema refuses is kept as an event of the
 * record's own kind saying why, so one odd record cannot make the request's batch fail.
 */
function finish(
  items: MappedItem[],
  family: string,
  raw: Record<string, unknown>,
  fallbackKind: string,
): NewEvent[] {
  const ref = { mapped_by: family, signal: raw.signal, span_id: raw.span_id, trace_id: raw.trace_id };
  if (family === 'proofloop') {
    // The restored payload is that attribute; it is not kept twice.
    const { [PAYLOAD_KEY]: _payload, ...rest } = raw.attributes as Record<string, unknown>;
    raw = { ...raw, attributes: rest };
  }
  return items.map((it, i) => {
    const otel = i === 0 ? raw : ref;
    // A payload that came back from export-otlp keeps the otel of its first reception.
    const payload = 'otel' in it.payload ? it.payload : { ...it.payload, otel };
    const v = it.v ?? 1;
    if (!KIND_RE.test(it.kind)) {
      return {
        kind: fallbackKind,
        at: it.at,
        payload: { ...payload, mapping_refused: { kind: it.kind, reason: 'not a snake_case kind name' } },
      };
    }
    const checked = checkPayload(it.kind, v, payload);
    if (!checked.ok) {
      return {
        kind: fallbackKind,
        at: it.at,
        payload: { ...payload, mapping_refused: { kind: it.kind, reason: checked.message } },
      };
    }
    return { kind: it.kind, payload, ...(it.at ? { at: it.at } : {}), ...(it.v ? { v: it.v } : {}) };
  });
}

export function mapSpan(s: OtlpSpan, st: RunMapState, withResource: boolean): NewEvent[] {
  for (const m of SPAN_MAPPERS) {
    const items = m.span(s, st);
    if (items) return finish(items, m.family, spanRaw(s, withResource, m.family), 'otel_span');
  }
  return [];
}

export function mapLog(l: OtlpLog, st: RunMapState, withResource: boolean): NewEvent[] {
  for (const m of LOG_MAPPERS) {
    const items = m.log(l, st);
    if (items) return finish(items, m.family, logRaw(l, withResource, m.family), 'otel_log');
  }
  return [];
}

function metricRaw(m: OtlpMetric, withResource: boolean): Record<string, unknown> {
  return {
    mapped_by: 'metrics',
    ...(withResource ? { resource: m.resource } : {}),
    scope: m.scope,
    signal: 'metric',
  };
}

/** A metric data point as its event (map-metrics.ts): `otel_metric`, never dropped. */
export function mapMetric(m: OtlpMetric, withResource: boolean): NewEvent[] {
  return finish([metricItem(m)], 'metrics', metricRaw(m, withResource), 'otel_metric');
}
