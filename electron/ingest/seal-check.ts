import { createHash } from 'node:crypto';
import { closeSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import { SealSchema } from '../../shared/api/bundle';
import type { Db } from '../ledger/open';
import type { Seal } from './importer';
import { excerptOf, parseLine, type Format } from './parse';
import { hashRange, openRegular } from './read-at';
import type { FileState } from './sequencer';
import { eventFiles } from './document';

/**
 * Whether a source file still holds what was imported from it: the sha256 of each byte range its
 * seal recorded (runs.meta.seal, the importer's state). On a mismatch, the first line that differs
 * from what the ledger stored of it.
 */
export type SealCheck =
  { ok: true } | { ok: false; line: number; why: string } | { ok: false; gone: true; why: string };

/**
 * @param lines lines before each range's start (FileState.sealLines; absent: a range from byte 0
 * starts at line 1, and a later one is searched from the first range's start).
 */
export function checkSeal(
  db: Db,
  abs: string,
  key: string,
  ranges: Seal['ranges'],
  lines: readonly number[] | undefined,
  fmt: Format | null,
  size: number,
): SealCheck {
  for (const [i, r] of ranges.entries()) {
    const before = lines?.[i] ?? (r.from === 0 ? 0 : null);
    if (r.to > size) {
      const at = firstDifferingLine(db, abs, key, fmt, before === null ? 0 : r.from, before ?? 0, size);
      return {
        ok: false,
        line: at,
        why: `the file is ${size} bytes, shorter than the ${r.to} imported from it`,
      };
    }
    const h = createHash('sha256');
    hashRange(abs, r.from, r.to, h);
    if (h.digest('hex') !== r.sha256) {
      const from = before === null ? 0 : r.from;
      return {
        ok: false,
        line: firstDifferingLine(db, abs, key, fmt, from, before ?? 0, r.to),
        why: `bytes ${r.from}-${r.to} no longer have the sha256 sealed at import`,
      };
    }
  }
  return { ok: true };
}

/**
 * The first line in bytes [from, to) of the file (`before` lines precede `from`) that is not what
 * the ledger holds of it: its events (kind, time, payload as stored) or, for a line that made no
 * event, the text its finding kept. A line whose change leaves what it parses to as it was (space
 * between tokens) is not told apart: then the range's first line is named.
 */
function firstDifferingLine(
  db: Db,
  abs: string,
  key: string,
  fmt: Format | null,
  from: number,
  before: number,
  to: number,
): number {
  const events = db.prepare(
    `SELECT e.kind, e.at, e.payload FROM events e JOIN runs r ON r.run_no = e.run_no
      WHERE r.origin = ? AND e.line = ? ORDER BY e.id`,
  );
  const finding = db.prepare('SELECT excerpt FROM findings WHERE file = ? AND line = ? LIMIT 1').pluck();
  const sameAsStored = (text: string, line: number): boolean => {
    const stored = events.all(key, line) as { kind: string; at: string; payload: string }[];
    if (text.trim() === '') return stored.length === 0;
    const r = parseLine(text, fmt);
    const list = r.t === 'multi' ? r.list : [r];
    const evs = list.filter((p) => p.t === 'ev');
    if (evs.length === 0) {
      const excerpt = finding.get(key, line) as string | null | undefined;
      return (
        stored.length === 0 && excerpt !== undefined && (excerpt === null || excerpt === excerptOf(text))
      );
    }
    return (
      evs.length === stored.length &&
      evs.every(
        (p, k) => p.kind === stored[k]!.kind && p.at === stored[k]!.at && p.json === stored[k]!.payload,
      )
    );
  };
  const fd = openRegular(abs);
  try {
    let line = before;
    let pending = Buffer.alloc(0);
    const buf = Buffer.allocUnsafe(1 << 20);
    for (let pos = from; pos < to;) {
      const n = readSync(fd, buf, 0, Math.min(buf.length, to - pos), pos);
      if (n === 0) break;
      pos += n;
      let data = Buffer.concat([pending, buf.subarray(0, n)]);
      for (let nl = data.indexOf(10); nl >= 0; nl = data.indexOf(10)) {
        line += 1;
        if (!sameAsStored(data.subarray(0, nl).toString('utf8'), line)) return line;
        data = data.subarray(nl + 1);
      }
      pending = Buffer.from(data);
    }
    if (pending.length > 0 && !sameAsStored(pending.toString('utf8'), line + 1)) return line + 1;
  } finally {
    closeSync(fd);
  }
  return before + 1;
}

/** What `verify <run>` says of a sealed run's source file: as sealed, changed (where), or gone. */
export interface SourceVerdict {
  state: 'unchanged' | 'changed' | 'gone';
  file: string;
  line: number | null;
  message: string;
}

/**
 * The seal of a run imported from an unchained source, checked against that file as it is now;
 * null for a run without a seal (its chain is its writer's, or it was not imported).
 */
export function checkRunSource(
  db: Db,
  folder: string,
  run: { meta: Record<string, unknown> },
): SourceVerdict | null {
  const parsed = SealSchema.safeParse(run.meta.seal);
  if (!parsed.success) return null;
  const seal = parsed.data;
  const abs = path.isAbsolute(seal.file) ? seal.file : path.join(folder, seal.file);
  let size: number;
  let dir: boolean;
  try {
    const stat = statSync(abs);
    size = stat.size;
    dir = stat.isDirectory();
  } catch {
    return { state: 'gone', file: seal.file, line: null, message: `source gone: ${seal.file} is not there` };
  }
  const row = db.prepare('SELECT state FROM imports WHERE file = ?').pluck().get(seal.file) as
    string | undefined;
  const st = row ? (JSON.parse(row) as Partial<FileState & FolderSealState>) : {};
  if (dir) return checkFolderSource(abs, seal.file, seal.ranges, st);
  // The seal of the run and of the import progress agree; an older state has no line numbers.
  const lines = st.sealLines?.length === seal.ranges.length ? st.sealLines : undefined;
  const c = checkSeal(db, abs, seal.file, seal.ranges, lines, st.format ?? null, size);
  if (c.ok)
    return { state: 'unchanged', file: seal.file, line: null, message: `source unchanged: ${seal.file}` };
  const line = 'line' in c ? c.line : null;
  return {
    state: 'changed',
    file: seal.file,
    line,
    message: `source changed at line ${line}: ${seal.file} (${c.why})`,
  };
}

/** What a conversation folder's import state says of its seal (ingest/document.ts, DocState). */
interface FolderSealState {
  files?: number;
  sealFiles?: string[];
}

/**
 * A conversation folder's seal (OpenHands: base_state.json and events/): each event file's bytes,
 * one range per file, so a change is named by its file. base_state.json is not in it: OpenHands
 * rewrites it as a conversation goes on. A folder sealed before that (no sealFiles) has a range
 * per import over base_state.json's bytes then its new files': checked so, and a change is named
 * by the range's files, base_state.json among them.
 */
function checkFolderSource(
  dir: string,
  key: string,
  ranges: Seal['ranges'],
  st: FolderSealState,
): SourceVerdict {
  const changed = (message: string): SourceVerdict => ({
    state: 'changed',
    file: key,
    line: null,
    message: `source changed: ${key}: ${message}`,
  });
  const sizeOf = (abs: string): number | null => {
    const s = statSync(abs, { throwIfNoEntry: false });
    return s?.isFile() ? s.size : null;
  };
  if (st.sealFiles && st.sealFiles.length === ranges.length) {
    for (const [i, r] of ranges.entries()) {
      const name = st.sealFiles[i]!;
      const abs = path.join(dir, name);
      const size = sizeOf(abs);
      if (size === null) return changed(`${name} is not there`);
      if (size !== r.to - r.from) return changed(`${name} is ${size} bytes, ${r.to - r.from} when imported`);
      const h = createHash('sha256');
      hashRange(abs, 0, size, h);
      if (h.digest('hex') !== r.sha256) return changed(`${name} no longer has the sha256 sealed at import`);
    }
    return {
      state: 'unchanged',
      file: key,
      line: null,
      message: `source unchanged: ${key} (${ranges.length} event files as imported; base_state.json, which OpenHands rewrites, is not sealed)`,
    };
  }
  // Sealed before: the files in the order they were read, base_state.json first.
  const names = [
    'base_state.json',
    ...eventFiles(dir)
      .slice(0, st.files ?? 0)
      .map((n) => `events/${n}`),
  ];
  const files: { name: string; abs: string; from: number; to: number }[] = [];
  let at = 0;
  for (const name of names) {
    const abs = path.join(dir, name);
    const size = sizeOf(abs);
    if (size === null) {
      if (name === 'base_state.json') continue;
      return changed(`${name} is not there`);
    }
    files.push({ name, abs, from: at, to: at + size });
    at += size;
  }
  for (const r of ranges) {
    const h = createHash('sha256');
    const within = files.filter((f) => f.to > r.from && f.from < r.to);
    for (const f of within)
      hashRange(f.abs, Math.max(r.from, f.from) - f.from, Math.min(r.to, f.to) - f.from, h);
    if (at < r.to || h.digest('hex') !== r.sha256) {
      const named = within.map((f) => f.name);
      const files =
        named.length === 0
          ? 'past its files'
          : named.length <= 3
            ? named.join(', ')
            : `${named[0]}, ${named[1]} … ${named.at(-1)}: ${named.length} files`;
      return changed(
        `bytes ${r.from}-${r.to} (${files}) no longer have the sha256 sealed at import` +
          (named.includes('base_state.json')
            ? '; sealed by an earlier ProofLoop with base_state.json, which OpenHands rewrites as a conversation goes on: a rewrite of it alone changes this range'
            : ''),
      );
    }
  }
  return { state: 'unchanged', file: key, line: null, message: `source unchanged: ${key}` };
}
