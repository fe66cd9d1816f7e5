/**
 * The spans of a run received over OTLP, read for its span tree: one row per span, at the seq of
 * the span's first event (the one that keeps its raw record in `payload.otel`). Read by SQL from
 * the stored payloads, never the events into memory; bounded, in arrival order.
 */
import { ID_RANGE, idRange } from '../ledger/event-ids';
import type { ServiceContext } from './context';
import type { Handler as H } from './handler';
import { requireRun } from './ledger';

/** Spans returned at most: the tree draws only the rows in view, but the answer is one JSON text. */
export const MAX_SPANS = 100_000;

interface Row {
  seq: number;
  span_id: string | null;
  parent_span_id: string | null;
  trace_id: string | null;
  name: string | null;
  start_ns: string | number | null;
  end_ns: string | number | null;
  status: number | null;
  kind: string;
}

export function spanHandlers(ctx: ServiceContext) {
  const spans: H<'run.spans'> = ({ run_id }) => {
    const run = requireRun(ctx, run_id);
    if (run.format !== 'otlp') return { spans: [], truncated: false };
    const ledger = ctx.ledger();
    const range = idRange(ledger.runNo(run_id)!, 1, Number.MAX_SAFE_INTEGER);
    // The first event of a span's record carries `otel.name`; its others only name the span.
    const rows = ledger.db
      .prepare(
        `SELECT seq, kind,
                json_extract(payload, '$.otel.span_id') AS span_id,
                json_extract(payload, '$.otel.parent_span_id') AS parent_span_id,
                json_extract(payload, '$.otel.trace_id') AS trace_id,
                json_extract(payload, '$.otel.name') AS name,
                json_extract(payload, '$.otel.start_ns') AS start_ns,
                json_extract(payload, '$.otel.end_ns') AS end_ns,
                json_extract(payload, '$.otel.status.code') AS status
           FROM events
          WHERE ${ID_RANGE} AND json_extract(payload, '$.otel.signal') = 'span'
            AND json_extract(payload, '$.otel.name') IS NOT NULL
          ORDER BY id LIMIT ?`,
      )
      .all(...range, MAX_SPANS + 1) as Row[];
    const seen = new Set<string>();
    const out = [];
    for (const r of rows.slice(0, MAX_SPANS)) {
      if (typeof r.span_id !== 'string' || r.span_id === '' || seen.has(r.span_id)) continue;
      seen.add(r.span_id);
      out.push({
        seq: r.seq,
        span_id: r.span_id,
        parent_span_id: typeof r.parent_span_id === 'string' && r.parent_span_id ? r.parent_span_id : null,
        trace_id: typeof r.trace_id === 'string' ? r.trace_id : null,
        name: String(r.name),
        start_ns: r.start_ns === null ? '0' : String(r.start_ns),
        end_ns: r.end_ns === null ? '0' : String(r.end_ns),
        status: typeof r.status === 'number' ? r.status : 0,
        kind: r.kind,
      });
    }
    return { spans: out, truncated: rows.length > MAX_SPANS };
  };
  return { 'run.spans': spans };
}
