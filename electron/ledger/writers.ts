import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { ProofloopError } from '../../shared/result';
import type { Db } from './open';

interface WriterRow {
  run_id: string;
  pid: number;
  hostname: string;
  token: string;
  label: string | null;
}

/** Whether the process that holds a writer lock still exists. Another host's writer is assumed alive. */
export function writerAlive(row: { pid: number; hostname: string }): boolean {
  if (row.hostname !== hostname()) return true;
  try {
    process.kill(row.pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * One writer per run, across processes: a row in `writers`, taken inside BEGIN IMMEDIATE. A lock
 * left by a process that died is taken over (that is how `resume` continues a killed run).
 */
export function acquireWriter(db: Db, runId: string, label: string | null): string {
  const token = randomUUID();
  const take = db.transaction(() => {
    const row = db.prepare('SELECT * FROM writers WHERE run_id = ?').get(runId) as WriterRow | undefined;
    if (row && writerAlive(row)) {
      throw new ProofloopError(
        'conflict',
        `run ${runId} already has a writer: pid ${row.pid} on ${row.hostname}${row.label ? ` (${row.label})` : ''}; ` +
          'a run has one writer at a time',
      );
    }
    db.prepare(
      'INSERT OR REPLACE INTO writers (run_id, pid, hostname, token, since, label) VALUES (?, ?, ?, ?, ?, ?)',
    ).run(runId, process.pid, hostname(), token, new Date().toISOString(), label);
  });
  take.immediate();
  return token;
}

export function releaseWriter(db: Db, runId: string, token: string): void {
  db.prepare('DELETE FROM writers WHERE run_id = ? AND token = ?').run(runId, token);
}

/** Prepared once per database: the runs list asks it for every run (2,000 prepares took ~140 ms). */
const writerStmt = new WeakMap<Db, ReturnType<Db['prepare']>>();

export function writerOf(db: Db, runId: string): WriterRow | undefined {
  let st = writerStmt.get(db);
  if (!st) writerStmt.set(db, (st = db.prepare('SELECT * FROM writers WHERE run_id = ?')));
  const row = st.get(runId) as WriterRow | undefined;
  return row && writerAlive(row) ? row : undefined;
}
