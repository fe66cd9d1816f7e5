import Database from 'better-sqlite3';
import { existsSync, mkdirSync } from 'node:fs';
import { appRoot } from '../paths';
import path from 'node:path';
import { sha256Hex } from '../crypto';
import { ProofloopError } from '../../shared/result';
import { foreignLedgerFile, hasForeignLedger, isForeignFolder } from './foreign';
import { confine, mkdirConfined } from '../fs/confine';
import { migrations as allMigrations, type Migration } from './migrations';

export type Db = Database.Database;

/**
 * Inside Electron (whose Node has another ABI than the Node that ran `npm ci`), the copy of
 * better-sqlite3 that `npm start` built for Electron, when there is one; elsewhere the default.
 * A packaged app has its own, rebuilt for Electron by electron-builder.
 */
function electronBinding(): string | undefined {
  if (!process.versions.electron) return undefined;
  const file = path.join(appRoot(), 'dist', 'native', `better_sqlite3-abi${process.versions.modules}.node`);
  return existsSync(file) ? file : undefined;
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
      nativeBinding: electronBinding(),
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

export function migrate(db: Db, file: string, migrations: readonly Migration[]): void {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, sha256 TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT`);
  const latest = migrations.at(-1)?.version ?? 0;
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > latest) {
    throw new ProofloopError(
      'invalid_input',
      `${file} has schema version ${current}, newer than this ProofLoop knows (${latest}); upgrade ProofLoop`,
    );
  }
  const applied = db.prepare('SELECT version, name, sha256 FROM schema_migrations').all() as {
    version: number;
    name: string;
    sha256: string;
  }[];
  for (const a of applied) {
    const m = migrations.find((x) => x.version === a.version);
    if (m && sha256Hex(m.sql) !== a.sha256) {
      throw new ProofloopError(
        'invalid_input',
        `${file}: migration ${a.version} (${a.name}) was edited after it was applied`,
      );
    }
  }
  const pending = migrations.filter((m) => m.version > current);
  if (pending.length === 0) return;
  const run = db.transaction(() => {
    // Re-read inside the write lock: another process may have migrated meanwhile.
    const now = db.pragma('user_version', { simple: true }) as number;
    for (const m of pending) {
      if (m.version <= now) continue;
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, sha256, applied_at) VALUES (?, ?, ?, ?)').run(
        m.version,
        m.name,
        sha256Hex(m.sql),
        new Date().toISOString(),
      );
      db.pragma(`user_version = ${m.version}`);
    }
  });
  run.immediate();
}
