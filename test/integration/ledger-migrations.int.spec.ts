import { describe, expect, it } from 'vitest';
import { cpSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { Ledger, verifyEvents } from '../../electron/ledger';
import { migrationHash, migrations } from '../../electron/ledger/migrations';
import { perTest, repoRoot, runTs } from './helpers/tmp';

const { folder } = perTest();

describe('SQLite ledger: the one list of migrations', () => {
  it('opens a ledger made before the lists were merged (fixture made by main dd9de34 at schema 4)', () => {
    const dir = folder();
    cpSync(path.join(repoRoot, 'test/fixtures/ledger-v4'), dir, { recursive: true });
    const l = Ledger.open(dir);
    try {
      const applied = l.db
        .prepare('SELECT version, sha256 FROM schema_migrations ORDER BY version')
        .all() as { version: number; sha256: string }[];
      expect(applied.map((a) => a.version)).toEqual(migrations.map((m) => m.version));
      // The records written then are kept, and the new ones follow the one rule.
      expect(applied[0]!.sha256).toBe('e0373c3bbfabebd4e989ec0d06d8a4b0261df35fab5bd88b3ff921585210b257');
      expect(applied[3]!.sha256).toBe('ed07373153270c1e5b2327d89a42a7a08b6bbd3ad9af2ffa4a778ce6cd40c6d8');
      for (const a of applied.slice(4))
        expect(a.sha256).toBe(migrationHash(migrations[a.version - 1]!, 'sqlite'));
      expect(applied[4]!.sha256).toBe(createHash('sha256').update('').digest('hex'));
      expect(l.db.pragma('user_version', { simple: true })).toBe(migrations.length);

      const run = l.run('made-v4')!;
      expect(run.head_seq).toBe(6);
      expect(run.head_hash).toBe('cdfdcc6fc4f0e5ad8793328a2e349779a230bceb7ea4cbbf9b30c903f91f0102');
      expect(run.status).toBe('completed');
      expect(l.findings('made-v4').map((f) => [f.code, f.line, f.excerpt])).toEqual([
        ['broken_json', 9, '{"seq": 9,'],
      ]);
      const events = l.read('made-v4');
      expect(events.map((e) => e.kind)).toEqual([
        'run_started',
        'model_proposed',
        'action_allowed',
        'tool_invoked',
        'tool_returned',
        'run_completed',
      ]);
      expect(verifyEvents('made-v4', events, { expectedHead: { seq: 6, hash: run.head_hash } }).ok).toBe(
        true,
      );
    } finally {
      l.close();
    }
    // Opened again: nothing left to apply, and still the same.
    const again = Ledger.open(dir);
    expect(again.run('made-v4')!.head_seq).toBe(6);
    again.close();
  });

  it('migrates a new ledger once when several processes open it at the same moment', async () => {
    const dir = folder();
    const runs = await Promise.all(
      Array.from({ length: 4 }, () => runTs('test/integration/helpers/open-ledger.ts', [dir]).done),
    );
    for (const r of runs) {
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout.trim()).toBe(String(migrations.length));
    }
    const l = Ledger.open(dir);
    const rows = l.db.prepare('SELECT version FROM schema_migrations ORDER BY version').pluck().all();
    l.close();
    expect(rows).toEqual(migrations.map((m) => m.version));
  });
});
