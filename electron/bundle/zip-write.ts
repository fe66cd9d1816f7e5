import { createHash } from 'node:crypto';
import { closeSync, fsyncSync, openSync, writeSync, writevSync } from 'node:fs';
import { constants, crc32, deflateRaw, deflateRawSync } from 'node:zlib';
import { ProofloopError } from '../../shared/result';
import { sha256Bytes } from '../crypto';

/*
 * A small zip writer for the exporter. Why not yazl (still used by the tests to write tampered
 * zips): yazl computes every entry's CRC-32 in JavaScript (buffer-crc32: 177 ms per 39 MB measured,
 * ~0.5 s of a 100,000-event export) and takes no precomputed CRC; archiver/zip-stream (crc-32) and
 * fflate do the same. Node's native zlib.crc32 does the 39 MB in 14 ms. Writing our own also lets
 * a large entry be deflated piece by piece in zlib's thread pool while its lines are still being
 * produced (see EntryBuilder), which no streaming zip library does for one entry.
 */

/** One entry: its deflated (or, `stored`, its own) pieces in order, and the facts about its bytes. */
export interface ZipEntry {
  name: string;
  data: Buffer[];
  /** Written as it is (method 0): for content that is compressed already, where deflate gains nothing. */
  stored?: boolean;
  crc: number;
  size: number;
  sha256: string;
}

// Large output chunks: fewer callbacks and copies in this thread (the default is 16 KiB).
const SYNC = { level: 1, finishFlush: constants.Z_SYNC_FLUSH, chunkSize: 1 << 20 };
/** The final, empty, fixed-Huffman block (BFINAL=1) that ends a run of sync-flushed pieces. */
const FINAL_BLOCK = Buffer.from([0x03, 0x00]);

function deflatePiece(buf: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    deflateRaw(buf, SYNC, (err, out) => (err ? reject(err) : resolve(out))),
  );
}

/**
 * An entry built from pieces. Each piece is deflated on its own in zlib's thread pool as soon as it
 * is added (level 1: throughput matters more than a few percent of size), ending in a sync flush,
 * so the pieces concatenate into one valid deflate stream (a fresh compressor never refers back
 * before its own start); `finish` appends the final block. CRC-32 and sha256 cover the pieces in
 * order. `reserve` keeps a place for a piece known only later (the report's head).
 */
export class EntryBuilder {
  private readonly parts: { raw: Buffer | null; deflated: Promise<Buffer> | null }[] = [];

  constructor(readonly name: string) {}

  add(raw: Buffer): void {
    this.parts.push({ raw, deflated: raw.length ? deflatePiece(raw) : null });
  }

  /** A place for a piece added later with the returned function. */
  reserve(): (raw: Buffer) => void {
    const part: { raw: Buffer | null; deflated: Promise<Buffer> | null } = { raw: null, deflated: null };
    this.parts.push(part);
    return (raw) => {
      part.raw = raw;
      part.deflated = raw.length ? deflatePiece(raw) : null;
    };
  }

  async finish(): Promise<ZipEntry> {
    let crc = 0;
    let size = 0;
    const hash = createHash('sha256');
    const data: Buffer[] = [];
    for (const p of this.parts) {
      if (p.raw === null) throw new Error(`a reserved piece of ${this.name} was never filled`);
      crc = crc32(p.raw, crc);
      size += p.raw.length;
      hash.update(p.raw);
      if (p.deflated) data.push(await p.deflated);
    }
    data.push(FINAL_BLOCK);
    return { name: this.name, data, crc, size, sha256: hash.digest('hex') };
  }
}

/** An entry stored without compression, from its pieces in order. */
export function storedEntry(name: string, pieces: Buffer[]): ZipEntry {
  let crc = 0;
  let size = 0;
  const hash = createHash('sha256');
  for (const p of pieces) {
    crc = crc32(p, crc);
    size += p.length;
    hash.update(p);
  }
  return { name, data: pieces, stored: true, crc, size, sha256: hash.digest('hex') };
}

/** A small entry in one go (manifest, VERIFY.md, state.json, …). */
export function smallEntry(name: string, raw: Buffer): ZipEntry {
  return {
    name,
    data: [deflateRawSync(raw, { level: 6 })],
    crc: crc32(raw),
    size: raw.length,
    sha256: sha256Bytes(raw),
  };
}

