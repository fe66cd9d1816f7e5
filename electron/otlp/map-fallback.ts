import { durationMs, isError, isoOf, kindName, type LogMapper, type SpanMapper } from './map-util';

/** Anything no family claims: an event of its own kind (`otel_span`, or the log's event name), kept whole. */
export const fallbackSpans: SpanMapper = {
  family: 'fallback',
  span(s) {
    return [
      {
        kind: 'otel_span',
        at: isoOf(s.endNs) ?? isoOf(s.startNs),
        payload: {
          name: s.name,
          status: isError(s) ? 'error' : 'ok',
          duration_ms: durationMs(s.startNs, s.endNs),
        },
      },
    ];
  },
};

export const fallbackLogs: LogMapper = {
  family: 'fallback',
  log(l) {
    return [
      {
        kind: l.eventName ? kindName(l.eventName, 'otel_log') : 'otel_log',
        at: isoOf(l.timeNs) ?? isoOf(l.observedNs),
        payload: {
          ...(l.eventName ? { event: l.eventName } : {}),
          body: l.body,
          severity: l.severityText || l.severityNumber || null,
        },
      },
    ];
  },
};
