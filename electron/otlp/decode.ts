import protobuf from 'protobufjs/light.js';
import descriptor from './proto/otlp.json';
import {
  DecodeError,
  type Attrs,
  type AttrValue,
  type Decoded,
  type OtlpLog,
  type OtlpSpan,
  type Scope,
  type Signal,
} from './types';

/**
 * OTLP export requests, protobuf or JSON, to the receiver's records. Protobuf is decoded by
 * protobufjs over the official opentelemetry-proto definitions (proto/README.md), then read through
 * the same walk as JSON (the OTLP JSON mapping: lowerCamelCase fields, hex ids, 64-bit integers as
 * numbers or strings, enums as numbers or names). The walk checks every field it uses and names
 * the one that is wrong; attribute values are bounded here, once, for every mapping after it.
 */

const root = protobuf.Root.fromJSON(descriptor as protobuf.INamespace);
const PKG = 'opentelemetry.proto.collector';
export const requestTypes = {
  traces: root.lookupType(`${PKG}.trace.v1.ExportTraceServiceRequest`),
  logs: root.lookupType(`${PKG}.logs.v1.ExportLogsServiceRequest`),
  metrics: root.lookupType(`${PKG}.metrics.v1.ExportMetricsServiceRequest`),
};
export const responseTypes = {
  traces: root.lookupType(`${PKG}.trace.v1.ExportTraceServiceResponse`),
  logs: root.lookupType(`${PKG}.logs.v1.ExportLogsServiceResponse`),
  metrics: root.lookupType(`${PKG}.metrics.v1.ExportMetricsServiceResponse`),
};

/** google.rpc.Status, the body of an OTLP/HTTP error response (it is not in opentelemetry-proto). */
export const StatusType = new protobuf.Type('Status')
  .add(new protobuf.Field('code', 1, 'int32'))
  .add(new protobuf.Field('message', 2, 'string'));
new protobuf.Root().define('google.rpc').add(StatusType);

/** Bounds on what one attribute value may hold once decoded (the raw attributes kept beside events). */
export const LIMITS = {
  string: 8 * 1024,
  items: 128,
  keys: 256,
  depth: 8,
};

const SPAN_KINDS = [
  'SPAN_KIND_UNSPECIFIED',
  'SPAN_KIND_INTERNAL',
  'SPAN_KIND_SERVER',
  'SPAN_KIND_CLIENT',
  'SPAN_KIND_PRODUCER',
  'SPAN_KIND_CONSUMER',
];
const STATUS_CODES = ['STATUS_CODE_UNSET', 'STATUS_CODE_OK', 'STATUS_CODE_ERROR'];

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function field(o: Obj, name: string): unknown {
  // The protobuf JSON mapping lets a parser accept the proto field name as well.
  if (name in o) return o[name];
  const snake = name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  return o[snake];
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

const HEX = /^[0-9a-fA-F]*$/;
const B64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** A trace or span id: hex (the OTLP JSON mapping) or base64 (protobuf bytes, or JSON from tools that follow proto3 JSON). */
function id(o: Obj, name: string, bytes: number, at: string): string | null {
  const v = field(o, name);
  if (v === undefined || v === null || v === '') return null;
  if (typeof v !== 'string') throw new DecodeError(`${at}.${name}: not a string`);
  if (v.length === bytes * 2 && HEX.test(v)) return allZero(v.toLowerCase());
  if (B64.test(v)) {
    const buf = Buffer.from(v, 'base64');
    if (buf.length === bytes) return allZero(buf.toString('hex'));
  }
  throw new DecodeError(`${at}.${name}: "${v.slice(0, 80)}" is not a ${bytes}-byte id in hex or base64`);
}

const allZero = (hex: string): string | null => (/^0+$/.test(hex) ? null : hex);

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

/**
 * Keys whose string values are kept whole: the payload export-otlp wrote (map-proofloop.ts), which
 * must come back as it was; the request's own size bound covers it.
 */
const WHOLE = new Set(['proofloop.payload']);

function bounded(s: string, max = LIMITS.string): string {
  if (s.length <= max) return s;
  return `${s.slice(0, max)}…[${s.length - max} more characters]`;
}

/** An AnyValue as a JSON-safe value; nesting past LIMITS.depth is cut (the depth is the input's, so it is capped). */
function anyValue(v: unknown, at: string, depth: number, whole = false): AttrValue {
  if (v === undefined || v === null) return null;
  const o = obj(v, at);
  if (depth > LIMITS.depth) return '[nested deeper than the receiver keeps]';
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
  // In canonical key order (see mapping.ts), the first LIMITS.keys of the request's kept. A plain
  // object is built only without a `__proto__` key (assigning one would set the prototype).
  const keys = Object.keys(out);
  let sorted = true;
  for (let i = 1; i < keys.length && sorted; i++) sorted = keys[i - 1]! < keys[i]!;
  if (!sorted) keys.sort();
  if (key__proto__(out)) {
    if (sorted) return { ...out };
    const inOrder: Attrs = Object.create(null) as Attrs;
    for (const k of keys) inOrder[k] = out[k]!;
    return { ...inOrder };
  }
  const plain: Attrs = {};
  for (const k of keys) plain[k] = out[k]!;
  return plain;
}

const key__proto__ = (o: Attrs): boolean => Object.prototype.hasOwnProperty.call(o, '__proto__');

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

function spansOf(req: Obj): OtlpSpan[] {
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

function logsOf(req: Obj): OtlpLog[] {
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

function countPoints(req: Obj): number {
  let n = 0;
  for (const rm of list(req, 'resourceMetrics', '')) {
    for (const sm of list(obj(rm, 'resourceMetrics[]'), 'scopeMetrics', 'resourceMetrics[]')) {
      n += list(obj(sm, 'scopeMetrics[]'), 'metrics', 'scopeMetrics[]').length;
    }
  }
  return n;
}

export type Encoding = 'protobuf' | 'json';

/** The request object of one signal from its body; throws DecodeError naming what is wrong. */
export function decodeRequest(signal: Signal, body: Buffer, encoding: Encoding): Decoded {
  let req: Obj;
  if (encoding === 'protobuf') {
    const type = requestTypes[signal];
    try {
      // A nesting deep enough to exhaust the stack is a RangeError here, answered like any bad body.
      req = type.toObject(type.decode(body), { longs: String, bytes: String, enums: Number });
    } catch (e) {
      throw new DecodeError(`not an OTLP ${type.name} in protobuf: ${(e as Error).message}`);
    }
  } else {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch (e) {
      throw new DecodeError(`not JSON: ${(e as Error).message}`);
    }
    req = obj(parsed, '(body)');
  }
  if (signal === 'traces') return { signal, records: spansOf(req) };
  if (signal === 'logs') return { signal, records: logsOf(req) };
  return { signal, points: countPoints(req) };
}
