import Database from 'better-sqlite3';
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { appRoot } from '../paths';
import path from 'node:path';
import { ProofloopError } from '../../shared/result';
import { foreignLedgerFile, hasForeignLedger, isForeignFolder } from './foreign';
import { confine, mkdirConfined } from '../fs/confine';
import {
  migrationHash,
  migrationName,
  migrationSql,
  migrations as allMigrations,
  pendingMigrations,
  type AppliedMigration,
  type Migration,
} from './migrations';

export type Db = Database.Database;

/**
 * Inside Electron (whose Node has another ABI than the Node that ran `npm ci`), the copy of
 * better-sqlite3 that `npm start` built for Electron, when there is one (a packaged app has its
 * own, rebuilt for Electron by electron-builder). Elsewhere the file `npm ci` built or fetched,
 * named here: the `bindings` package better-sqlite3 otherwise asks tries a dozen paths first,
 * ~1.5 ms of every command's start.
 */
let binding: string | undefined | null = null;
function nativeBinding(): string | undefined {
  if (binding !== null) return binding;
  const file = process.versions.electron
    ? path.join(appRoot(), 'dist', 'native', `better_sqlite3-abi${process.versions.modules}.node`)
    : path.join(
        path.dirname(createRequire(import.meta.url).resolve('better-sqlite3/package.json')),
        'build',
        'Release',
        'better_sqlite3.node',
      );
  return (binding = existsSync(file) ? file : undefined);
}

/** `<folder>/.proofloop/ledger.db`, or for another program's folder one in ProofLoop's own (foreign.ts). */
export function ledgerPath(folder: string): string {
  if (existsSync(path.join(folder, '.proofloop'))) return path.join(folder, '.proofloop', 'ledger.db');
  if (hasForeignLedger(folder) || isForeignFolder(folder)) return foreignLedgerFile(folder);
  return path.join(folder, '.proofloop', 'ledger.db');
}

/** Whether `file` is the folder's own `.proofloop/ledger.db` (not one in ProofLoop's directory for another program's folder). */
export function isOwnLedger(folder: string, file: string): boolean {
  return file === path.join(folder, '.proofloop', 'ledger.db');
}

/** The ledger's file, its `.proofloop` folder made if needed; refused when either is a link. */
export function confinedLedgerPath(folder: string): string {
  const file = ledgerPath(folder);
  // Another program's folder: the ledger is in ProofLoop's own data directory, nothing is made here.
  if (!isOwnLedger(folder, file)) return file;
  // The folder itself is the caller's choice, made if missing as before; below it, no link.
  mkdirSync(folder, { recursive: true });
  mkdirConfined(folder, '.proofloop', 'ledger folder');
  return confine(folder, ['.proofloop', 'ledger.db'], 'ledger');
}

/** Opens (creating if needed) a ledger database with the durability settings of DESIGN.md. */
export function openDatabase(
  file: string,
  opts: { readonly?: boolean; migrations?: readonly Migration[] } = {},
): Db {
  if (!opts.readonly) mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  let db: Db;
  try {
    db = new Database(file, {
      readonly: opts.readonly ?? false,
      fileMustExist: opts.readonly ?? false,
      nativeBinding: nativeBinding(),
    });
  } catch (e) {
    throw new ProofloopError('io', `cannot open ledger ${file}: ${(e as Error).message}`);
  }
  // A writer that finds the database busy waits instead of failing at once.
  db.pragma('busy_timeout = 10000');
  if (!opts.readonly) {
    db.pragma('journal_mode = WAL');
    // Important: FULL makes every commit fsync the WAL, so an append returns only once durable.
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    migrate(db, file, opts.migrations ?? allMigrations);
  }
  return db;
}

/**
 * Brings the SQLite ledger to `migrations` (migrations.ts, the one list of both engines): a newer
 * or edited migration is refused; pending ones are applied in one BEGIN IMMEDIATE transaction, which
 * holds the database's write lock, and re-read under it, so two processes opening one new ledger
 * never race a migration (the second waits, then finds nothing to do).
 */
export function migrate(db: Db, file: string, migrations: readonly Migration[]): void {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, sha256 TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT`);
  const applied = () => {
    const rows = db
      .prepare('SELECT version, name, sha256 FROM schema_migrations')
      .all() as AppliedMigration[];
    // user_version says how far a ledger went (it is what ledgers before schema_migrations kept).
    const current = db.pragma('user_version', { simple: true }) as number;
    const latest = migrations.at(-1)?.version ?? 0;
    if (current > latest && !rows.some((r) => r.version === current))
      rows.push({ version: current, name: `schema ${current}`, sha256: '' });
    return rows;
  };
  if (pendingMigrations(applied(), 'sqlite', file, migrations).length === 0) return;
  const run = db.transaction(() => {
    for (const m of pendingMigrations(applied(), 'sqlite', file, migrations)) {
      const sql = migrationSql(m, 'sqlite');
      if (sql) db.exec(sql);
      db.prepare('INSERT INTO schema_migrations (version, name, sha256, applied_at) VALUES (?, ?, ?, ?)').run(
        m.version,
        migrationName(m, 'sqlite'),
        migrationHash(m, 'sqlite'),
        new Date().toISOString(),
      );
      db.pragma(`user_version = ${m.version}`);
    }
  });
  run.immediate();
}
