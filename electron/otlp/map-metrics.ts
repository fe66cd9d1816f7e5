import type { OtlpMetric } from './types';
import { isoOf, type MappedItem } from './map-util';

/**
 * Metric data points (`POST /v1/metrics`): each is an event of its own kind, `otel_metric`, in the
 * run of the session its attributes or resource name (Claude Code puts `session.id` on every
 * point: its token, cost, lines-of-code and session counters join the session's run), else in
 * the service's metrics run (Codex 0.169 names no thread on its metrics). Kept as sent, the
 * metric's name, unit, type and the point's value and attributes, not folded into the run's
 * counters: a cumulative sum repeats what earlier points said, and the run's tokens are already
 * counted from its spans and logs. Nothing is dropped: a metric with no point is one event too.
 */
export function metricItem(m: OtlpMetric): MappedItem {
  return {
    kind: 'otel_metric',
    at: isoOf(m.timeNs),
    payload: {
      metric: m.name,
      ...(m.description ? { description: m.description } : {}),
      unit: m.unit,
      type: m.type,
      ...(m.monotonic !== null ? { monotonic: m.monotonic } : {}),
      ...(m.temporality !== null
        ? { temporality: m.temporality === 1 ? 'delta' : m.temporality === 2 ? 'cumulative' : 'unspecified' }
        : {}),
      value: m.value,
      attributes: m.attributes,
      start_ns: m.startNs,
      time_ns: m.timeNs,
    },
  };
}
