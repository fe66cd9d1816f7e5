import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import type { Hash } from 'node:crypto';

/**
 * Small synchronous reads of a source file beside the streaming reader (lines.ts): its first line
 * (to tell its format), a few bytes at an offset, the sha256 of a byte range (the seal). Each opens
 * the file the way every import read does: never through a link, never blocked on a FIFO.
 */
export function openRegular(file: string): number {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  if (!fstatSync(fd).isFile()) {
    closeSync(fd);
    throw Object.assign(new Error(`${file} is not a regular file`), { code: 'ENOTREG' });
  }
  return fd;
}

/**
 * Up to `len` bytes at `pos` (fewer at the end of the file). The buffer is as long as what the file
 * holds there, not `len`: telling a folder's format read each file's first line with a buffer of
 * 1 MiB, 5 MiB for 5 small sessions, all of it counted against the heap's external memory.
 */
export function readAt(file: string, pos: number, len: number): Buffer {
  const fd = openRegular(file);
  try {
    const buf = Buffer.allocUnsafe(Math.max(0, Math.min(len, fstatSync(fd).size - pos)));
    return buf.subarray(0, readSync(fd, buf, 0, buf.length, pos));
  } finally {
    closeSync(fd);
  }
}

/** The first 4 KiB of the line at `pos` (a line too long to read whole: for the seq it names), or null. */
export function headOfLine(file: string, pos: number): Buffer | null {
  try {
    return readAt(file, pos, 4096);
  } catch {
    return null;
  }
}

/** The first line of a file that is not blank, within its first `max` bytes (at most 1 MiB), or null. */
export function firstLine(file: string, max: number): string | null {
  const text = readAt(file, 0, Math.min(max, 1 << 20)).toString('utf8');
  for (const line of text.split('\n')) if (line.trim() !== '') return line;
  return null;
}

/** Feeds bytes [from, to) of a file to a hash (for the seal), a MiB at a time. */
export function hashRange(file: string, from: number, to: number, h: Hash): void {
  if (to <= from) return;
  const fd = openRegular(file);
  try {
    const buf = Buffer.allocUnsafe(Math.min(1 << 20, to - from));
    for (let pos = from; pos < to;) {
      const n = readSync(fd, buf, 0, Math.min(buf.length, to - pos), pos);
      if (n === 0) break;
      h.update(buf.subarray(0, n));
      pos += n;
    }
  } finally {
    closeSync(fd);
  }
}
