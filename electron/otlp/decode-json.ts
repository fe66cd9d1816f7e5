import { bounded, DEEPER, idText, LIMITS, ordered, WHOLE } from './decode-values';
import {
  DecodeError,
  type Attrs,
  type AttrValue,
  type OtlpLog,
  type OtlpMetric,
  type OtlpSpan,
  type Scope,
} from './types';
import { isObj, type Obj } from '../../shared/json-read.js';

/**
 * A request in the OTLP JSON mapping (lowerCamelCase fields, or the proto field names; hex ids,
 * 64-bit integers as numbers or strings, enums as numbers or names) to the receiver's records. The
 * walk checks every field it uses and names the one that is wrong; attribute values are bounded
 * here, once, for every mapping after it.
 */

const SPAN_KINDS = [
  'SPAN_KIND_UNSPECIFIED',
  'SPAN_KIND_INTERNAL',
  'SPAN_KIND_SERVER',
  'SPAN_KIND_CLIENT',
  'SPAN_KIND_PRODUCER',
  'SPAN_KIND_CONSUMER',
];
const STATUS_CODES = ['STATUS_CODE_UNSET', 'STATUS_CODE_OK', 'STATUS_CODE_ERROR'];

function field(o: Obj, name: string): unknown {
  // The protobuf JSON mapping lets a parser accept the proto field name as well.
  if (name in o) return o[name];
  return o[snakeOf(name)];
}

/** Field names are a few constants: their proto names are made once (a span lacks several fields). */
const snakes = new Map<string, string>();
function snakeOf(name: string): string {
  let snake = snakes.get(name);
  if (snake === undefined) {
    snake = name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    snakes.set(name, snake);
  }
  return snake;
}

function list(o: Obj, name: string, at: string): unknown[] {
  const v = field(o, name);
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new DecodeError(`${at}.${name}: not an array`);
  return v;
}

function obj(v: unknown, at: string): Obj {
  if (!isObj(v)) throw new DecodeError(`${at}: not an object`);
  return v;
}

function str(o: Obj, name: string, at: string): string {
  const v = field(o, name);
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw new DecodeError(`${at}.${name}: not a string`);
  return v;
}

/** A trace or span id: hex or base64 (idText). */
function id(o: Obj, name: string, bytes: number, at: string): string | null {
  const v = field(o, name);
  if (v === undefined || v === null || v === '') return null;
  if (typeof v !== 'string') throw new DecodeError(`${at}.${name}: not a string`);
  return idText(v, bytes, `${at}.${name}`);
}

/** A fixed64/uint64 field as a decimal string: JSON gives a string or a number, protobuf a Long. */
function ns(o: Obj, name: string, at: string): string {
  const v = field(o, name);
  if (v === undefined || v === null) return '0';
  if (typeof v === 'string' && /^\d{1,20}$/.test(v)) return v.replace(/^0+(?=\d)/, '');
  if (typeof v === 'number' && Number.isFinite(v) && v >= 0) return BigInt(Math.trunc(v)).toString();
  throw new DecodeError(`${at}.${name}: not an unsigned 64-bit integer`);
}

function enumValue(o: Obj, name: string, names: readonly string[], at: string): number {
  const v = field(o, name);
  if (v === undefined || v === null) return 0;
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  if (typeof v === 'string') {
    const i = names.indexOf(v);
    if (i >= 0) return i;
  }
  throw new DecodeError(`${at}.${name}: not one of ${names.join(', ')}`);
}

