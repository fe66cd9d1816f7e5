import { closeSync, constants, ftruncateSync, readSync, fstatSync, writeSync } from 'node:fs';
import { toJsonLine } from '../../shared/protocol';
import { confine, mkdirConfined, openConfined } from '../fs/confine';
import type { Ledger } from './ledger';

const TAIL = 1 << 16;

/** The seq of the last complete line of a mirror and the byte length up to it. */
function mirrorTail(fd: number): { seq: number; validBytes: number } {
  {
    const size = fstatSync(fd).size;
    let end = size;
    // Walk back over an unterminated (torn) last line and parse the last complete one.
    while (end > 0) {
      const start = Math.max(0, end - TAIL);
      const buf = Buffer.alloc(end - start);
      readSync(fd, buf, 0, buf.length, start);
      const text = buf.toString('utf8');
      const lastNl = text.lastIndexOf('\n');
      if (lastNl < 0) {
        if (start === 0) return { seq: 0, validBytes: 0 };
        end = start;
        continue;
      }
      const complete = start + Buffer.byteLength(text.slice(0, lastNl + 1));
      const prevNl = text.lastIndexOf('\n', lastNl - 1);
      const line = text.slice(prevNl + 1, lastNl);
      if (prevNl < 0 && start > 0) {
        end = start + Buffer.byteLength(text.slice(0, lastNl));
        continue;
      }
      try {
        const seq = (JSON.parse(line) as { seq?: unknown }).seq;
        return { seq: typeof seq === 'number' ? seq : 0, validBytes: complete };
      } catch {
        return { seq: -1, validBytes: 0 };
      }
    }
    return { seq: 0, validBytes: 0 };
  }
}

/**
 * Brings every executed run's `<folder>/<run_id>/events.jsonl` up to the database: a torn last
 * line is cut, missing events are appended, a mirror that cannot be read is rewritten whole.
 * Returns the run ids it touched.
 */
export function repairMirrors(
  ledger: Ledger,
  onRefused: (runId: string, message: string) => void = () => undefined,
): string[] {
  const repaired: string[] = [];
  // Only the executed runs' ids and heads: runs() would also count findings and look up the writer
  // of every run, ~360 ms of a reopen of a folder of 10,000 imported sessions.
  const executed = ledger.db
    .prepare(
      "SELECT run_id, head_seq FROM runs WHERE source = 'executed' AND head_seq > 0 ORDER BY created_at DESC, run_id",
    )
    .all() as { run_id: string; head_seq: number }[];
  for (const run of executed) {
    let fd: number;
    try {
      // Confined: a run folder that is a link (a shared or unpacked folder) is left alone.
      mkdirConfined(ledger.runsRoot, run.run_id, 'run folder');
      fd = openConfined(
        ledger.runsRoot,
        [run.run_id, 'events.jsonl'],
        constants.O_RDWR | constants.O_CREAT,
        'mirror',
      );
    } catch (e) {
      onRefused(run.run_id, (e as Error).message);
      continue;
    }
    try {
      const tail = mirrorTail(fd);
      if (tail.seq === run.head_seq) continue;
      let from = tail.seq + 1;
      if (tail.seq < 0 || tail.seq > run.head_seq) {
        from = 1;
        tail.validBytes = 0;
      }
      ftruncateSync(fd, tail.validBytes);
      let pos = tail.validBytes;
      let chunk: string[] = [];
      const flush = () => {
        const buf = Buffer.from(chunk.join(''));
        writeAll(fd, buf, pos);
        pos += buf.length;
        chunk = [];
      };
      for (const e of ledger.iterate(run.run_id, { from })) {
        chunk.push(toJsonLine(e) + '\n');
        if (chunk.length >= 10_000) flush();
      }
      if (chunk.length) flush();
      repaired.push(run.run_id);
    } finally {
      closeSync(fd);
    }
  }
  return repaired;
}

function writeAll(fd: number, buf: Buffer, position: number): void {
  for (let off = 0; off < buf.length;) off += writeSync(fd, buf, off, buf.length - off, position + off);
}

/** The mirror's path, refused (forbidden_path) when the run folder or the file is a link. */
export function mirrorPath(folder: string, runId: string): string {
  return confine(folder, [runId, 'events.jsonl'], 'mirror');
}

/**
 * The mirror of one run as its writer appends to it: the file stays open for the writer's life
 * (opening, appending and closing it per append measured ~9 µs of the ~50 µs CPU time of a single
 * durable append). Opened in append mode, so lines land at the end whatever else wrote there.
 * Failures are swallowed: the database is the authority and the next open repairs the mirror.
 */
export class MirrorAppender {
  private fd: number | null = null;
  /**
   * Throws forbidden_path at once when the run folder or its mirror is a link. `mirrored` false:
   * no mirror (a live receiver's read-only run: a mirror would be imported again as a run).
   */
  constructor(
    private readonly folder: string,
    private readonly runId: string,
    readonly mirrored = true,
  ) {
    if (mirrored) mirrorPath(folder, runId);
  }

  append(lines: readonly string[]): void {
    if (lines.length === 0 || !this.mirrored) return;
    try {
      if (this.fd === null) {
        mkdirConfined(this.folder, this.runId, 'run folder');
        this.fd = openConfined(
          this.folder,
          [this.runId, 'events.jsonl'],
          constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT,
          'mirror',
        );
      }
      writeSync(this.fd, lines.join(''));
    } catch {
      this.close(); // opened again on the next append
    }
  }

  close(): void {
    if (this.fd === null) return;
    try {
      closeSync(this.fd);
    } catch {
      // already closed
    }
    this.fd = null;
  }
}
