import { describe, expect, it } from 'vitest';
import { encodeCopyBinary } from '../../electron/ledger/postgres/copy-binary';

/** Reads back what encodeCopyBinary wrote, field by field, as PostgreSQL's binary COPY reads it. */
function decode(buf: Buffer): (Buffer | null)[][] {
  expect(buf.subarray(0, 11).toString('latin1')).toBe('PGCOPY\n\xff\r\n\0');
  expect(buf.readInt32BE(11)).toBe(0); // flags
  expect(buf.readInt32BE(15)).toBe(0); // header extension
  let o = 19;
  const rows: (Buffer | null)[][] = [];
  for (;;) {
    const n = buf.readInt16BE(o);
    o += 2;
    if (n === -1) break;
    const row: (Buffer | null)[] = [];
    for (let i = 0; i < n; i++) {
      const len = buf.readInt32BE(o);
      o += 4;
      row.push(len === -1 ? null : buf.subarray(o, o + len));
      o += Math.max(0, len);
    }
    rows.push(row);
  }
  expect(o).toBe(buf.length);
  return rows;
}

describe('binary COPY rows', () => {
  it('write int8 past 2^32, int4, UTF-8 text, bytea from bytes or a string, and NULL as length -1', () => {
    const big = 2 ** 40 + 7;
    const rows = decode(
      encodeCopyBinary(
        [
          { type: 'int8', values: [big, 1] },
          { type: 'int4', values: [-3, null] },
          { type: 'text', values: ['é✓', null] },
          { type: 'bytea', values: ['{"a":"ü"}', Buffer.from([0, 255])] },
        ],
        2,
      ),
    );
    expect(rows).toHaveLength(2);
    expect(rows[0]![0]!.readBigInt64BE(0)).toBe(BigInt(big));
    expect(rows[1]![0]!.readBigInt64BE(0)).toBe(1n);
    expect(rows[0]![1]!.readInt32BE(0)).toBe(-3);
    expect(rows[1]![1]).toBeNull();
    expect(rows[0]![2]!.toString('utf8')).toBe('é✓');
    expect(rows[1]![2]).toBeNull();
    expect(rows[0]![3]!.toString('utf8')).toBe('{"a":"ü"}');
    expect([...rows[1]![3]!]).toEqual([0, 255]);
  });
  it('refuse columns whose lengths differ from the row count', () => {
    expect(() => encodeCopyBinary([{ type: 'int4', values: [1] }], 2)).toThrow(/1 values for 2 rows/);
  });
});