/** An AnyValue as a JSON-safe value; nesting past LIMITS.depth is cut (the depth is the input's, so it is capped). */
function anyValue(v: unknown, at: string, depth: number, whole = false): AttrValue {
  if (v === undefined || v === null) return null;
  const o = obj(v, at);
  if (depth > LIMITS.depth) return DEEPER;
  if ('stringValue' in o || 'string_value' in o) {
    const s = field(o, 'stringValue');
    if (typeof s !== 'string') throw new DecodeError(`${at}.stringValue: not a string`);
    return whole ? s : bounded(s);
  }
  if ('boolValue' in o || 'bool_value' in o) return Boolean(field(o, 'boolValue'));
  if ('intValue' in o || 'int_value' in o) {
    const n = field(o, 'intValue');
    if (typeof n === 'number' && Number.isInteger(n)) return n;
    if (typeof n === 'string' && /^-?\d{1,20}$/.test(n)) {
      const x = Number(n);
      return Number.isSafeInteger(x) ? x : n;
    }
    throw new DecodeError(`${at}.intValue: not a 64-bit integer`);
  }
  if ('doubleValue' in o || 'double_value' in o) {
    const d = field(o, 'doubleValue');
    const x = typeof d === 'string' ? Number(d) : d;
    if (typeof x !== 'number') throw new DecodeError(`${at}.doubleValue: not a number`);
    // Canonical JSON holds no NaN or Infinity: such a double is kept as its name.
    return Number.isFinite(x) ? x : String(x);
  }
  if ('bytesValue' in o || 'bytes_value' in o) return bounded(str(o, 'bytesValue', at));
  if ('arrayValue' in o || 'array_value' in o) {
    const values = list(obj(field(o, 'arrayValue'), `${at}.arrayValue`), 'values', `${at}.arrayValue`);
    const out = values
      .slice(0, LIMITS.items)
      .map((x, i) => anyValue(x, `${at}.arrayValue.values[${i}]`, depth + 1));
    if (values.length > LIMITS.items) out.push(`[${values.length - LIMITS.items} more items]`);
    return out;
  }
  if ('kvlistValue' in o || 'kvlist_value' in o) {
    return keyValues(
      list(obj(field(o, 'kvlistValue'), `${at}.kvlistValue`), 'values', `${at}.kvlistValue`),
      `${at}.kvlistValue.values`,
      depth + 1,
    );
  }
  return null; // an empty AnyValue
}

function keyValues(kvs: unknown[], at: string, depth = 0): Attrs {
  const out: Attrs = Object.create(null) as Attrs;
  let n = 0;
  for (let i = 0; i < kvs.length; i++) {
    const kv = obj(kvs[i], `${at}[${i}]`);
    const key = str(kv, 'key', `${at}[${i}]`);
    if (n >= LIMITS.keys) {
      out['otel.receiver.dropped_keys'] = kvs.length - LIMITS.keys;
      break;
    }
    out[key] = anyValue(kv.value, `${at}[${i}].value`, depth, depth === 0 && WHOLE.has(key));
    n++;
  }
  return ordered(out);
}

function attributes(o: Obj, at: string): Attrs {
  return keyValues(list(o, 'attributes', at), `${at}.attributes`);
}

function scopeOf(o: Obj, at: string): Scope {
  const s = field(o, 'scope');
  if (s === undefined || s === null) return { name: '' };
  const so = obj(s, `${at}.scope`);
  const version = str(so, 'version', `${at}.scope`);
  return version
    ? { name: str(so, 'name', `${at}.scope`), version }
    : { name: str(so, 'name', `${at}.scope`) };
}

function resourceOf(o: Obj, at: string): Attrs {
  const r = field(o, 'resource');
  return r === undefined || r === null ? {} : attributes(obj(r, `${at}.resource`), `${at}.resource`);
}

export function spansOf(req: Obj): OtlpSpan[] {
  const out: OtlpSpan[] = [];
  list(req, 'resourceSpans', '').forEach((rsv, i) => {
    const at = `resourceSpans[${i}]`;
    const rs = obj(rsv, at);
    const resource = resourceOf(rs, at);
    list(rs, 'scopeSpans', at).forEach((ssv, j) => {
      const sat = `${at}.scopeSpans[${j}]`;
      const ss = obj(ssv, sat);
      const scope = scopeOf(ss, sat);
      list(ss, 'spans', sat).forEach((sv, k) => {
        const p = `${sat}.spans[${k}]`;
        const s = obj(sv, p);
        const traceId = id(s, 'traceId', 16, p);
        const spanId = id(s, 'spanId', 8, p);
        if (!traceId) throw new DecodeError(`${p}.traceId: missing (a span needs a trace id)`);
        if (!spanId) throw new DecodeError(`${p}.spanId: missing (a span needs a span id)`);
        const st = field(s, 'status');
        const status = isObj(st)
          ? {
              code: enumValue(st, 'code', STATUS_CODES, `${p}.status`),
              message: str(st, 'message', `${p}.status`) || undefined,
            }
          : { code: 0 };
        out.push({
          traceId,
          spanId,
          parentSpanId: id(s, 'parentSpanId', 8, p),
          name: str(s, 'name', p),
          kind: enumValue(s, 'kind', SPAN_KINDS, p),
          startNs: ns(s, 'startTimeUnixNano', p),
          endNs: ns(s, 'endTimeUnixNano', p),
          attributes: attributes(s, p),
          events: list(s, 'events', p).map((ev, e) => {
            const eo = obj(ev, `${p}.events[${e}]`);
            return {
              attributes: attributes(eo, `${p}.events[${e}]`),
              name: str(eo, 'name', `${p}.events[${e}]`),
              timeNs: ns(eo, 'timeUnixNano', `${p}.events[${e}]`),
            };
          }),
          links: list(s, 'links', p).map((lv, l) => {
            const lo = obj(lv, `${p}.links[${l}]`);
            return {
              attributes: attributes(lo, `${p}.links[${l}]`),
              spanId: id(lo, 'spanId', 8, `${p}.links[${l}]`) ?? '',
              traceId: id(lo, 'traceId', 16, `${p}.links[${l}]`) ?? '',
            };
          }),
          status,
          resource,
          scope,
        });
      });
    });
  });
  return out;
}

