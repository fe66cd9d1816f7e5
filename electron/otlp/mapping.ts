import { checkPayload, KIND_RE, type NewEvent } from '../../shared/protocol';
import type { OtlpLog, OtlpSpan } from './types';
import type { LogMapper, MappedItem, RunMapState, SpanMapper } from './map-util';
import { PAYLOAD_KEY, proofloopLogs, proofloopSpans } from './map-proofloop';
import { openinferenceSpans } from './map-openinference';
import { genaiLogs, genaiSpans } from './map-genai';
import { agentLogs } from './map-agent-logs';
import { fallbackLogs, fallbackSpans } from './map-fallback';

/**
 * The mapping families, in the order they are asked; the first that claims a record maps it, and
 * the fallback claims everything. Adding a family: one map-*.ts file and one entry here.
 */
const SPAN_MAPPERS: readonly SpanMapper[] = [proofloopSpans, openinferenceSpans, genaiSpans, fallbackSpans];
const LOG_MAPPERS: readonly LogMapper[] = [proofloopLogs, agentLogs, genaiLogs, fallbackLogs];

function spanRaw(s: OtlpSpan, withResource: boolean): Record<string, unknown> {
  return {
    signal: 'span',
    trace_id: s.traceId,
    span_id: s.spanId,
    parent_span_id: s.parentSpanId,
    name: s.name,
    span_kind: s.kind,
    start_ns: s.startNs,
    end_ns: s.endNs,
    status: s.status,
    attributes: s.attributes,
    ...(s.events.length > 0 ? { events: s.events.slice(0, 64) } : {}),
    ...(s.events.length > 64 ? { events_not_kept: s.events.length - 64 } : {}),
    ...(s.links.length > 0 ? { links: s.links.slice(0, 16) } : {}),
    scope: s.scope,
    ...(withResource ? { resource: s.resource } : {}),
  };
}

function logRaw(l: OtlpLog, withResource: boolean): Record<string, unknown> {
  return {
    signal: 'log',
    ...(l.traceId ? { trace_id: l.traceId } : {}),
    ...(l.spanId ? { span_id: l.spanId } : {}),
    event_name: l.eventName || null,
    time_ns: l.timeNs,
    observed_ns: l.observedNs,
    severity: { number: l.severityNumber, text: l.severityText },
    body: l.body,
    attributes: l.attributes,
    scope: l.scope,
    ...(withResource ? { resource: l.resource } : {}),
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
  const ref = { signal: raw.signal, trace_id: raw.trace_id, span_id: raw.span_id, mapped_by: family };
  if (family === 'proofloop') {
    // The restored payload is that attribute; it is not kept twice.
    const { [PAYLOAD_KEY]: _payload, ...rest } = raw.attributes as Record<string, unknown>;
    raw = { ...raw, attributes: rest };
  }
  return items.map((it, i) => {
    const otel = i === 0 ? { ...raw, mapped_by: family } : ref;
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
    if (items) return finish(items, m.family, spanRaw(s, withResource), 'otel_span');
  }
  return [];
}

export function mapLog(l: OtlpLog, st: RunMapState, withResource: boolean): NewEvent[] {
  for (const m of LOG_MAPPERS) {
    const items = m.log(l, st);
    if (items) return finish(items, m.family, logRaw(l, withResource), 'otel_log');
  }
  return [];
}
