import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ProofloopError } from '../../shared/result';
import { Ledger } from '../ledger';
import type { LedgerEngine } from '../ledger/engine';
import { pushRuns } from '../ledger/push';
import { SqliteEngine } from '../ledger/sqlite-engine';

/**
 * Runs of a team ledger as a runs folder for the time of `fn`: pulled (push.ts: the same seqs,
 * payload bytes, hashes and carried digests) into a throwaway SQLite ledger, so the bundle exporter
 * (its worker threads read a ledger file) writes the very bundle it would from a folder holding
 * these runs. The local folder's redaction rules (.proofloop/redact.json) go with them.
 */
export async function withLocalCopy<T>(
  engine: LedgerEngine,
  runIds: readonly string[],
  localFolder: string,
  fn: (ledger: Ledger) => Promise<T> | T,
): Promise<T> {
  for (const id of runIds) {
    if (!(await engine.run(id)))
      throw new ProofloopError('not_found', `no run "${id}" in ${engine.location}`);
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'proofloop-team-'));
  try {
    const rules = path.join(localFolder, '.proofloop', 'redact.json');
    if (existsSync(rules)) {
      mkdirSync(path.join(dir, '.proofloop'), { recursive: true });
      copyFileSync(rules, path.join(dir, '.proofloop', 'redact.json'));
    }
    const ledger = Ledger.open(dir);
    try {
      await pushRuns(engine, new SqliteEngine(ledger), runIds);
      return await fn(ledger);
    } finally {
      ledger.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
