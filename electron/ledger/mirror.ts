import {
  closeSync,
  existsSync,
  ftruncateSync,
  openSync,
  readSync,
  fstatSync,
  appendFileSync,
  mkdirSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { toJsonLine } from '../../shared/protocol';
import type { Ledger } from './ledger';

const TAIL = 1 << 16;

/** The seq of the last complete line of a mirror and the byte length up to it. */
function mirrorTail(file: string): { seq: number; validBytes: number } {
  if (!existsSync(file)) return { seq: 0, validBytes: 0 };
  const fd = openSync(file, 'r');
  try {
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
  } finally {
    closeSync(fd);
  }
}

/**
 * Brings every executed run's `<folder>/<run_id>/events.jsonl` up to the database: a torn last
 * line is cut, missing events are appended, a mirror that cannot be read is rewritten whole.
 * Returns the run ids it touched.
 */
export function repairMirrors(ledger: Ledger): string[] {
  const repaired: string[] = [];
  for (const run of ledger.runs()) {
    if (run.source !== 'executed' || run.head_seq === 0) continue;
    const dir = path.join(ledger.folder, run.run_id);
    const file = path.join(dir, 'events.jsonl');
    const tail = mirrorTail(file);
    if (tail.seq === run.head_seq) continue;
    mkdirSync(dir, { recursive: true });
    let from = tail.seq + 1;
    if (tail.seq < 0 || tail.seq > run.head_seq) {
      from = 1;
      tail.validBytes = 0;
    }
    const fd = openSync(file, existsSync(file) ? 'r+' : 'w');
    try {
      ftruncateSync(fd, tail.validBytes);
    } finally {
      closeSync(fd);
    }
    let chunk: string[] = [];
    for (const e of ledger.iterate(run.run_id, { from })) {
      chunk.push(toJsonLine(e) + '\n');
      if (chunk.length >= 10_000) {
        appendFileSync(file, chunk.join(''));
        chunk = [];
      }
    }
    if (chunk.length) appendFileSync(file, chunk.join(''));
    repaired.push(run.run_id);
  }
  return repaired;
}

/**
 * The mirror of one run as its writer appends to it: the file stays open for the writer's life
 * (opening, appending and closing it per append measured ~9 µs of the ~50 µs CPU time of a single
 * durable append). Opened in append mode, so lines land at the end whatever else wrote there.
 * Failures are swallowed: the database is the authority and the next open repairs the mirror.
 */
export class MirrorAppender {
  private fd: number | null = null;
  /** `file` null: no mirror (a live receiver's read-only run). */
  constructor(private readonly file: string | null) {}

  append(lines: readonly string[]): void {
    if (lines.length === 0 || this.file === null) return;
    try {
      if (this.fd === null) {
        mkdirSync(path.dirname(this.file), { recursive: true });
        this.fd = openSync(this.file, 'a');
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