export function logsOf(req: Obj): OtlpLog[] {
  const out: OtlpLog[] = [];
  list(req, 'resourceLogs', '').forEach((rlv, i) => {
    const at = `resourceLogs[${i}]`;
    const rl = obj(rlv, at);
    const resource = resourceOf(rl, at);
    list(rl, 'scopeLogs', at).forEach((slv, j) => {
      const sat = `${at}.scopeLogs[${j}]`;
      const sl = obj(slv, sat);
      const scope = scopeOf(sl, sat);
      list(sl, 'logRecords', sat).forEach((lv, k) => {
        const p = `${sat}.logRecords[${k}]`;
        const l = obj(lv, p);
        const attrs = attributes(l, p);
        const named = str(l, 'eventName', p);
        out.push({
          timeNs: ns(l, 'timeUnixNano', p),
          observedNs: ns(l, 'observedTimeUnixNano', p),
          severityNumber:
            typeof field(l, 'severityNumber') === 'number' ? (field(l, 'severityNumber') as number) : 0,
          severityText: str(l, 'severityText', p),
          eventName: named || (typeof attrs['event.name'] === 'string' ? attrs['event.name'] : ''),
          body: anyValue(field(l, 'body'), `${p}.body`, 0),
          attributes: attrs,
          traceId: id(l, 'traceId', 16, p),
          spanId: id(l, 'spanId', 8, p),
          resource,
          scope,
        });
      });
    });
  });
  return out;
}

/** A metric's data field (OTLP JSON name) and the type it names. */
const METRIC_TYPES: readonly (readonly [string, string])[] = [
  ['gauge', 'gauge'],
  ['sum', 'sum'],
  ['histogram', 'histogram'],
  ['exponentialHistogram', 'exponential_histogram'],
  ['summary', 'summary'],
];
const TEMPORALITIES = [
  'AGGREGATION_TEMPORALITY_UNSPECIFIED',
  'AGGREGATION_TEMPORALITY_DELTA',
  'AGGREGATION_TEMPORALITY_CUMULATIVE',
];

/**
 * A number field of a data point: a double (NaN and the infinities, which canonical JSON cannot
 * hold, as their names) or a 64-bit integer (a number where exact, else its decimal string).
 * Undefined: absent.
 */
function num(o: Obj, name: string, at: string): number | string | undefined {
  return numValue(field(o, name), `${at}.${name}`);
}

function numValue(v: unknown, at: string): number | string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number') return Number.isFinite(v) ? v : String(v);
  if (typeof v === 'string') {
    if (/^-?\d{1,20}$/.test(v)) return Number.isSafeInteger(Number(v)) ? Number(v) : v;
    if (v === 'NaN' || v === 'Infinity' || v === '-Infinity') return v;
    const x = Number(v);
    if (v.trim() !== '' && Number.isFinite(x)) return x;
  }
  throw new DecodeError(`${at}: not a number`);
}

/** A list of numbers (bucket counts, bounds), bounded as attribute arrays are. */
function nums(o: Obj, name: string, at: string): AttrValue[] {
  const l = list(o, name, at);
  const out: AttrValue[] = l.slice(0, LIMITS.items).map((v, i) => numValue(v, `${at}.${name}[${i}]`) ?? null);
  if (l.length > LIMITS.items) out.push(`[${l.length - LIMITS.items} more items]`);
  return out;
}

