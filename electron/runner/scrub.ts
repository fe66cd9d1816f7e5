/**
 * What a real agent's run leaves on disk, made safe to keep. The agent writes in its private home
 * (`<run>/home`: its settings, caches, shell snapshots, its own transcript) and in the workspace
 * (`.env` files of the task, files it made) whatever its tools saw, unredacted. After the run:
 *   - each transcript is redacted in place, line by line, BEFORE it is imported (so the imported
 *     run's source file is the redacted one, and `verify` finds it unchanged later);
 *   - everything else in the home is removed (the hook client, settings, caches, TMPDIR): the
 *     ledger keeps what configured the agent as digests in run_started;
 *   - the workspace's text files are redacted in place (the judge has run by then).
 * Also here: the digest of a `--config` folder (which files, their sha256: never their content).
 */
import {
  closeSync,
  fsyncSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { canonicalJson } from '../../shared/protocol';
import { redactCredentials } from '../../shared/redact';
import { sha256Bytes, sha256Hex } from '../crypto';
import { redactText } from '../ledger/artifact-store';

/** Files larger than this are not read for redaction (a build output, a data file): listed as skipped. */
const MAX_SCRUB_BYTES = 8 << 20;

function writeAtomic(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.scrub`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
}

/**
 * A JSON-lines file redacted in place: each line that parses is redacted as a value (its JSON
 * stays valid and unchanged lines keep their bytes); a line that does not parse, as text.
 * Returns how many credentials were replaced.
 */
export function redactJsonLines(file: string): number {
  const text = readFileSync(file, 'utf8');
  let hits = 0;
  const lines = text.split('\n').map((line) => {
    if (line.trim() === '') return line;
    try {
      const r = redactCredentials(JSON.parse(line) as unknown);
      if (r.hits === 0) return line;
      hits += r.hits;
      return JSON.stringify(r.value);
    } catch {
      const r = redactText(line);
      hits += r.hits;
      return r.text;
    }
  });
  if (hits > 0) writeAtomic(file, lines.join('\n'));
  return hits;
}

/** Regular files under `dir` (no links followed), relative, sorted. */
function filesUnder(dir: string, skip: ReadonlySet<string> = new Set()): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { recursive: true, withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .filter((r) => !r.split(path.sep).some((part) => skip.has(part)))
    .sort();
}

/**
 * Removes everything under `home` but the files in `keep` (absolute paths) and the folders that
 * hold them. Links are removed as links, never followed. Returns how many files were removed.
 */
export function pruneHome(home: string, keep: readonly string[]): number {
  const kept = new Set(keep.map((f) => path.resolve(f)));
  let removed = 0;
  let entries;
  try {
    entries = readdirSync(home, { recursive: true, withFileTypes: true });
  } catch {
    return 0;
  }
  const dirs: string[] = [];
  for (const e of entries) {
    const abs = path.join(e.parentPath, e.name);
    if (e.isDirectory()) dirs.push(abs);
    else if (!kept.has(abs)) {
      rmSync(abs, { force: true });
      removed += 1;
    }
  }
  // Deepest first: a folder left empty goes too (one that holds a kept file stays).
  for (const d of dirs.sort((a, b) => b.length - a.length)) {
    try {
      if (readdirSync(d).length === 0) rmdirSync(d);
    } catch {
      // gone already, or not empty
    }
  }
  return removed;
}

export interface ScrubbedFile {
  path: string;
  credentials: number;
}

/**
 * Every text file of the workspace with the credentials in it replaced (in place). Binary files
 * (a NUL byte) and files over 8 MB are not rewritten; the latter are listed in `skipped`.
 */
export function scrubWorkspace(workspace: string): { files: ScrubbedFile[]; skipped: string[] } {
  const files: ScrubbedFile[] = [];
  const skipped: string[] = [];
  for (const rel of filesUnder(workspace)) {
    const abs = path.join(workspace, rel);
    const st = lstatSync(abs, { throwIfNoEntry: false });
    if (!st?.isFile()) continue;
    if (st.size > MAX_SCRUB_BYTES) {
      skipped.push(rel);
      continue;
    }
    const buf = readFileSync(abs);
    if (buf.includes(0)) continue;
    const r = redactText(buf.toString('utf8'));
    if (r.hits === 0) continue;
    writeAtomic(abs, r.text);
    files.push({ path: rel.split(path.sep).join('/'), credentials: r.hits });
  }
  return { files, skipped };
}

export interface ConfigDirDigest {
  /** The folder as the user named it (resolved): replay reads it again from there. */
  path: string;
  /** sha256 of the canonical JSON of `files`. */
  digest: string;
  /** Each regular file, relative path → sha256 of its bytes. Never the content. */
  files: Record<string, string>;
}

/** What a `--config` folder holds, as digests; throws a clear error when it cannot be read. */
export function configDirDigest(dir: string): ConfigDirDigest {
  const abs = path.resolve(dir);
  const st = lstatSync(abs, { throwIfNoEntry: false });
  if (!st?.isDirectory()) throw new Error(`--config ${abs}: not a folder`);
  const files: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const rel of filesUnder(abs, new Set(['.git', 'node_modules']))) {
    files[rel.split(path.sep).join('/')] = sha256Bytes(readFileSync(path.join(abs, rel)));
  }
  return { path: abs, digest: sha256Hex(canonicalJson({ ...files })), files: { ...files } };
}

/** The files whose digest differs between two config folders (added, removed or changed), sorted. */
export function changedConfigFiles(a: Record<string, string>, b: Record<string, string>): string[] {
  const names = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...names].filter((n) => a[n] !== b[n]).sort();
}
