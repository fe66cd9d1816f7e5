import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { isConversationDir, type DocumentSource } from './document';

export interface ScanOptions {
  /** Run ids of runs ProofLoop executed: their `<folder>/<run_id>/events.jsonl` are its own mirrors. */
  executed: ReadonlySet<string>;
  maxDepth?: number;
  /** Filled with the `events.jsonl` entries that are no regular files (a FIFO, a directory, a link). */
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

/**
 * Every `<folder>/**\/events.jsonl` and other `*.jsonl` and `*.eval` (Claude Code
 * sessions, Codex rollouts, eval logs: the
 * importer reads one only if a format claims it by its first record) to import, in a stable order: not under `<folder>/.proofloop`,
 * `node_modules` or `.git`, not ProofLoop's own mirrors. Symbolic links are not followed, so
 * nothing outside the folder is read.
 */
export async function scanFolder(folder: string, opts: ScanOptions): Promise<string[]> {
  const out: string[] = [];
  const maxDepth = opts.maxDepth ?? 32;
  const walk = async (dir: string, depth: number): Promise<void> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return; // unreadable or gone: nothing to import there
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const abs = path.join(dir, e.name);
      if (e.isDirectory() && e.name === 'events.jsonl' && opts.unreadable) {
        opts.unreadable.push({ file: abs, why: 'a directory' });
      } else if (e.isDirectory()) {
        if (SKIP_DIRS.has(e.name)) continue;
        if (opts.documents && e.name === 'events' && isConversationDir(dir)) {
          opts.documents.push({ abs: dir, dir: true });
          continue;
        }
        if (depth === 0 && e.name === '.proofloop') continue;
        if (depth < maxDepth) await walk(abs, depth + 1);
      } else if (e.isFile() && e.name === 'events.jsonl') {
        if (depth === 1 && opts.executed.has(path.basename(dir))) continue;
        out.push(abs);
      } else if (e.isFile() && CANDIDATE.test(e.name)) {
        // Read only if an adapter claims it by its first record or, for a streamed format (an eval
        // log's `.eval` zip), by its first bytes (importer: onlyIfClaimed).
        out.push(abs);
      } else if (opts.documents && e.isFile() && /\.(traj|json)$/i.test(e.name)) {
        opts.documents.push({ abs, dir: false });
      } else if (e.name === 'events.jsonl' && opts.unreadable) {
        const what = e.isDirectory()
          ? 'a directory'
          : e.isSymbolicLink()
            ? 'a symbolic link (links are not followed: nothing outside the folder is read)'
            : e.isFIFO()
              ? 'a FIFO'
              : 'not a regular file';
        opts.unreadable.push({ file: abs, why: what });
      }
    }
  };
  await walk(folder, 0);
  return out;
}
