import path from 'node:path';
import { stat } from 'node:fs/promises';
import type { Ledger } from '../ledger';
import { importFile, keyOf } from './importer';
import { scanFolder } from './scan';
import { defaultSource } from './parallel';

export { verifyFile } from './verify';

export interface IngestSummary {
  files: number;
  events: number;
  findings: number;
}

export type IngestProgress = (p: { file: string; bytes: number; total: number }) => void;

/**
 * Imports every `<folder>/**\/events.jsonl` written by other agents (either seed format, or
 * ProofLoop's own envelope) into the ledger as read-only runs, reading only what was appended since
 * the last open. See importer.ts for the transaction and concurrency rules.
 */
export async function ingestFolder(ledger: Ledger, onProgress?: IngestProgress): Promise<IngestSummary> {
  // Only the ids: ledger.runs() would also count findings and look up the writer of every run.
  const executed = new Set(
    ledger.db.prepare("SELECT run_id FROM runs WHERE source = 'executed'").pluck().all() as string[],
  );
  const files = await scanFolder(ledger.folder, { executed });
  const summary: IngestSummary = { files: 0, events: 0, findings: 0 };
  for (const abs of files) {
    const r = await importFile(ledger, abs, {
      key: keyOf(ledger.folder, abs),
      source: defaultSource(),
      onProgress: onProgress ? (bytes, total) => onProgress({ file: abs, bytes, total }) : undefined,
    });
    summary.files += 1;
    summary.events += r.events;
    summary.findings += r.findings;
  }
  return summary;
}

/** Imports one `.jsonl` file named directly (inside the folder or not). */
export async function ingestFile(ledger: Ledger, file: string): Promise<IngestSummary> {
  const abs = path.resolve(file);
  await stat(abs);
  const r = await importFile(ledger, abs, { key: keyOf(ledger.folder, abs), source: defaultSource() });
  return { files: 1, events: r.events, findings: r.findings };
}
