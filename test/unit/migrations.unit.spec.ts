import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { migrations } from '../../electron/ledger/migrations';
import { RARE_TERM } from '../../electron/ledger/kinds-index';

// Important: these digests pin migrations that have shipped. If this test fails, an applied
// migration was edited: revert it and add a new migration instead.
const SHIPPED: Record<number, string> = {
  1: 'e0373c3bbfabebd4e989ec0d06d8a4b0261df35fab5bd88b3ff921585210b257',
  2: 'e545b31522c55628ca3d16d965fbe12ced7a47d88eeab467592b28ba9721e8fc',
  3: '88280be19ac7b3cce84eb2426777cc2fe442b32063fca8e633dbd784c644d558',
};

describe('migrations', () => {
  it('are numbered 1..n without gaps', () => {
    expect(migrations.map((m) => m.version)).toEqual(migrations.map((_, i) => i + 1));
  });
  it('that shipped are unchanged', () => {
    for (const [version, digest] of Object.entries(SHIPPED)) {
      const m = migrations.find((x) => x.version === Number(version));
      expect(m, `migration ${version} is missing`).toBeDefined();
      expect(createHash('sha256').update(m!.sql).digest('hex')).toBe(digest);
    }
  });
  it('create the partial kind index with the WHERE term that reads name', () => {
    const m = migrations.findLast((x) => x.sql.includes('INDEX events_by_rare_kind'));
    expect(m?.sql).toContain(`WHERE ${RARE_TERM};`);
  });
});
