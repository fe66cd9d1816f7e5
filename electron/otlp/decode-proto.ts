import { allZero, bounded, DEEPER, idText, LIMITS, ordered, WHOLE } from './decode-values';
import { DecodeError, type Attrs, type AttrValue, type OtlpLog, type OtlpSpan, type Scope } from './types';

/**
 * The messages protobufjs decoded (over the official opentelemetry-proto definitions) to the
 * receiver's records, read where they lie: the same records as decode-json.ts gives for the same
 * request in the OTLP JSON mapping (a test holds the two to the same stored events). Before, they
 * went through protobufjs's `toObject` (ids as base64, 64-bit integers as strings) and then the JSON
 * walk, which took the ids back from base64 and looked every field up by both of its names: ~40 µs
 * a span of the bench's requests against ~10 for this walk.
 *
 * protobufjs gives a field that was not on the wire from its message's prototype (its default),
 * and one that was as an own property; which member of a oneof was sent is an own property too.
 * The types are protobuf's, checked by the decoder: what is left to refuse is ids of the wrong size.
 */

/** A 64-bit integer as protobufjs decodes it with the `long` package present. */
interface Long {
  low: number;
  high: number;
  unsigned: boolean;
  toNumber(): number;
  toString(): string;
}

interface PbAnyValue {
  stringValue: string;
  boolValue: boolean;
  intValue: Long | number;
  doubleValue: number;
  bytesValue: Uint8Array;
  arrayValue: { values: PbAnyValue[] };
  kvlistValue: { values: PbKeyValue[] };
}
interface PbKeyValue {
  key: string;
  value: PbAnyValue | null;
}
interface PbScope {
  name: string;
  version: string;
}
interface PbSpan {
  traceId: Uint8Array;
  spanId: Uint8Array;
  parentSpanId: Uint8Array;
  name: string;
  kind: number;
  startTimeUnixNano: Long | number;
  endTimeUnixNano: Long | number;
  attributes: PbKeyValue[];
  events: { timeUnixNano: Long | number; name: string; attributes: PbKeyValue[] }[];
  links: { traceId: Uint8Array; spanId: Uint8Array; attributes: PbKeyValue[] }[];
  status: { code: number; message: string };
}
interface PbLog {
  timeUnixNano: Long | number;
  observedTimeUnixNano: Long | number;
  severityNumber: number;
  severityText: string;
  body: PbAnyValue;
  attributes: PbKeyValue[];
  traceId: Uint8Array;
  spanId: Uint8Array;
  eventName: string;
}
interface PbResource {
  attributes: PbKeyValue[];
}
export interface PbTraces {
  resourceSpans: { resource: PbResource; scopeSpans: { scope: PbScope; spans: PbSpan[] }[] }[];
}
export interface PbLogs {
  resourceLogs: { resource: PbResource; scopeLogs: { scope: PbScope; logRecords: PbLog[] }[] }[];
}

const has = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

const toHex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
const toBase64 = (b: Uint8Array): string =>
  Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64');

/** A trace or span id; an id of another size is read as its base64 would be in JSON (idText). */
function id(b: Uint8Array, bytes: number, where: () => string): string | null {
  if (b.length === 0) return null;
  if (b.length === bytes) return allZero(toHex(b));
  return idText(toBase64(b), bytes, where());
}

/**
 * A fixed64 as a decimal string (unsigned, as the decoder marks it). protobufjs gives a number
 * instead where the `long` package cannot be loaded, as toObject then did.
 */
function u64(l: Long | number): string {
  if (typeof l === 'number') return String(l);
  const high = l.high >>> 0;
  // Below 2^53 (high under 2^21) the double is exact. Above it, where every Unix time in
  // nanoseconds lies (~1.7e18), BigInt: Long's toString, a division loop, measured ~1 µs a
  // time against ~0.1 µs (two to four times a span).
  if (high < 0x200000) return String(high * 0x100000000 + (l.low >>> 0));
  return ((BigInt(high) << 32n) | BigInt(l.low >>> 0)).toString();
}

/** An int64 as a number where that is exact, else as its decimal string. */
function i64(l: Long | number): number | string {
  const x = typeof l === 'number' ? l : l.toNumber();
  if (Number.isSafeInteger(x)) return x;
  return typeof l === 'number' ? String(l) : l.toString();
}

