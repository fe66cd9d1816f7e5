import type { Statement } from 'better-sqlite3';
import type { Db } from './open';

const caches = new WeakMap<Db, Map<string, Statement>>();

/**
 * A statement prepared once per connection. Preparing costs tens of µs each time, and the first
 * open of a folder of 10,000 sessions prepared half a dozen per file (~0.36 ms a file of ~3.9 ms).
 * Callers that pluck must always pluck the same SQL (the mode is the statement's).
 */
export function prepared(db: Db, sql: string): Statement {
  let m = caches.get(db);
  if (!m) caches.set(db, (m = new Map()));
  let st = m.get(sql);
  if (!st) m.set(sql, (st = db.prepare(sql)));
  return st;
}
