import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { isConversationDir, type DocumentSource } from './document';

export interface ScanOptions {
  /** Run ids of runs ProofLoop executed: their `<folder>/<run_id>/events.jsonl` are its own mirrors. */
  executed: ReadonlySet<string>;
  maxDepth?: number;
  /**
   * Filled with the entries that would be imported but cannot be: an `events.jsonl` that is no
   * regular file (a FIFO, a directory, a link), a run's file or folder whose name is not UTF-8, a
   * folder that cannot be listed (a path too long for the platform, no permission).
   */
  unreadable?: { file: string; why: string }[];
  /**
   * Filled with the whole-file sources to look at (document.ts): `*.traj` and `*.json` files (read
   * only if a document format claims them) and conversation folders (an `events/` of numbered
   * event files, whose `events/` is not walked).
   */
  documents?: DocumentSource[];
}

const SKIP_DIRS = new Set(['node_modules', '.git']);
/** Files a format may claim by their first record or bytes: JSON lines, Inspect AI's `.eval` zips. */
const CANDIDATE = /\.(jsonl|eval)$/;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A name as a person can read it when it is no UTF-8: each byte that is not part of a valid UTF-8
 * sequence as `\xHH`, a backslash as `\\` (so the escaped form names one entry only).
 */
export function escapeName(name: Buffer): string {
  const text = name.toString('latin1');
  let out = '';
  let i = 0;
  while (i < name.length) {
    // The longest valid UTF-8 sequence from here (1-4 bytes), else one escaped byte.
    let taken = 0;
    for (let n = Math.min(4, name.length - i); n >= 1 && taken === 0; n--) {
      try {
        const ch = strictUtf8.decode(name.subarray(i, i + n));
        if ([...ch].length === 1) {
          out += ch === '\\' ? '\\\\' : ch;
          taken = n;
        }
      } catch {
        // not a whole sequence of n bytes
      }
    }
    if (taken === 0) {
      out += `\\x${text.charCodeAt(i).toString(16).padStart(2, '0')}`;
      taken = 1;
    }
    i += taken;
  }
  return out;
}

function utf8Name(name: Buffer): string | null {
  try {
    return strictUtf8.decode(name);
  } catch {
    return null;
  }
}

/**
 * Every `<folder>/**\/events.jsonl` and other `*.jsonl` and `*.eval` (Claude Code
 * sessions, Codex rollouts, eval logs: the
 * importer reads one only if a format claims it by its first record) to import, in a stable order: not under `<folder>/.proofloop`,
 * `node_modules` or `.git`, not ProofLoop's own mirrors. Symbolic links are not followed, so
 * nothing outside the folder is read. Entries are listed as bytes: a name that is not UTF-8 would
 * otherwise come back with U+FFFD in it, a path that names nothing, and its run would vanish
 * without a word; such an entry (and every file below such a folder) is reported in `unreadable`
 * under its escaped name (escapeName), as is a folder that cannot be listed.
 */
export async function scanFolder(folder: string, opts: ScanOptions): Promise<string[]> {
  const out: string[] = [];
  const maxDepth = opts.maxDepth ?? 32;
  const cannot = (shown: string, why: string) => opts.unreadable?.push({ file: shown, why });
  /**
   * `dir` is the path as the platform takes it (bytes below a name that is not UTF-8), `shown` the
   * same path as text (escaped there), `named` whether every name on it is UTF-8.
   */
  const walk = async (dir: string | Buffer, shown: string, named: boolean, depth: number): Promise<void> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true, encoding: 'buffer' });
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      // Gone since its parent was listed: nothing is there to account for.
      if (err.code !== 'ENOENT' && depth > 0)
        cannot(shown, `a folder that cannot be listed (${err.code ?? err.message}), so nothing in it`);
      return;
    }
    entries.sort((a, b) => Buffer.compare(a.name, b.name));
    for (const e of entries) {
      const text = utf8Name(e.name);
      const entryNamed = named && text !== null;
      const name = text ?? escapeName(e.name);
      const abs = path.join(shown, name);
      const platform: string | Buffer = entryNamed
        ? abs
        : Buffer.concat([typeof dir === 'string' ? Buffer.from(dir) : dir, Buffer.from(path.sep), e.name]);
      const isRunFile = name === 'events.jsonl' || (e.isFile() && CANDIDATE.test(name));
      const isDocument = opts.documents !== undefined && e.isFile() && /\.(traj|json)$/i.test(name);
      if (e.isDirectory() && name === 'events.jsonl') {
        cannot(abs, 'a directory');
      } else if (e.isDirectory()) {
        if (SKIP_DIRS.has(name)) continue;
        if (opts.documents && name === 'events' && named && isConversationDir(shown)) {
          opts.documents.push({ abs: shown, dir: true });
          continue;
        }
        if (depth === 0 && name === '.proofloop') continue;
        // A real agent's private home in a run ProofLoop executed: the runner imports its
        // transcripts itself once the agent has exited, after redacting them in place
        // (runner/scrub.ts); read here while the agent writes, they would be imported raw and
        // then be found rewritten.
        if (depth === 1 && name === 'home' && opts.executed.has(path.basename(shown))) continue;
        if (depth < maxDepth) await walk(platform, abs, entryNamed, depth + 1);
      } else if (e.isFile() && (isRunFile || isDocument) && !entryNamed) {
        cannot(
          abs,
          `named with bytes that are not UTF-8 (shown as \\xHH): its path cannot be given to the importer; rename ${text === null ? 'it' : 'its folder'} to import it`,
        );
      } else if (e.isFile() && name === 'events.jsonl') {
        if (depth === 1 && opts.executed.has(path.basename(shown))) continue;
        out.push(abs);
      } else if (e.isFile() && isRunFile) {
        // Read only if an adapter claims it by its first record or, for a streamed format (an eval
        // log's `.eval` zip), by its first bytes (importer: onlyIfClaimed).
        out.push(abs);
      } else if (isDocument) {
        opts.documents!.push({ abs, dir: false });
      } else if (name === 'events.jsonl') {
        const what = e.isSymbolicLink()
          ? 'a symbolic link (links are not followed: nothing outside the folder is read)'
          : e.isFIFO()
            ? 'a FIFO'
            : 'not a regular file';
        cannot(abs, what);
      }
    }
  };
  await walk(folder, folder, true, 0);
  return out;
}
