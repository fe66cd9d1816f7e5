import { DecodeError, type Attrs } from './types';

/**
 * What both request walks (decode-json.ts over the OTLP JSON mapping, decode-proto.ts over
 * protobufjs's messages) do alike, so that a request gives the same records in either encoding:
 * attribute values bounded, attributes in canonical key order, ids as lowercase hex.
 */

/** Bounds on what one attribute value may hold once decoded (the raw attributes kept beside events). */
export const LIMITS = {
  string: 8 * 1024,
  items: 128,
  keys: 256,
  depth: 8,
};

/**
 * Keys whose string values are kept whole: the payload export-otlp wrote (map-proofloop.ts), which
 * must come back as it was; the request's own size bound covers it.
 */
export const WHOLE = new Set(['proofloop.payload']);

export const DEEPER = '[nested deeper than the receiver keeps]';

export function bounded(s: string, max = LIMITS.string): string {
  if (s.length <= max) return s;
  return `${s.slice(0, max)}…[${s.length - max} more characters]`;
}

const key__proto__ = (o: Attrs): boolean => Object.prototype.hasOwnProperty.call(o, '__proto__');

/**
 * Decoded attributes (a null-prototype object filled in arrival order, at most LIMITS.keys) in
 * canonical key order (see mapping.ts), as a plain object unless a `__proto__` key is among them
 * (assigning one to a plain object would set its prototype).
 */
export function ordered(out: Attrs): Attrs {
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

const HEX = /^[0-9a-fA-F]*$/;
const B64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

export const allZero = (hex: string): string | null => (/^0+$/.test(hex) ? null : hex);

/**
 * A trace or span id given as text: hex (the OTLP JSON mapping) or base64 (protobuf bytes, or JSON
 * from tools that follow proto3 JSON); `where` names the field in the error.
 */
export function idText(v: string, bytes: number, where: string): string | null {
  if (v === '') return null;
  if (v.length === bytes * 2 && HEX.test(v)) return allZero(v.toLowerCase());
  if (B64.test(v)) {
    const buf = Buffer.from(v, 'base64');
    if (buf.length === bytes) return allZero(buf.toString('hex'));
  }
  throw new DecodeError(`${where}: "${v.slice(0, 80)}" is not a ${bytes}-byte id in hex or base64`);
}
