import { closeSync, readSync, statSync } from 'node:fs';
import { parseBlock } from './block';
import { DEFAULT_BLOCK, DEFAULT_MAX_LINE, type Block } from './lines';
import { PARALLEL_MIN, WORKER_MAX_BLOCK, startPool, type Pool } from './parallel';
import { detectText, type Format } from './parse';
import { firstLine, openRegular } from './read-at';
import type { ParsedBlock, parsedBlocks } from './source';

type Source = typeof parsedBlocks;

/**
 * The first open of a folder of many small files (~/.codex/sessions holds 10,000 rollouts and
 * more): a file under PARALLEL_MIN is parsed in the main thread, which also inserts and commits, so
 * one core did all the work (10,000 Claude Code sessions: 44 s, 39 s of CPU, ~40% of it parsing).
 * Here a pool shared by the folder's files reads and parses the next new files while the main
 * thread imports the current one.
 *
 * A prefetched file is used only when importPass asks for exactly what was read: from byte 0 to the
 * size seen, in the format its first record names. Anything else (the file grew, another process
 * imported it meanwhile, it vanished) is read again as usual, so what is imported never depends on
 * the prefetch.
 */
export interface FolderFile {
  abs: string;
  /** Whether importPass imports it only if a format other than seed000 claims it. */
  onlyIfClaimed: boolean;
}

/** Starting a pool (~0.1–1 s, ~60 MB) pays only for a folder of many new small files. */
const MIN_FILES = 16;
/** How far ahead of the file being imported: bounds what the parsed results hold in memory. */
const AHEAD_FILES = 16;
const AHEAD_BYTES = 16 << 20;

/** A block of a line of MiBs is parsed when it is imported: a worker's heap is for ordinary lines. */
type Unparsed = { t: 'unparsed'; block: Extract<Block, { t: 'lines' }> };

interface Ahead {
  until: number;
  fmt: Format | null;
  bytes: number;
  blocks: Promise<(ParsedBlock | Unparsed)[] | null>;
}

export class Prefetch {
  private readonly ahead = new Map<string, Ahead>();
  private readonly sizes: (number | null)[];
  private next = 0;
  private bytesAhead = 0;
  /** Files imported from what was read ahead, and files read again (changed, or not read ahead). */
  readonly stats = { used: 0, readAgain: 0 };

  private constructor(
    private readonly pool: Pool,
    private readonly files: readonly FolderFile[],
    private readonly maxLine: number,
  ) {
    this.sizes = files.map(() => null);
  }

  /** A prefetch for these new files, or null when there are too few of them (or no pool). */
  static start(files: readonly FolderFile[], maxLine = DEFAULT_MAX_LINE): Prefetch | null {
    if (files.length < MIN_FILES) return null;
    let pool: Pool | null = null;
    try {
      pool = startPool();
    } catch {
      pool = null;
    }
    return pool ? new Prefetch(pool, files, maxLine) : null;
  }

  /** The parsing source for files[i]: its prefetched blocks when they fit the request. */
  sourceFor(i: number, fallback: Source): Source {
    this.fill(i);
    const abs = this.files[i]!.abs;
    const got = this.ahead.get(abs);
    if (got) {
      this.ahead.delete(abs);
      this.bytesAhead -= got.bytes;
    }
    this.fill(i + 1);
    const stats = this.stats;
    return async function* (file, start, opts) {
      const blocks =
        got && file === abs && start === 0 && opts.until === got.until && (opts.fmt ?? null) === got.fmt
          ? await got.blocks
          : null;
      if (blocks === null) {
        stats.readAgain += 1;
        yield* fallback(file, start, opts);
        return;
      }
      stats.used += 1;
      for (const b of blocks) {
        if (b.t !== 'unparsed') yield b;
        else {
          const { start: s, end, lines, buf } = b.block;
          yield { t: 'lines', start: s, end, lines, results: parseBlock(buf, got!.fmt) };
        }
      }
    };
  }

  async close(): Promise<void> {
    this.ahead.clear();
    await this.pool.close();
  }

