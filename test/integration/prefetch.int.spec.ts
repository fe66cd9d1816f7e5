import { appendFileSync, cpSync, writeFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { homeForFile } from './helpers/tmp';
import { Ledger } from '../../electron/ledger';
import { ingestFolder } from '../../electron/ingest';
import { Prefetch, smallFileBlocks, type FolderFile } from '../../electron/ingest/prefetch';
import { readBlocks, type Block } from '../../electron/ingest/lines';
import { parsedBlocks, type ParsedBlock } from '../../electron/ingest/source';
import type { LineResult } from '../../electron/ingest/block';
import { detectText } from '../../electron/ingest/parse';
import { firstLine } from '../../electron/ingest/read-at';

/**
 * The first open of a folder of many new sessions reads and parses the next files in a shared pool
 * while the main thread imports the current one (prefetch.ts). What it imports must be what reading
 * each file in the main thread imports, and a file that changed after it was read ahead is read again.
 */
const FIX = path.join(__dirname, '../fixtures');
const tmpOf = homeForFile('pl-prefetch-');

const jsonl = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.jsonl'))
    .map((e) => path.join(e.parentPath, e.name))
    .sort();

/** Every real session fixture, twice (as two machines' folders), so the folder has more than 16. */
function sessionsFolder(name: string): string {
  const folder = path.join(tmpOf(), name);
  for (const copy of ['a', 'b']) {
    cpSync(path.join(FIX, 'claude-code', 'projects'), path.join(folder, copy, 'projects'), {
      recursive: true,
    });
    cpSync(path.join(FIX, 'codex', 'sessions'), path.join(folder, copy, 'sessions'), { recursive: true });
  }
  return folder;
}

/** The whole ledger as rows: runs, events with their chain and provenance, findings. */
function contents(l: Ledger) {
  const db = l.db;
  return {
    runs: db
      .prepare(
        'SELECT run_id, format, status, event_count, head_hash, origin, meta FROM runs ORDER BY run_id',
      )
      .all(),
    events: db
      .prepare(
        `SELECT r.run_id, e.seq, e.kind, e.at, e.payload, hex(e.hash) AS hash, hex(e.digest) AS digest, e.line, e.source
         FROM runs r JOIN events e ON e.run_no = r.run_no ORDER BY r.run_id, e.seq`,
      )
      .all(),
    findings: db.prepare('SELECT run_id, file, line, seq, code, message FROM findings ORDER BY id').all(),
  };
}

/**
 * The blocks a source gives, but for the payload objects of parsed events: a worker sends an event
 * back without it (transfer.ts), its stored JSON text (`json`, compared) is what the importer keeps.
 */
async function drain(src: AsyncGenerator<ParsedBlock>): Promise<unknown[]> {
  const ev = (r: LineResult): unknown =>
    r.t === 'ev' ? { ...r, payload: null } : r.t === 'multi' ? { ...r, list: r.list.map(ev) } : r;
  const out: unknown[] = [];
  for await (const b of src) out.push(b.t === 'lines' ? { ...b, results: b.results.map(ev) } : b);
  return out;
}

describe('reading a folder of many new sessions ahead', () => {
  it('imports what reading each file in the main thread imports', async () => {
    const ahead = sessionsFolder('ahead');
    const files = jsonl(ahead);
    expect(files.length).toBeGreaterThanOrEqual(16);
    const la = Ledger.open(ahead);
    const a = await ingestFolder(la);

    const inline = sessionsFolder('inline');
    process.env.PROOFLOOP_INGEST_WORKERS = '0'; // no pool: every file parsed in this thread
    let b: Awaited<ReturnType<typeof ingestFolder>>;
    const lb = Ledger.open(inline);
    try {
      b = await ingestFolder(lb);
    } finally {
      delete process.env.PROOFLOOP_INGEST_WORKERS;
    }
    expect(a).toEqual(b);
    expect(a.events).toBeGreaterThan(500);
    const ca = contents(la);
    expect(ca.runs.length).toBeGreaterThanOrEqual(files.length);
    expect(ca).toEqual(contents(lb));
    la.close();
    lb.close();
  });

  it('uses what it read only while the file is as it was read, and reads a changed one again', async () => {
    const folder = sessionsFolder('changed');
    const files: FolderFile[] = jsonl(folder).map((abs) => ({ abs, onlyIfClaimed: true }));
    const p = Prefetch.start(files);
    expect(p).not.toBeNull();
    const fallbackCalls: string[] = [];
    const fallback: typeof parsedBlocks = (file, start, opts) => {
      fallbackCalls.push(file);
      return parsedBlocks(file, start, opts);
    };
    // What importPass asks of a new file: all of it, in the format its first record names.
    const request = (abs: string) => {
      const size = statSync(abs).size;
      const first = firstLine(abs, size);
      return { until: size, fmt: first === null ? null : detectText(first) };
    };
    try {
      const f0 = files[0]!.abs;
      const got = await drain(p!.sourceFor(0, fallback)(f0, 0, request(f0)));
      expect(fallbackCalls).toEqual([]);
      expect(got).toEqual(await drain(parsedBlocks(f0, 0, request(f0))));
      expect(got.some((blk) => (blk as ParsedBlock).t === 'lines')).toBe(true);

      // Read ahead already (the window is 16 files); a line is appended before it is imported.
      const f3 = files[3]!.abs;
      appendFileSync(f3, '{"type":"summary","summary":"added after it was read ahead"}\n');
      const again = await drain(p!.sourceFor(3, fallback)(f3, 0, request(f3)));
      expect(fallbackCalls).toEqual([f3]);
      expect(again).toEqual(await drain(parsedBlocks(f3, 0, request(f3))));
      expect(p!.stats).toEqual({ used: 1, readAgain: 1 });
    } finally {
      await p!.close();
    }
  });

  it('reads a small file at once into the lines and tail the streaming reader gives', async () => {
    const line = (n: number, i: number) => `{"seq":${i},"pad":"${'x'.repeat(n)}"}\n`;
    const cases: Record<string, string> = {
      empty_tail: '{"seq":1}',
      one: line(10, 1),
      tail: line(10, 1) + line(20, 2) + '{"seq":3,"cut',
      // Lines on both sides of the 1 MiB block boundary, one longer than a block.
      long: [line(700_000, 1), line(700_000, 2), line(1_500_000, 3), line(5, 4), line(900_000, 5)].join(''),
    };
    for (const [name, text] of Object.entries(cases)) {
      const file = path.join(tmpOf(), `${name}.jsonl`);
      writeFileSync(file, text);
      const size = statSync(file).size;
      const streamed: Block[] = [];
      for await (const b of readBlocks(file, 0, { until: size })) streamed.push(b);
      const atOnce = smallFileBlocks(file, size)!;
      expect(atOnce, name).not.toBeNull();
      const lines = (bs: Block[]) => bs.filter((b) => b.t === 'lines');
      const joined = (bs: Block[]) => Buffer.concat(lines(bs).map((b) => b.buf)).toString();
      expect(joined(atOnce), name).toBe(joined(streamed));
      expect(
        lines(atOnce).reduce((n, b) => n + b.lines, 0),
        name,
      ).toBe(text.split('\n').length - 1);
      // Each block starts where the one before ended, and ends after a newline.
      let at = 0;
      for (const b of lines(atOnce)) {
        expect([b.start, b.buf[b.buf.length - 1]], name).toEqual([at, 10]);
        expect(b.buf.length, name).toBeLessThanOrEqual(Math.max(1 << 20, 1_500_100));
        at = b.end;
      }
      const tail = (bs: Block[]) =>
        bs.filter((b) => b.t === 'tail').map((b) => ({ ...b, buf: b.buf?.toString() }));
      expect(tail(atOnce), name).toEqual(tail(streamed));
    }
    expect(smallFileBlocks(path.join(tmpOf(), 'gone.jsonl'), 10)).toBeNull();
  });
});
