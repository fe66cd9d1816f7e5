import { constants } from 'node:fs';
import { open } from 'node:fs/promises';

/**
 * Streaming reader of a JSONL file from a byte offset. It reads fixed-size blocks, splits them on
 * `\n` bytes itself (a `\n` byte never occurs inside a multi-byte UTF-8 sequence) and never holds
 * more than one block plus one line in memory; a line longer than `maxLine` is skipped to its next
 * newline without being buffered.
 */
export type Block =
  /** Complete lines: `buf` holds one or more lines, each ending with `\n`; `lines` counts them. */
  | { t: 'lines'; buf: Buffer; start: number; end: number; lines: number }
  /** One line over the bound, skipped whole (its newline included). */
  | { t: 'too_long'; start: number; end: number; bytes: number }
  /**
   * The bytes after the last newline at EOF: a line still being written, or cut. Not consumed:
   * `buf` is null when it is longer than the bound.
   */
  | { t: 'tail'; buf: Buffer | null; start: number; bytes: number };

export interface ReadOptions {
  blockSize?: number;
  maxLine?: number;
  /** Stop at this byte (the size seen when the read began), so a growing file gives a stable view. */
  until?: number;
  /** The file's format (its adapter's name), for the parser; null: detected from each line. */
  fmt?: string | null;
  /**
   * For a source that parses in workers: where they may store the large values they move out of
   * events (outline.ts; ledger/artifacts.ts, importArtifactsHome). Unset: the importer moves them, in its thread.
   */
  artifacts?: string | null;
  /** A document's source (document.ts): the records already imported, skipped on this read. */
  afterRecord?: number;
}

export const DEFAULT_BLOCK = 1 << 20;
export const DEFAULT_MAX_LINE = 16 << 20;

function countNewlines(buf: Buffer, from: number, to: number): number {
  let n = 0;
  let i = buf.indexOf(10, from);
  while (i !== -1 && i < to) {
    n += 1;
    i = buf.indexOf(10, i + 1);
  }
  return n;
}

export async function* readBlocks(
  file: string,
  start: number,
  opts: ReadOptions = {},
): AsyncGenerator<Block> {
  const blockSize = opts.blockSize ?? DEFAULT_BLOCK;
  const maxLine = opts.maxLine ?? DEFAULT_MAX_LINE;
  // Never through a link, never blocked on a FIFO: a file that is not a regular file is refused.
  const fh = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    if (!(await fh.stat()).isFile())
      throw Object.assign(new Error(`${file} is not a regular file`), { code: 'ENOTREG' });
    const until = opts.until ?? (await fh.stat()).size;
    let pos = start; // file offset of the first byte not yet read
    // Bytes of an unfinished line (≤ maxLine), as the blocks it spans: joined once, when the line
    // ends. Joining at every block made a line of 8 MB read in 256 KiB blocks allocate ~130 MB of
    // copies on its way (most of a big session's import peak RSS).
    let carry: Buffer[] | null = null;
    let carryLen = 0;
    let carryStart = start;
    let skipping = false; // inside a line over the bound
    let skipStart = 0;
    while (pos < until) {
      const want = Math.min(blockSize, until - pos);
      const block = Buffer.allocUnsafe(want);
      const { bytesRead } = await fh.read(block, 0, want, pos);
      if (bytesRead === 0) break;
      const chunk = bytesRead < want ? block.subarray(0, bytesRead) : block;
      const chunkPos = pos;
      pos += bytesRead;
      let from = 0;
      if (skipping) {
        const nl = chunk.indexOf(10);
        if (nl === -1) continue;
        yield {
          t: 'too_long',
          start: skipStart,
          end: chunkPos + nl + 1,
          bytes: chunkPos + nl + 1 - skipStart,
        };
        skipping = false;
        from = nl + 1;
        carryStart = chunkPos + from;
      }
      const last = chunk.lastIndexOf(10);
      if (last < from) {
        // No newline in the rest of this block: the line continues.
        const rest = chunk.subarray(from);
        const have = carryLen + rest.length;
        if (have > maxLine) {
          skipping = true;
          skipStart = carry ? carryStart : chunkPos + from;
          carry = null;
          carryLen = 0;
        } else {
          if (!carry) carryStart = chunkPos + from;
          (carry ??= []).push(rest);
          carryLen += rest.length;
        }
        continue;
      }
      // The first line may start in the carry.
      const firstNl = chunk.indexOf(10, from);
      if (carry) {
        if (carryLen + (firstNl - from) > maxLine) {
          yield {
            t: 'too_long',
            start: carryStart,
            end: chunkPos + firstNl + 1,
            bytes: chunkPos + firstNl + 1 - carryStart,
          };
        } else {
          const line = Buffer.concat([...carry, chunk.subarray(from, firstNl + 1)]);
          yield { t: 'lines', buf: line, start: carryStart, end: chunkPos + firstNl + 1, lines: 1 };
        }
        carry = null;
        carryLen = 0;
        from = firstNl + 1;
      }
      if (from <= last) {
        const body = chunk.subarray(from, last + 1);
        // Lines over the bound inside one block are reported apart; blocks are usually far smaller.
        if (body.length > maxLine) {
          yield* splitLong(body, chunkPos + from, maxLine);
        } else {
          yield {
            t: 'lines',
            buf: body,
            start: chunkPos + from,
            end: chunkPos + last + 1,
            lines: countNewlines(body, 0, body.length),
          };
        }
      }
      from = last + 1;
      if (from < chunk.length) {
        const rest = chunk.subarray(from);
        if (rest.length > maxLine) {
          skipping = true;
          skipStart = chunkPos + from;
        } else {
          carry = [rest];
          carryLen = rest.length;
          carryStart = chunkPos + from;
        }
      }
    }
    if (skipping) yield { t: 'tail', buf: null, start: skipStart, bytes: pos - skipStart };
    else if (carry) yield { t: 'tail', buf: Buffer.concat(carry), start: carryStart, bytes: carryLen };
  } finally {
    await fh.close();
  }
}

function* splitLong(body: Buffer, at: number, maxLine: number): Generator<Block> {
  let from = 0;
  let runStart = 0;
  let lines = 0;
  while (from < body.length) {
    const nl = body.indexOf(10, from);
    if (nl - from > maxLine) {
      if (lines > 0)
        yield { t: 'lines', buf: body.subarray(runStart, from), start: at + runStart, end: at + from, lines };
      yield { t: 'too_long', start: at + from, end: at + nl + 1, bytes: nl + 1 - from };
      runStart = nl + 1;
      lines = 0;
    } else {
      lines += 1;
    }
    from = nl + 1;
  }
  if (lines > 0)
    yield { t: 'lines', buf: body.subarray(runStart), start: at + runStart, end: at + body.length, lines };
}