function anyValue(v: PbAnyValue | null, depth: number, whole = false): AttrValue {
  if (v === null || v === undefined) return null;
  if (depth > LIMITS.depth) return DEEPER;
  // In the JSON walk's order, for a oneof sent with more than one member.
  if (has(v, 'stringValue')) return whole ? v.stringValue : bounded(v.stringValue);
  if (has(v, 'boolValue')) return v.boolValue;
  if (has(v, 'intValue')) return i64(v.intValue);
  if (has(v, 'doubleValue')) {
    const x = v.doubleValue;
    // Canonical JSON holds no NaN or Infinity: such a double is kept as its name.
    return Number.isFinite(x) ? x : String(x);
  }
  if (has(v, 'bytesValue')) return bounded(toBase64(v.bytesValue));
  if (has(v, 'arrayValue')) {
    const values = v.arrayValue.values;
    const n = Math.min(values.length, LIMITS.items);
    const out: AttrValue[] = new Array<AttrValue>(n);
    for (let i = 0; i < n; i++) out[i] = anyValue(values[i]!, depth + 1);
    if (values.length > LIMITS.items) out.push(`[${values.length - LIMITS.items} more items]`);
    return out;
  }
  if (has(v, 'kvlistValue')) return keyValues(v.kvlistValue.values, depth + 1);
  return null; // an empty AnyValue
}

function keyValues(kvs: PbKeyValue[], depth = 0): Attrs {
  const out: Attrs = Object.create(null) as Attrs;
  for (let i = 0; i < kvs.length; i++) {
    if (i >= LIMITS.keys) {
      out['otel.receiver.dropped_keys'] = kvs.length - LIMITS.keys;
      break;
    }
    const kv = kvs[i]!;
    out[kv.key] = anyValue(kv.value, depth, depth === 0 && WHOLE.has(kv.key));
  }
  return ordered(out);
}

function scopeOf(o: { scope: PbScope }): Scope {
  if (!has(o, 'scope')) return { name: '' };
  const { name, version } = o.scope;
  return version ? { name, version } : { name };
}

const resourceOf = (o: { resource: PbResource }): Attrs =>
  has(o, 'resource') ? keyValues(o.resource.attributes) : {};

export function spansOf(req: PbTraces): OtlpSpan[] {
  const out: OtlpSpan[] = [];
  req.resourceSpans.forEach((rs, i) => {
    const resource = resourceOf(rs);
    rs.scopeSpans.forEach((ss, j) => {
      const scope = scopeOf(ss);
      ss.spans.forEach((s, k) => {
        const at = () => `resourceSpans[${i}].scopeSpans[${j}].spans[${k}]`;
        const traceId = id(s.traceId, 16, () => `${at()}.traceId`);
        const spanId = id(s.spanId, 8, () => `${at()}.spanId`);
        if (!traceId) throw new DecodeError(`${at()}.traceId: missing (a span needs a trace id)`);
        if (!spanId) throw new DecodeError(`${at()}.spanId: missing (a span needs a span id)`);
        out.push({
          traceId,
          spanId,
          parentSpanId: id(s.parentSpanId, 8, () => `${at()}.parentSpanId`),
          name: s.name,
          kind: s.kind,
          startNs: u64(s.startTimeUnixNano),
          endNs: u64(s.endTimeUnixNano),
          attributes: keyValues(s.attributes),
          events: s.events.map((e) => ({
            attributes: keyValues(e.attributes),
            name: e.name,
            timeNs: u64(e.timeUnixNano),
          })),
          links: s.links.map((l, n) => ({
            attributes: keyValues(l.attributes),
            spanId: id(l.spanId, 8, () => `${at()}.links[${n}].spanId`) ?? '',
            traceId: id(l.traceId, 16, () => `${at()}.links[${n}].traceId`) ?? '',
          })),
          status: has(s, 'status')
            ? { code: s.status.code, message: s.status.message || undefined }
            : { code: 0 },
          resource,
          scope,
        });
      });
    });
  });
  return out;
}

export function logsOf(req: PbLogs): OtlpLog[] {
  const out: OtlpLog[] = [];
  req.resourceLogs.forEach((rl, i) => {
    const resource = resourceOf(rl);
    rl.scopeLogs.forEach((sl, j) => {
      const scope = scopeOf(sl);
      sl.logRecords.forEach((l, k) => {
        const at = () => `resourceLogs[${i}].scopeLogs[${j}].logRecords[${k}]`;
        const attrs = keyValues(l.attributes);
        out.push({
          timeNs: u64(l.timeUnixNano),
          observedNs: u64(l.observedTimeUnixNano),
          severityNumber: l.severityNumber,
          severityText: l.severityText,
          eventName: l.eventName || (typeof attrs['event.name'] === 'string' ? attrs['event.name'] : ''),
          body: has(l, 'body') ? anyValue(l.body, 0) : null,
          attributes: attrs,
          traceId: id(l.traceId, 16, () => `${at()}.traceId`),
          spanId: id(l.spanId, 8, () => `${at()}.spanId`),
          resource,
          scope,
        });
      });
    });
  });
  return out;
}