function dosDateTime(d: Date): { date: number; time: number } {
  const year = Math.min(Math.max(d.getFullYear(), 1980), 2107);
  return {
    date: ((year - 1980) << 9) | ((d.getMonth() + 1) << 5) | d.getDate(),
    time: (d.getHours() << 11) | (d.getMinutes() << 5) | (d.getSeconds() >> 1),
  };
}

const MAX32 = 0xffffffff;

/**
 * The fields a local header (from byte 4) and a central directory header (from byte 6, after
 * "version made by") share, in the same order: version needed (2.0 for deflate, 1.0 stored), UTF-8
 * names, method (deflate or stored), time, date, CRC-32, compressed and uncompressed size, name length.
 */
function writeHeaderFields(
  b: Buffer,
  at: number,
  f: {
    stored: boolean;
    time: number;
    date: number;
    crc: number;
    csize: number;
    size: number;
    nameLength: number;
  },
): void {
  b.writeUInt16LE(f.stored ? 10 : 20, at);
  b.writeUInt16LE(0x0800, at + 2);
  b.writeUInt16LE(f.stored ? 0 : 8, at + 4);
  b.writeUInt16LE(f.time, at + 6);
  b.writeUInt16LE(f.date, at + 8);
  b.writeUInt32LE(f.crc >>> 0, at + 10);
  b.writeUInt32LE(f.csize, at + 14);
  b.writeUInt32LE(f.size, at + 18);
  b.writeUInt16LE(f.nameLength, at + 22);
}

/**
 * Writes the entries as a zip (deflated or stored, UTF-8 names, Unix mode 0644) to a new file (`wx`) and makes
 * it durable (fsync). No ZIP64: a bundle past 4 GiB is refused (readers refuse 2 GiB anyway).
 */
export function writeZipFile(file: string, entries: readonly ZipEntry[], mtime: Date): void {
  const { date, time } = dosDateTime(mtime);
  const out: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name, 'utf8');
    const csize = e.data.reduce((n, b) => n + b.length, 0);
    if (e.size > MAX32 || csize > MAX32 || offset + 30 + name.length + csize > MAX32) {
      throw new ProofloopError('invalid_input', 'the bundle would be larger than 4 GiB: export fewer runs');
    }
    const stored = e.stored === true;
    const fields = { stored, time, date, crc: e.crc, csize, size: e.size, nameLength: name.length };
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    writeHeaderFields(local, 4, fields);
    out.push(local, name, ...e.data);
    const c = Buffer.alloc(46);
    c.writeUInt32LE(0x02014b50, 0);
    c.writeUInt16LE((3 << 8) | 20, 4); // made by: Unix, 2.0
    writeHeaderFields(c, 6, fields);
    c.writeUInt32LE((0o100644 << 16) >>> 0, 38);
    c.writeUInt32LE(offset, 42);
    central.push(c, name);
    offset += 30 + name.length + csize;
  }
  const cdSize = central.reduce((n, b) => n + b.length, 0);
  if (entries.length > 0xffff || offset + cdSize > MAX32) {
    throw new ProofloopError('invalid_input', 'the bundle would be larger than 4 GiB: export fewer runs');
  }
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(entries.length, 8);
  eocd.writeUInt16LE(entries.length, 10);
  eocd.writeUInt32LE(cdSize, 12);
  eocd.writeUInt32LE(offset, 16);
  out.push(...central, eocd);
  const fd = openSync(file, 'wx', 0o644);
  try {
    // writev takes at most IOV_MAX (1024) buffers at once; a short write finishes with writeSync.
    for (let i = 0; i < out.length; i += 1024) {
      const batch = out.slice(i, i + 1024);
      const want = batch.reduce((n, b) => n + b.length, 0);
      const done = writevSync(fd, batch);
      if (done < want) {
        const rest = Buffer.concat(batch).subarray(done);
        for (let at = 0; at < rest.length;) at += writeSync(fd, rest, at);
      }
    }
    // Durable before it takes the target name: a crash leaves the old file or the whole new one.
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
