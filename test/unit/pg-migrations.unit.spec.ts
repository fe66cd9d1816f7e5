import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { pgMigrations } from '../../electron/ledger/postgres/migrations';

// Important: these digests pin the PostgreSQL ledger's migrations that have shipped (a database
// that applied one refuses a ProofLoop whose copy differs). If this test fails, an applied
// migration was edited: revert it and add a new migration instead.
const SHIPPED: Record<number, string> = {
  1: 'a1d5a89153db061dcb3647d1981e8854728edeced7c0dbc94787dd368b2215ca',
  2: '20e36a8017d8cb354429dd78817a1e1e9540a3ee9ef0793f635c57f9e34af39e',
  3: '7fe5da64b6c554bc7e5e9a0f9fe331b7dbf4ca931e50153228a5633116a58d32',
};

describe('PostgreSQL migrations', () => {
  it('are numbered 1..n without gaps', () => {
    expect(pgMigrations.map((m) => m.version)).toEqual(pgMigrations.map((_, i) => i + 1));
  });
  it('that shipped are unchanged', () => {
    for (const [version, digest] of Object.entries(SHIPPED)) {
      const m = pgMigrations.find((x) => x.version === Number(version));
      expect(m, `migration ${version} is missing`).toBeDefined();
      expect(createHash('sha256').update(m!.sql).digest('hex')).toBe(digest);
    }
  });
  it('store payloads as bytea, never jsonb (the digest covers the exact bytes)', () => {
    const all = pgMigrations.map((m) => m.sql).join('\n');
    expect(all).toMatch(/payload bytea NOT NULL/);
    expect(all).not.toMatch(/jsonb/i);
  });
});