/** Only the fields the point has, so a point reads as it was sent. */
function defined(o: Record<string, AttrValue | undefined>): { [k: string]: AttrValue } {
  const out: { [k: string]: AttrValue } = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out;
}

function pointValue(type: string, d: Obj, at: string): AttrValue {
  if (type === 'gauge' || type === 'sum') return num(d, 'asDouble', at) ?? num(d, 'asInt', at) ?? null;
  const base = { count: num(d, 'count', at), sum: num(d, 'sum', at) };
  if (type === 'summary') {
    const q = list(d, 'quantileValues', at);
    const quantiles: AttrValue[] = q.slice(0, LIMITS.items).map((x, i) => {
      const qo = obj(x, `${at}.quantileValues[${i}]`);
      const qat = `${at}.quantileValues[${i}]`;
      return defined({ quantile: num(qo, 'quantile', qat), value: num(qo, 'value', qat) });
    });
    return defined({ ...base, quantiles });
  }
  const minMax = { min: num(d, 'min', at), max: num(d, 'max', at) };
  if (type === 'histogram')
    return defined({
      ...base,
      ...minMax,
      bucket_counts: nums(d, 'bucketCounts', at),
      explicit_bounds: nums(d, 'explicitBounds', at),
    });
  const side = (name: string): AttrValue | undefined => {
    const v = field(d, name);
    if (v === undefined || v === null) return undefined;
    const so = obj(v, `${at}.${name}`);
    return defined({
      offset: num(so, 'offset', `${at}.${name}`),
      bucket_counts: nums(so, 'bucketCounts', `${at}.${name}`),
    });
  };
  return defined({
    ...base,
    ...minMax,
    scale: num(d, 'scale', at),
    zero_count: num(d, 'zeroCount', at),
    positive: side('positive'),
    negative: side('negative'),
  });
}

/**
 * Every data point of every metric, as a record (a metric with no point is one record, value
 * null): kept as events like spans and logs, never dropped. Protobuf bodies come here through
 * protobufjs's toObject (decode.ts): metrics are few, their decoding need not be fast.
 */
export function metricsOf(req: Obj): OtlpMetric[] {
  const out: OtlpMetric[] = [];
  list(req, 'resourceMetrics', '').forEach((rmv, i) => {
    const at = `resourceMetrics[${i}]`;
    const rm = obj(rmv, at);
    const resource = resourceOf(rm, at);
    list(rm, 'scopeMetrics', at).forEach((smv, j) => {
      const sat = `${at}.scopeMetrics[${j}]`;
      const sm = obj(smv, sat);
      const scope = scopeOf(sm, sat);
      list(sm, 'metrics', sat).forEach((mv, k) => {
        const p = `${sat}.metrics[${k}]`;
        const m = obj(mv, p);
        let type = '';
        let data: Obj | null = null;
        for (const [f, t] of METRIC_TYPES) {
          const v = field(m, f);
          if (v === undefined || v === null) continue;
          type = t;
          data = obj(v, `${p}.${f}`);
          break;
        }
        const dat = `${p}.${type}`;
        const monotonic = data !== null && type === 'sum' ? Boolean(field(data, 'isMonotonic')) : null;
        const temporality =
          data !== null && field(data, 'aggregationTemporality') !== undefined
            ? enumValue(data, 'aggregationTemporality', TEMPORALITIES, dat)
            : null;
        const head = {
          name: str(m, 'name', p),
          description: str(m, 'description', p),
          unit: str(m, 'unit', p),
          type,
          monotonic,
          temporality,
        };
        const points = data === null ? [] : list(data, 'dataPoints', dat);
        if (points.length === 0)
          out.push({
            ...head,
            startNs: '0',
            timeNs: '0',
            attributes: {},
            value: null,
            traceId: null,
            spanId: null,
            resource,
            scope,
          });
        points.forEach((dv, n) => {
          const pat = `${dat}.dataPoints[${n}]`;
          const d = obj(dv, pat);
          out.push({
            ...head,
            startNs: ns(d, 'startTimeUnixNano', pat),
            timeNs: ns(d, 'timeUnixNano', pat),
            attributes: attributes(d, pat),
            value: pointValue(type, d, pat),
            traceId: null,
            spanId: null,
            resource,
            scope,
          });
        });
      });
    });
  });
  return out;
}

/** A parsed body as a request object; throws DecodeError for anything else. */
export const requestObject = (parsed: unknown): Obj => obj(parsed, '(body)');
