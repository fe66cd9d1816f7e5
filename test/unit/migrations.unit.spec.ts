import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { migrationHash, migrations, pendingMigrations } from '../../electron/ledger/migrations';
import { RARE_TERM } from '../../electron/ledger/kinds-index';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const EMPTY = sha('');

// Important: these digests pin migrations that have shipped, as each engine recorded them (sha256
// of the text it ran; of '' where it ran nothing). A ledger that applied one refuses a ProofLoop
// whose copy differs. If this test fails, an applied migration was edited: revert it and add a new
// migration instead. SQLite's 1-4 and PostgreSQL's 1-3 are the digests of the two lists that were
// merged into one (migrations.ts, "History").
const SHIPPED: Record<number, { sqlite: string; postgres: string }> = {
  1: {
    sqlite: 'e0373c3bbfabebd4e989ec0d06d8a4b0261df35fab5bd88b3ff921585210b257',
    postgres: 'a1d5a89153db061dcb3647d1981e8854728edeced7c0dbc94787dd368b2215ca',
  },
  2: {
    sqlite: 'e545b31522c55628ca3d16d965fbe12ced7a47d88eeab467592b28ba9721e8fc',
    postgres: '20e36a8017d8cb354429dd78817a1e1e9540a3ee9ef0793f635c57f9e34af39e',
  },
  3: {
    sqlite: '88280be19ac7b3cce84eb2426777cc2fe442b32063fca8e633dbd784c644d558',
    postgres: '7fe5da64b6c554bc7e5e9a0f9fe331b7dbf4ca931e50153228a5633116a58d32',
  },
  4: { sqlite: 'ed07373153270c1e5b2327d89a42a7a08b6bbd3ad9af2ffa4a778ce6cd40c6d8', postgres: EMPTY },
};

describe('migrations (one list, both engines)', () => {
  it('are numbered 1..n without gaps', () => {
    expect(migrations.map((m) => m.version)).toEqual(migrations.map((_, i) => i + 1));
  });
  it('that shipped are unchanged on each engine', () => {
    for (const [version, digests] of Object.entries(SHIPPED)) {
      const m = migrations.find((x) => x.version === Number(version));
      expect(m, `migration ${version} is missing`).toBeDefined();
      expect(migrationHash(m!, 'sqlite')).toBe(digests.sqlite);
      expect(migrationHash(m!, 'postgres')).toBe(digests.postgres);
    }
  });
  it('hash what each engine runs by one rule', () => {
    for (const m of migrations) {
      expect(migrationHash(m, 'sqlite')).toBe(sha(m.sqlite ?? ''));
      expect(migrationHash(m, 'postgres')).toBe(sha(m.postgres ?? ''));
    }
  });
  it('create the partial kind index with the WHERE term that reads name', () => {
    const m = migrations.findLast((x) => x.sqlite?.includes('INDEX events_by_rare_kind'));
    expect(m?.sqlite).toContain(`WHERE ${RARE_TERM};`);
  });
  it('store PostgreSQL payloads as bytea, never jsonb (the digest covers the exact bytes)', () => {
    const all = migrations.map((m) => m.postgres ?? '').join('\n');
    expect(all).toMatch(/payload bytea NOT NULL/);
    expect(all).not.toMatch(/jsonb/i);
  });
  it('refuse an edited or newer migration, naming the ledger, and list what is pending', () => {
    const applied = migrations.slice(0, 2).map((m) => ({
      version: m.version,
      name: m.name,
      sha256: migrationHash(m, 'postgres'),
    }));
    expect(pendingMigrations(applied, 'postgres', 'db').map((m) => m.version)).toEqual(
      migrations.slice(2).map((m) => m.version),
    );
    // The same records read as SQLite's: the texts differ, so migration 1 reads as edited.
    expect(() => pendingMigrations(applied, 'sqlite', 'ledger.db')).toThrow(
      /ledger.db: migration 1 \(initial\) was edited after it was applied/,
    );
    expect(() =>
      pendingMigrations([{ version: 999, name: 'later', sha256: 'x' }], 'sqlite', 'ledger.db'),
    ).toThrow(/ledger.db has schema version 999, newer than this ProofLoop knows/);
  });
});
