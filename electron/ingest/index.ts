// Placeholder until the JSONL importer lands: the service already calls these.
import type { Ledger } from '../ledger';
import type { VerifyReport } from '../ledger';

export interface IngestSummary {
  files: number;
  events: number;
  findings: number;
}

export type IngestProgress = (p: { file: string; bytes: number; total: number }) => void;

export async function ingestFolder(_ledger: Ledger, _onProgress?: IngestProgress): Promise<IngestSummary> {
  return { files: 0, events: 0, findings: 0 };
}

export async function ingestFile(_ledger: Ledger, _file: string): Promise<IngestSummary> {
  return { files: 0, events: 0, findings: 0 };
}

export async function verifyFile(file: string): Promise<VerifyReport[]> {
  throw new Error(`verifying files is not built yet: ${file}`);
}
