import { crc32, gunzipSync } from 'node:zlib';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yauzl from 'yauzl';
import yazl from 'yazl';
import { afterAll } from 'vitest';
import type { Ledger } from '../../electron/ledger';

const made: string[] = [];
/** A fresh folder, removed when the test file is done (kept with PROOFLOOP_KEEP_TMP set). */
export function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'pl-'));
  made.push(dir);
  return dir;
}
// This module is loaded once per test file, so this runs after each file that uses it.
afterAll(() => {
  if (process.env.PROOFLOOP_KEEP_TMP) return;
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Points PROOFLOOP_HOME (signing keys, settings) into `dir`; returns what puts the old value back. */
export function homeIn(dir: string): () => void {
  const prev = process.env.PROOFLOOP_HOME;
  process.env.PROOFLOOP_HOME = join(dir, 'home');
  return () => {
    if (prev === undefined) delete process.env.PROOFLOOP_HOME;
    else process.env.PROOFLOOP_HOME = prev;
  };
}

/** Every entry of a zip, in order, read with yauzl (trusted test input). */
export async function readZip(file: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const zip = await yauzl.fromBufferPromise(readFileSync(file), { lazyEntries: true });
  for await (const entry of zip.eachEntry()) {
    const stream = await zip.openReadStreamPromise(entry);
    const chunks: Buffer[] = [];
    for await (const c of stream) chunks.push(c as Buffer);
    out.set(entry.fileName, Buffer.concat(chunks));
  }
  return out;
}

/**
 * What report.html carries: its JSON block, and each run's events as the page unpacks them (the
 * `events-<i>` blocks: base64 of a gzip file), in run order.
 */
export function reportContent(html: string): { data: unknown; events: Buffer[] } {
  const data = /<script type="application\/json" id="bundle-data">([^<]*)<\/script>/.exec(html);
  if (!data) throw new Error('report.html has no JSON block');
  const events: Buffer[] = [];
  const re = /<script type="application\/gzip;base64" id="events-(\d+)">([^<]*)<\/script>/g;
  for (let m = re.exec(html); m; m = re.exec(html)) {
    if (Number(m[1]) !== events.length) throw new Error(`events-${m[1]} out of order`);
    events.push(gunzipSync(Buffer.from(m[2]!, 'base64')));
  }
  return { data: JSON.parse(data[1]!) as unknown, events };
}

/** Writes entries as a normal zip (for tampered bundles). */
export async function writeZip(file: string, entries: Map<string, Buffer>): Promise<void> {
  const zip = new yazl.ZipFile();
  for (const [name, data] of entries) zip.addBuffer(data, name);
  zip.end();
  const chunks: Buffer[] = [];
  for await (const c of zip.outputStream) chunks.push(c as Buffer);
  writeFileSync(file, Buffer.concat(chunks));
}

export interface RawEntry {
  name: string;
  data: Buffer;
  /** Upper 16 bits of the external attributes: the Unix mode (e.g. 0o120777 for a link). */
  mode?: number;
  /** A lie about the uncompressed size, for size-bound tests. */
  declaredSize?: number;
}

/**
 * The fields a local header (from byte 4) and a central header (from byte 6) share: version 2.0,
 * UTF-8 names, stored, time and date 0, CRC-32, compressed and (declared) uncompressed size, name length.
 */
function writeHeaderFields(
  b: Buffer,
  at: number,
  crc: number,
  csize: number,
  size: number,
  nameLength: number,
) {
  b.writeUInt16LE(20, at);
  b.writeUInt16LE(0x0800, at + 2);
  b.writeUInt16LE(0, at + 4);
  b.writeUInt32LE(crc, at + 10);
  b.writeUInt32LE(csize, at + 14);
  b.writeUInt32LE(size, at + 18);
  b.writeUInt16LE(nameLength, at + 22);
}

/** A minimal stored (uncompressed) zip writer that writes whatever names and modes it is given. */
export function rawZip(entries: readonly RawEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name, 'utf8');
    const crc = crc32(e.data);
    const size = e.declaredSize ?? e.data.length;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    writeHeaderFields(local, 4, crc, e.data.length, size, name.length);
    locals.push(local, name, e.data);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4);
    writeHeaderFields(central, 6, crc, e.data.length, size, name.length);
    central.writeUInt32LE(((e.mode ?? 0o100644) << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += 30 + name.length + e.data.length;
  }
  const cd = Buffer.concat(centrals);
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(entries.length, 8);
  eocd.writeUInt16LE(entries.length, 10);
  eocd.writeUInt32LE(cd.length, 12);
  eocd.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, eocd]);
}

/** A small finished run: a tool call, a redactable e-mail (share profile) and a patch. */
export function simpleRun(ledger: Ledger, runId: string, n = 20, salt = ''): void {
  const w = ledger.writer(runId);
  w.append('run_started', {
    task_id: 'fix-add',
    goal: `fix add ${salt}`,
    agent: { name: 'sim', variant: 'clean' },
  });
  for (let i = 1; i <= n - 2; i++) {
    if (i % 3 === 1)
      w.append('model_proposed', {
        call_id: `c${i}`,
        tool: 'read_file',
        args: { path: `src/f${i}.ts` },
        tokens: 10,
      });
    else if (i % 3 === 2)
      w.append('model_responded', { content: `step ${i}: ask carol${i}@example.org ${salt}`, tokens: 5 });
    else w.append('context_updated', { op: 'append', tokens_before: i, tokens_after: i + 1 });
  }
  w.append('run_completed', { outcome: 'passed' });
  w.close();
}
