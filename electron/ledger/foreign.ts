/**
 * Where the ledger of a folder lives. A runs folder keeps it in `<folder>/.proofloop/ledger.db`;
 * another program's folder (`~/.claude/projects`, `~/.codex/sessions`) is never written into, so
 * its ledger lives in ProofLoop's own data directory, found again by the folder's real path:
 * `$PROOFLOOP_HOME/folders/<sha256 of the path, 32 hex>/ledger.db` (default `~/.proofloop`), with
 * `folder.txt` beside it naming the folder.
 *
 * The rule: a folder is another program's when it has no `.proofloop/`, holds no `events.jsonl`
 * near its top, and the first `.jsonl` files found (breadth first, at most SAMPLE) are all claimed
 * by a foreign format's adapter, by their first line. Sync and bounded: it runs on every open.
 */
import { existsSync, mkdirSync, readdirSync, realpathSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { claudeCode } from '../ingest/formats/claude-code';
import { codex } from '../ingest/formats/codex';
import type { FormatAdapter } from '../ingest/formats/types';
import { firstLine } from '../ingest/read-at';

const FOREIGN: readonly FormatAdapter[] = [claudeCode, codex];
const SAMPLE = 8;
const MAX_DIRS = 200;
/** A first line is read up to this size: a Codex session_meta carries the whole system prompt. */
const FIRST_LINE_MAX = 1 << 20;

export function proofloopHome(): string {
  return process.env.PROOFLOOP_HOME?.trim() || path.join(homedir(), '.proofloop');
}

/** The first line of a file, parsed, or null (unreadable, not JSON, not an object). */
export function firstRecord(file: string): Record<string, unknown> | null {
  try {
    const line = firstLine(file, FIRST_LINE_MAX);
    const o: unknown = line === null ? null : JSON.parse(line);
    return typeof o === 'object' && o !== null && !Array.isArray(o) ? (o as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The foreign adapter that claims a file by its first line, or null. */
export function claimsFile(first: Record<string, unknown> | null): FormatAdapter | null {
  if (first === null) return null;
  return FOREIGN.find((a) => a.detect(first)) ?? null;
}

/** Whether `folder` is another program's sessions folder (see the rule above). */
export function isForeignFolder(folder: string): boolean {
  if (existsSync(path.join(folder, '.proofloop'))) return false;
  const queue = [folder];
  let sampled = 0;
  for (let d = 0; d < queue.length && d < MAX_DIRS && sampled < SAMPLE; d++) {
    let entries;
    try {
      entries = readdirSync(queue[d]!, { withFileTypes: true });
    } catch {
      continue;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      if (e.isDirectory() && e.name !== 'node_modules' && e.name !== '.git')
        queue.push(path.join(queue[d]!, e.name));
      else if (e.isFile() && e.name === 'events.jsonl') return false;
      else if (e.isFile() && e.name.endsWith('.jsonl') && sampled < SAMPLE) {
        if (claimsFile(firstRecord(path.join(queue[d]!, e.name))) === null) return false;
        sampled++;
      }
    }
  }
  return sampled > 0;
}

/** Whether a foreign folder's ledger was made before: it is found again whatever the folder holds now. */
export function hasForeignLedger(folder: string): boolean {
  return existsSync(foreignDir(folder));
}

function foreignDir(folder: string): string {
  let real = path.resolve(folder);
  try {
    real = realpathSync(real);
  } catch {
    // a folder that is gone keeps its resolved path as its key
  }
  return path.join(proofloopHome(), 'folders', createHash('sha256').update(real).digest('hex').slice(0, 32));
}

/** The ledger file of a foreign folder, creating its directory and `folder.txt`. */
export function foreignLedgerFile(folder: string): string {
  let real = path.resolve(folder);
  try {
    real = realpathSync(real);
  } catch {
    // a folder that is gone keeps its resolved path as its key
  }
  const dir = path.join(
    proofloopHome(),
    'folders',
    createHash('sha256').update(real).digest('hex').slice(0, 32),
  );
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const note = path.join(dir, 'folder.txt');
  if (!existsSync(note)) writeFileSync(note, `${real}\n`, { mode: 0o600 });
  return path.join(dir, 'ledger.db');
}
