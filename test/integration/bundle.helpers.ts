import { crc32 } from 'node:zlib';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yauzl from 'yauzl';
import yazl from 'yazl';
import type { Ledger } from '../../electron/ledger';

export const freshDir = (): string => mkdtempSync(join(tmpdir(), 'pl-'));

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
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6);
    local.writeUInt16LE(0, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(e.data.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    locals.push(local, name, e.data);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(0, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(e.data.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
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
