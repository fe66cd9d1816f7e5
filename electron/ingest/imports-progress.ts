import type { Ledger } from '../ledger';
import { prepared } from '../ledger/statements';
import { sha256Bytes } from '../crypto';
import type { FileState } from './sequencer';
import type { Format } from './parse';
import type { ImportResult } from './importer';
import { formatNamed } from './formats/registry';
import { readAt } from './read-at';
import { checkSeal } from './seal-check';

/**
 * What the `imports` table records of a file (how far it was read, a digest of its first bytes,
 * the carried per-run state), and whether the file as it is now still goes on from there: the
 * importer's first look at a file it has imported before.
 */
export interface ImportsRow {
  file: string;
  size: number;
  offset: number;
  line: number;
  head_sha: string | null;
  state: string;
}

/** Another process imported from the same progress meanwhile: the pass starts again from its progress. */
export class Conflict extends Error {}

/** How much of a file's start its `head_sha` covers. */
export const HEAD_BYTES = 4096;

export const importsRow = (db: Ledger['db'], key: string): ImportsRow | undefined =>
  prepared(db, 'SELECT * FROM imports WHERE file = ?').get(key) as ImportsRow | undefined;

/** Under the write lock: the file's progress is still `row`, or another process moved it (Conflict). */
function unchangedSince(db: Ledger['db'], row: ImportsRow): void {
  const cur = importsRow(db, row.file);
  if (!cur || cur.offset !== row.offset || cur.state !== row.state) throw new Conflict();
}

export function headSha(file: string, len: number): string | null {
  if (len <= 0) return null;
  const buf = readAt(file, 0, len);
  return buf.length < len ? null : sha256Bytes(buf);
}

export const isStreamed = (fmt: Format | null): fmt is Format =>
  fmt !== null && formatNamed(fmt)?.streamed !== undefined;

const nothingRead = (findings = 0): ImportResult => ({ events: 0, findings, bytes: 0 });

/**
 * A file imported before, looked at before it is read on from its stored offset: the pass's result
 * when it ends here, null when the file is to be read. Unchanged since the last import (same size
 * and modification time): nothing to read; reading every file on each open of a folder of 10,000
 * sessions is what this saves. Rewritten rather than appended to: `file_rewritten`, once per
 * rewrite. Touched but as it was: its new time remembered.
 */
export function checkImported(
  ledger: Ledger,
  abs: string,
  key: string,
  row: ImportsRow,
  state: FileState,
  size: number,
  mtime: number,
  fileRunId: () => string | null,
): ImportResult | null {
  const db = ledger.db;
  const { offset } = row;
  const sameTime = state.mtime === mtime;
  if (row.size === size && size <= offset && sameTime) return nothingRead();
  if (offset === 0) return null;
  // Rewritten rather than appended to? The first bytes, and for a sealed file every byte range
  // imported from it, checked against what was recorded (seal-check.ts).
  const headLen = Math.min(HEAD_BYTES, offset);
  const now = size >= headLen ? headSha(abs, headLen) : null;
  // A streamed file is rewritten whole (an unfinished eval log when it ends), never appended to:
  // a new size is a rewrite (a new time alone is not).
  const streamed = isStreamed(state.format) && size !== row.size;
  const sealed = !streamed && state.seal !== undefined && state.seal.length > 0;
  const check = sealed
    ? checkSeal(db, abs, key, state.seal!, state.sealLines, state.format, size)
    : ({ ok: true } as const);
  if (size < offset || now !== row.head_sha || streamed || !check.ok) {
    const line = !check.ok && 'line' in check ? check.line : null;
    const seen = state.rewritten;
    if (seen && seen.head === (now ?? '') && (line !== null ? seen.line === line : seen.size === size))
      return nothingRead();
    const what =
      line !== null
        ? `line ${line} is not what was imported from it (${!check.ok ? check.why : ''})`
        : size < offset
          ? `the file shrank to ${size} bytes below the ${offset} already imported`
          : 'the first bytes of the file changed since it was imported';
    const tx = db.transaction(() => {
      unchangedSince(db, row);
      state.rewritten = { size, head: now ?? '', line };
      ledger.addFindings(fileRunId(), [
        {
          code: 'file_rewritten',
          file: key,
          line,
          seq: null,
          message: `${what}: it was changed in place, not only appended to; the imported run is kept as it was and nothing after the change is read`,
        },
      ]);
      db.prepare('UPDATE imports SET state = ? WHERE file = ?').run(JSON.stringify(state), key);
    });
    tx.immediate();
    return nothingRead(1);
  }
  if (!sameTime && size <= offset) {
    // Touched but as it was: remembered, so the next open does not check it again.
    state.mtime = mtime;
    const stateJson = JSON.stringify(state);
    db.transaction(() => {
      unchangedSince(db, row);
      db.prepare('UPDATE imports SET size = ?, state = ? WHERE file = ?').run(size, stateJson, key);
    }).immediate();
    return nothingRead();
  }
  return null;
}
