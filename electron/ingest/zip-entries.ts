import type { Readable } from 'node:stream';
import { createInflateRaw } from 'node:zlib';
import type yauzl from 'yauzl';

/**
 * Entries of a zip written by another program (an Inspect AI `.eval` log), read one at a time:
 * the central directory is listed, and an entry's bytes are inflated only when asked for, so no
 * more of the file is in memory than the entry being read. Stored (0), deflate (8) and zstd (93,
 * which Inspect writes since 0.3.206 and Node's zlib cannot read) entries are read; any other
 * method, or an entry that expands past its declared size or the bound, is an error naming it.
 */
export interface ZipEntries {
  /** Entry names in central-directory order (folders left out). */
  readonly names: readonly string[];
  has(name: string): boolean;
  /** The entry's uncompressed bytes. */
  read(name: string): Promise<Buffer>;
  close(): void;
}

/** An entry larger than this is refused rather than read into memory (a V8 string's bound is ~512 MiB). */
export const MAX_ENTRY_BYTES = 512 << 20;

export async function openZipEntries(file: string, maxEntry = MAX_ENTRY_BYTES): Promise<ZipEntries> {
  // Loaded with the first zip read: every import registers this format, few import a zip (and
  // zstd-napi is a native module).
  const { default: yauzl } = await import('yauzl');
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.open(
      file,
      { lazyEntries: true, autoClose: false, validateEntrySizes: false, strictFileNames: true },
      (err, z) => (err || !z ? reject(err ?? new Error('cannot open the zip')) : resolve(z)),
    ),
  );
  const entries = new Map<string, yauzl.Entry>();
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on('entry', (e: yauzl.Entry) => {
        if (!e.fileName.endsWith('/')) entries.set(e.fileName, e);
        zip.readEntry();
      });
      zip.once('end', () => resolve());
      zip.once('error', reject);
      zip.readEntry();
    });
  } catch (e) {
    zip.close();
    throw e;
  }
  const names = [...entries.keys()];
  return {
    names,
    has: (name) => entries.has(name),
    read: (name) => {
      const e = entries.get(name);
      if (!e) return Promise.reject(new Error(`no entry ${JSON.stringify(name)}`));
      return readEntry(zip, e, maxEntry);
    },
    close: () => zip.close(),
  };
}

async function readEntry(zip: yauzl.ZipFile, e: yauzl.Entry, max: number): Promise<Buffer> {
  const name = JSON.stringify(e.fileName);
  if (e.isEncrypted()) throw new Error(`entry ${name} is encrypted`);
  if (e.uncompressedSize > max)
    throw new Error(
      `entry ${name} expands to ${e.uncompressedSize} bytes, more than the ${max} read at once`,
    );
  const raw = await new Promise<Readable>((resolve, reject) =>
    zip.openReadStream(e, { decodeFileData: false }, (err, s) =>
      err || !s ? reject(err ?? new Error(`cannot read entry ${name}`)) : resolve(s),
    ),
  );
  let stream: Readable;
  if (e.compressionMethod === 0) stream = raw;
  else if (e.compressionMethod === 8) stream = raw.pipe(createInflateRaw());
  else if (e.compressionMethod === 93) {
    const { DecompressStream } = await import('zstd-napi');
    stream = raw.pipe(new DecompressStream());
  } else {
    raw.destroy();
    throw new Error(
      `entry ${name} uses compression method ${e.compressionMethod} (only 0, 8 and 93 are read)`,
    );
  }
  if (stream !== raw) raw.once('error', (err) => stream.destroy(err));
  // One buffer of the declared size, filled as the chunks come: joining them after doubled the
  // copying and the garbage of a sample of tens of MB (a profile of a 23 MB sample's read).
  const out = Buffer.allocUnsafe(e.uncompressedSize);
  let bytes = 0;
  for await (const c of stream as AsyncIterable<Buffer>) {
    if (bytes + c.length > max || bytes + c.length > e.uncompressedSize) {
      raw.destroy();
      stream.destroy();
      throw new Error(`entry ${name} expands beyond its declared ${e.uncompressedSize} bytes`);
    }
    c.copy(out, bytes);
    bytes += c.length;
  }
  if (bytes !== e.uncompressedSize)
    throw new Error(`entry ${name} holds ${bytes} bytes, not the ${e.uncompressedSize} its header declares`);
  return out;
}
