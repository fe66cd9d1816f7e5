import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';

/**
 * Rows for `COPY … FROM STDIN (FORMAT binary)` (PostgreSQL's "Binary Format" of COPY: a fixed
 * header, then per row a field count and each field as its length and bytes, -1 for NULL, then a
 * -1 trailer). An append's rows are encoded into one buffer, sized first, written once: bytea goes
 * as its bytes (text COPY would double it as hex, and unnest() arrays are escaped text), and the
 * server stores the rows with its multi-row insert (one WAL record a page, not one a row).
 */
export type CopyType = 'int8' | 'int4' | 'text' | 'bytea';

/** One column: its type and its values, one a row (null: NULL). */
export type CopyColumn =
  | { type: 'int8' | 'int4'; values: readonly (number | null)[] }
  | { type: 'text'; values: readonly (string | null)[] }
  /** bytea: bytes, or a string stored as its UTF-8 bytes (a payload's canonical JSON, not copied to a Buffer first). */
  | { type: 'bytea'; values: readonly (Buffer | string | null)[] };

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

export function encodeCopyBinary(columns: readonly CopyColumn[], rows: number): Buffer {
  for (const c of columns) {
    if (c.values.length !== rows)
      throw new Error(`COPY column of ${c.values.length} values for ${rows} rows`);
  }
  // Sizes first: header (signature, flags, extension length), per row its field count, trailer.
  let size = SIGNATURE.length + 8 + rows * 2 + 2;
  // The UTF-8 length of each string value (text, or bytea given as a string), measured once.
  const textLengths: (number[] | null)[] = columns.map((c) => {
    if (c.type === 'text' || c.type === 'bytea') {
      const lens = (c.values as readonly (Buffer | string | null)[]).map((v) =>
        v === null ? -1 : typeof v === 'string' ? Buffer.byteLength(v) : v.length,
      );
      for (const l of lens) size += 4 + Math.max(0, l);
      return lens;
    }
    for (const v of c.values) size += v === null ? 4 : c.type === 'int8' ? 12 : 8;
    return null;
  });
  const buf = Buffer.allocUnsafe(size);
  let o = SIGNATURE.copy(buf, 0);
  o = buf.writeInt32BE(0, o);
  o = buf.writeInt32BE(0, o);
  for (let r = 0; r < rows; r++) {
    o = buf.writeInt16BE(columns.length, o);
    for (let k = 0; k < columns.length; k++) {
      const c = columns[k]!;
      const v = c.values[r];
      if (v === null || v === undefined) {
        o = buf.writeInt32BE(-1, o);
      } else if (c.type === 'int8') {
        const n = v as number;
        o = buf.writeInt32BE(8, o);
        // A whole number below 2^53 as two 32-bit halves (no BigInt an event).
        o = buf.writeInt32BE(Math.floor(n / 0x100000000), o);
        o = buf.writeUInt32BE(n >>> 0, o);
      } else if (c.type === 'int4') {
        o = buf.writeInt32BE(4, o);
        o = buf.writeInt32BE(v as number, o);
      } else {
        const len = textLengths[k]![r]!;
        o = buf.writeInt32BE(len, o);
        o += typeof v === 'string' ? buf.write(v, o, len, 'utf8') : (v as Buffer).copy(buf, o);
      }
    }
  }
  o = buf.writeInt16BE(-1, o);
  if (o !== size) throw new Error(`COPY rows encoded to ${o} bytes, ${size} sized`);
  return buf;
}

/** Streams `rows` (encoded for `sql`, a COPY … FROM STDIN) on `client`; the rows the server stored. */
export async function copyInto(client: pg.ClientBase, sql: string, rows: Buffer): Promise<number> {
  const stream = client.query(copyFrom(sql));
  await pipeline(Readable.from([rows]), stream);
  return Number(stream.rowCount);
}