  /** Starts reading and parsing files from `from` on, within the window. */
  private fill(from: number): void {
    if (this.next < from) this.next = from;
    while (
      this.next < this.files.length &&
      this.next < from + AHEAD_FILES &&
      (this.bytesAhead < AHEAD_BYTES || this.ahead.size === 0)
    ) {
      const f = this.files[this.next++]!;
      const a = this.read(f);
      if (!a) continue;
      this.ahead.set(f.abs, a);
      this.bytesAhead += a.bytes;
    }
  }

  /** What importPass would read of a new file, parsed by the pool; null when it reads it otherwise. */
  private read(f: FolderFile): Ahead | null {
    let size: number;
    let fmt: Format | null;
    try {
      size = statSync(f.abs).size;
      if (size === 0 || size >= PARALLEL_MIN) return null; // nothing to read, or its own workers
      // As importPass tells a new file's format: from its first record.
      const first = firstLine(f.abs, Math.min(size, this.maxLine));
      fmt = first === null ? null : detectText(first);
    } catch {
      return null; // importPass reports what is wrong with it
    }
    if (f.onlyIfClaimed && (fmt === null || fmt === 'seed000')) return null;
    const blocks = this.parse(f.abs, size, fmt);
    return { until: size, fmt, bytes: size, blocks };
  }

  private async parse(
    abs: string,
    until: number,
    fmt: Format | null,
  ): Promise<(ParsedBlock | Unparsed)[] | null> {
    const blocks = smallFileBlocks(abs, until);
    if (blocks === null) return null;
    const pending = blocks.map((b): Promise<ParsedBlock | Unparsed> => {
      if (b.t !== 'lines') return Promise.resolve(b);
      if (b.buf.length > WORKER_MAX_BLOCK) return Promise.resolve({ t: 'unparsed', block: b });
      const parsed = this.pool
        .parse(b.buf, fmt)
        .then((results): ParsedBlock => ({
          t: 'lines',
          start: b.start,
          end: b.end,
          lines: b.lines,
          results,
        }));
      parsed.catch(() => undefined); // seen by Promise.all below
      return parsed;
    });
    try {
      return await Promise.all(pending);
    } catch {
      return null; // read again as usual (a worker failed)
    }
  }
}

/**
 * A small file's first `until` bytes as readBlocks gives them (blocks of complete lines, the bytes
 * after the last newline as its tail), read at once: for a file of a few dozen KB the thread pool's
 * open, read and close cost the main thread more than the read itself (~0.7 ms a file in profiles of
 * a first open of 1,000 sessions). Null when it cannot be read so (importPass then reads it, and
 * reports why). Lines are never over the bound here: the file is under PARALLEL_MIN.
 */
export function smallFileBlocks(abs: string, until: number): Block[] | null {
  let buf: Buffer;
  try {
    const fd = openRegular(abs);
    try {
      buf = Buffer.allocUnsafe(until);
      if (readSync(fd, buf, 0, until, 0) !== until) return null; // shrank since its stat
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
  const out: Block[] = [];
  const last = buf.lastIndexOf(10);
  for (let from = 0; from <= last;) {
    // Blocks of about DEFAULT_BLOCK, cut after a newline; a longer line is a block of its own.
    let end = from + DEFAULT_BLOCK <= last ? buf.lastIndexOf(10, from + DEFAULT_BLOCK - 1) : last;
    if (end < from) end = buf.indexOf(10, from + DEFAULT_BLOCK);
    const body = buf.subarray(from, end + 1);
    out.push({ t: 'lines', buf: body, start: from, end: end + 1, lines: newlines(body) });
    from = end + 1;
  }
  if (last + 1 < until)
    out.push({ t: 'tail', buf: buf.subarray(last + 1), start: last + 1, bytes: until - last - 1 });
  return out;
}

function newlines(buf: Buffer): number {
  let n = 0;
  for (let i = buf.indexOf(10); i !== -1; i = buf.indexOf(10, i + 1)) n += 1;
  return n;
}
