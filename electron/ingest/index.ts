import path from 'node:path';
import { statSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Ledger } from '../ledger';
import type { FindingCode } from '../ledger/types';
import { importFile, type ImportOptions } from './importer';
import { keyOf } from './run-names';
import { scanFolder } from './scan';
import { importDocument, type DocumentSource } from './document';
import { detectStreamed } from './formats/registry';
import { readAt } from './read-at';
import { defaultSource } from './parallel';
import { Prefetch, type FolderFile } from './prefetch';
import type { parsedBlocks } from './source';

type Source = typeof parsedBlocks;

export { verifyFile } from './verify';

export interface IngestSummary {
  files: number;
  events: number;
  findings: number;
  /** Stopped by its signal: the files after the one it was in were not looked at. */
  aborted?: boolean;
}

/** How a folder import may be stopped and followed: see ImportOptions. */
export interface IngestControl {
  signal?: AbortSignal;
  onCommit?: () => void;
  /** The parsing source and block size (see ImportOptions); default: workers for large files. */
  source?: ImportOptions['source'];
  blockSize?: number;
}

export type IngestProgress = (p: { file: string; bytes: number; total: number }) => void;

/**
 * Imports every `<folder>/**\/events.jsonl` written by other agents (either seed format, or
 * ProofLoop's own envelope) into the ledger as read-only runs, reading only what was appended since
 * the last open. See importer.ts for the transaction and concurrency rules.
 */
export async function ingestFolder(
  ledger: Ledger,
  onProgress?: IngestProgress,
  control: IngestControl = {},
): Promise<IngestSummary> {
  const { signal } = control;
  const stopped = (s: IngestSummary): IngestSummary => Object.assign(s, { aborted: true });
  // Checked before the ledger is touched: an import queued behind the one that was stopped may
  // start after the folder's ledger was closed.
  if (signal?.aborted) return stopped({ files: 0, events: 0, findings: 0 });
  // Only the ids: ledger.runs() would also count findings and look up the writer of every run.
  const executed = new Set(
    ledger.db.prepare("SELECT run_id FROM runs WHERE source = 'executed'").pluck().all() as string[],
  );
  const unreadable: { file: string; why: string }[] = [];
  const documents: DocumentSource[] = [];
  const files = await scanFolder(ledger.folder, { executed, unreadable, documents });
  const summary: IngestSummary = { files: 0, events: 0, findings: 0 };
  if (signal?.aborted) return stopped(summary);
  for (const u of unreadable) {
    const key = keyOf(ledger.folder, u.file);
    // The finding's file names it whole; its message, cut at 2,000 characters, must keep the why.
    const named = key.length > 300 ? `${key.slice(0, 300)}…` : key;
    if (fileFinding(ledger, key, 'unreadable_file', `${named} is ${u.why}: not read`)) summary.findings += 1;
  }
  // What every file was imported up to, read at once: a reopen of a folder of 10,000 sessions with
  // nothing new then costs a stat per file (one query for each file's row, and the path arithmetic
  // of keyOf, took ~0.4 s of the ~1 s it took).
  const known = new Map(
    (
      ledger.db
        .prepare("SELECT file, size, offset, json_extract(state, '$.mtime') AS mtime FROM imports")
        .all() as KnownFile[]
    ).map((r) => [r.file, r]),
  );
  const prefix = ledger.folder + path.sep;
  const keyOfFile = (abs: string): string =>
    abs.startsWith(prefix) ? abs.slice(prefix.length).split(path.sep).join('/') : keyOf(ledger.folder, abs);
  const onlyIfClaimed = (abs: string): boolean => path.basename(abs) !== 'events.jsonl';
  // Files never imported: on a first open of many sessions, read and parsed ahead by a shared pool.
  // Each file's key made once: on a reopen of 10,000 sessions, making it twice cost ~25 ms.
  const keys = files.map(keyOfFile);
  const fresh: FolderFile[] = files
    .filter((_, i) => !known.has(keys[i]!))
    .map((abs) => ({ abs, onlyIfClaimed: onlyIfClaimed(abs) }));
  const freshAt = new Map(fresh.map((f, i) => [f.abs, i]));
  // A source of the caller's (one block parsed in this thread, background.ts) reads no file ahead.
  const prefetch = control.source ? null : Prefetch.start(fresh);
  try {
    for (const [i, abs] of files.entries()) {
      if (signal?.aborted) return stopped(summary);
      const key = keys[i]!;
      if (unchangedSince(abs, known.get(key))) {
        summary.files += 1;
        continue;
      }
      const at = freshAt.get(abs);
      const own = control.source ?? defaultSource();
      const source = prefetch && at !== undefined ? prefetch.sourceFor(at, own) : own;
      const opts = { key, source, onlyIfClaimed: onlyIfClaimed(abs), summary };
      if (await importOne(ledger, abs, opts, control, onProgress)) return stopped(summary);
      summary.files += 1;
    }
  } finally {
    await prefetch?.close();
  }
  // Whole-file sources (SWE-agent, ATIF, OpenHands): each read whole, in this thread.
  for (const doc of documents) {
    if (signal?.aborted) return stopped(summary);
    const key = keyOfFile(doc.abs);
    // An eval log's `.json` is read record by record (a streamed format), not whole.
    if (!doc.dir && streamedFile(doc.abs)) {
      const opts = { key, source: defaultSource(), onlyIfClaimed: true, summary };
      if (await importOne(ledger, doc.abs, opts, control, onProgress)) return stopped(summary);
      summary.files += 1;
      continue;
    }
    try {
      const r = await importDocument(ledger, doc, key, { onlyIfClaimed: true, onCommit: control.onCommit });
      summary.events += r.events;
      summary.findings += r.findings;
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      const code =
        err.code === 'ENOENT' || err.code === 'ENOTREG' || err.code === 'ELOOP'
          ? 'unreadable_file'
          : 'import_failed';
      if (fileFinding(ledger, key, code, `${key}: ${err.message}`)) summary.findings += 1;
    }
    summary.files += 1;
  }
  return summary;
}

/**
 * One file of a folder; whatever goes wrong in it is a finding on that file, and the rest of the
 * folder is imported. Adds to `summary`; returns whether the import was stopped.
 */
async function importOne(
  ledger: Ledger,
  abs: string,
  opts: { key: string; source: Source; onlyIfClaimed: boolean; summary: IngestSummary },
  control: IngestControl,
  onProgress?: IngestProgress,
): Promise<boolean> {
  const { key, summary } = opts;
  try {
    const r = await importFile(ledger, abs, {
      key,
      onlyIfClaimed: opts.onlyIfClaimed,
      source: opts.source,
      blockSize: control.blockSize,
      onProgress: onProgress ? (bytes, total) => onProgress({ file: abs, bytes, total }) : undefined,
      signal: control.signal,
      onCommit: control.onCommit,
    });
    summary.events += r.events;
    summary.findings += r.findings;
    return r.aborted === true;
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    const gone = err.code === 'ENOENT';
    const code = gone || err.code === 'ENOTREG' || err.code === 'ELOOP' ? 'unreadable_file' : 'import_failed';
    const why = gone ? 'vanished while it was read' : err.message;
    if (fileFinding(ledger, key, code, `${key}: ${why}`)) summary.findings += 1;
    return false;
  }
}

interface KnownFile {
  file: string;
  size: number;
  offset: number;
  mtime: number | null;
}

/**
 * Imported to its end at the size and modification time it still has (importPass decides the
 * same, see there): a file edited in place keeps its size but not its time, and is checked.
 */
function unchangedSince(abs: string, row: KnownFile | undefined): boolean {
  if (!row) return false;
  try {
    const st = statSync(abs);
    return st.size === row.size && st.size <= row.offset && st.mtimeMs === row.mtime;
  } catch {
    return false; // gone: importFile reports it
  }
}

/**
 * A finding about a whole file, on its run when it has one, recorded once for the same message
 * (a folder opened again does not repeat it). Returns whether it was new.
 */
function fileFinding(ledger: Ledger, key: string, code: FindingCode, message: string): boolean {
  const msg = message.length > 2000 ? `${message.slice(0, 2000)}…` : message;
  const seen = ledger.db
    .prepare('SELECT 1 FROM findings WHERE file = ? AND code = ? AND message = ? LIMIT 1')
    .get(key, code, msg);
  if (seen) return false;
  const runId = ledger.db.prepare('SELECT run_id FROM runs WHERE origin = ? LIMIT 1').pluck().get(key) as
    string | undefined;
  ledger.addFindings(runId ?? null, [{ code, file: key, line: null, seq: null, message: msg }]);
  return true;
}

/** Imports one `.jsonl` file named directly (inside the folder or not). */
export async function ingestFile(ledger: Ledger, file: string): Promise<IngestSummary> {
  const abs = path.resolve(file);
  const st = await stat(abs);
  if (st.isDirectory() || (/\.(traj|json)$/i.test(abs) && !streamedFile(abs))) {
    const r = await importDocument(ledger, { abs, dir: st.isDirectory() }, keyOf(ledger.folder, abs));
    return { files: 1, events: r.events, findings: r.findings };
  }
  const r = await importFile(ledger, abs, { key: keyOf(ledger.folder, abs), source: defaultSource() });
  return { files: 1, events: r.events, findings: r.findings };
}

/** Whether a streamed format (an eval log read record by record) claims a file by its first bytes. */
function streamedFile(abs: string): boolean {
  try {
    return detectStreamed(readAt(abs, 0, 4096)) !== undefined;
  } catch {
    return false; // unreadable: the document path reports it
  }
}
