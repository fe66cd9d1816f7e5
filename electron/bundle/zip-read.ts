import { createHash } from 'node:crypto';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable, Transform, Writable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createInflateRaw } from 'node:zlib';
import yauzl from 'yauzl';
import { ProofloopError } from '../../shared/result';
import { DIR_ENTRY_RE, RUN_ENTRY_RE, TOP_LEVEL_ENTRIES } from './format';

export interface ZipLimits {
  maxEntries: number;
  /** Uncompressed bytes of one entry. */
  maxEntryBytes: number;
  /** Uncompressed bytes of all entries together. */
  maxTotalBytes: number;
}

export const DEFAULT_LIMITS: ZipLimits = {
  maxEntries: 30_000,
  maxEntryBytes: 1024 * 1024 * 1024,
  maxTotalBytes: 2 * 1024 * 1024 * 1024,
};

export interface ExtractedEntry {
  name: string;
  /**
   * Where its bytes are, inside the temporary folder (named by position, never by the entry's
   * name); null for an entry that was only measured and hashed (see `store`).
   */
  file: string | null;
  bytes: number;
  sha256: string;
  /** The bytes themselves, for an entry read into memory by `streamBundle` (else undefined). */
  data?: Buffer;
}

export interface ExtractedBundle {
  /** The temporary folder: the only place anything from the bundle is written. */
  dir: string;
  entries: Map<string, ExtractedEntry>;
}

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;

/** The error for a file that is not a valid bundle (`invalid_input`), and why. */
export function notABundle(file: string, message: string): ProofloopError {
  return new ProofloopError('invalid_input', `${path.basename(file)} is not a valid bundle: ${message}`);
}

/** A failure while reading an entry, as the bundle's error (a ProofloopError passes through as it is). */
function entryFailure(file: string, name: string, e: unknown): ProofloopError {
  return e instanceof ProofloopError
    ? e
    : notABundle(file, `entry ${JSON.stringify(name)}: ${(e as Error).message}`);
}

const beyondDeclared = (file: string, name: string): ProofloopError =>
  notABundle(file, `entry ${JSON.stringify(name)} expands beyond its declared size`);

/** Checks an entry name beyond yauzl's own checks (absolute paths, `..`, backslashes). */
export function entryNameProblem(name: string): string | null {
  if (name.length === 0) return 'an entry has an empty name';
  if (name.length > 300)
    return `entry name is longer than 300 characters: ${JSON.stringify(name.slice(0, 60))}…`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) return `entry name has control characters: ${JSON.stringify(name)}`;
  if (name.includes('\\')) return `entry name has a backslash: ${JSON.stringify(name)}`;
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name))
    return `entry has an absolute path: ${JSON.stringify(name)}`;
  const segments = name.split('/');
  if (segments.includes('..')) return `entry leaves the archive root: ${JSON.stringify(name)}`;
  if (segments.slice(0, -1).some((s) => s === '' || s === '.'))
    return `entry name has an empty or "." segment: ${JSON.stringify(name)}`;
  if (!TOP_LEVEL_ENTRIES.has(name) && !RUN_ENTRY_RE.test(name) && !DIR_ENTRY_RE.test(name)) {
    return `unknown entry ${JSON.stringify(name)} (a bundle holds manifest.json, manifest.sig, VERIFY.md, report.html and runs/*/{events.jsonl,state.json,redactions.txt})`;
  }
  return null;
}

/**
 * Opens a zip with yauzl; from `data` (the file's bytes, read already) when given: reading entries
 * from memory saves a read per 16 KiB chunk.
 */
function openZip(file: string, autoClose = true, data?: Buffer): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) => {
    // strictFileNames: a backslash stays a backslash (and is refused), instead of being read as "/".
    const options = {
      lazyEntries: true,
      autoClose,
      validateEntrySizes: true,
      strictFileNames: true,
      decodeStrings: true,
    };
    const done = (err: Error | null, zip?: yauzl.ZipFile) => {
      if (err || !zip) reject(notABundle(file, err ? err.message : 'cannot open'));
      else resolve(zip);
    };
    if (data) yauzl.fromBuffer(data, options, done);
    else yauzl.open(file, options, done);
  });
}

interface EntryChecks {
  lowerNames: Set<string>;
  /** Declared uncompressed bytes of the entries so far. */
  total: number;
}

/**
 * Checks one entry of the central directory before a byte of it is read: its name, duplicates
 * (case-insensitively), type (no links, nothing but files and folders), encryption, declared size
 * against the limits. A folder entry is `'dir'` (nothing to read).
 */
function checkEntry(
  file: string,
  entry: yauzl.Entry,
  limits: ZipLimits,
  seen: EntryChecks,
): 'dir' | 'file' | ProofloopError {
  const name = entry.fileName;
  const problem = entryNameProblem(name);
  if (problem) return notABundle(file, problem);
  const lower = name.toLowerCase();
  if (seen.lowerNames.has(lower)) return notABundle(file, `duplicate entry ${JSON.stringify(name)}`);
  seen.lowerNames.add(lower);
  const type = (entry.externalFileAttributes >>> 16) & S_IFMT;
  if (type === S_IFLNK) return notABundle(file, `entry ${JSON.stringify(name)} is a symbolic link`);
  const isDir = name.endsWith('/');
  if (type !== 0 && type !== (isDir ? S_IFDIR : S_IFREG)) {
    return notABundle(file, `entry ${JSON.stringify(name)} is not a regular file`);
  }
  if (entry.isEncrypted()) return notABundle(file, `entry ${JSON.stringify(name)} is encrypted`);
  if (isDir) {
    if (entry.uncompressedSize !== 0)
      return notABundle(file, `folder entry ${JSON.stringify(name)} has content`);
    return 'dir';
  }
  if (entry.uncompressedSize > limits.maxEntryBytes) {
    return notABundle(
      file,
      `entry ${JSON.stringify(name)} expands to ${entry.uncompressedSize} bytes, more than ${limits.maxEntryBytes}`,
    );
  }
  seen.total += entry.uncompressedSize;
  if (seen.total > limits.maxTotalBytes) {
    return notABundle(file, `entries expand to more than ${limits.maxTotalBytes} bytes in all`);
  }
  return 'file';
}

class Meter extends Transform {
  readonly hash = createHash('sha256');
  bytes = 0;
  constructor(
    private readonly limit: number,
    private readonly onOver: () => Error,
  ) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.limit) {
      cb(this.onOver());
      return;
    }
    this.hash.update(chunk);
    cb(null, chunk);
  }
}

/**
 * Reads a bundle zip as untrusted input: every entry is checked (name, type, size, duplicates)
 * before a byte of it is written, and its bytes go to `<tmp>/<n>.bin` inside a fresh temporary
 * folder, never to a path taken from the archive. The caller must `removeExtracted` the result.
 */
export async function extractBundle(
  file: string,
  limits: ZipLimits = DEFAULT_LIMITS,
  store: (name: string) => boolean = () => true,
): Promise<ExtractedBundle> {
  const zip = await openZip(file);
  if (zip.entryCount > limits.maxEntries) {
    zip.close();
    throw notABundle(file, `${zip.entryCount} entries, more than the ${limits.maxEntries} allowed`);
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'proofloop-bundle-'));
  const entries = new Map<string, ExtractedEntry>();
  const seen: EntryChecks = { lowerNames: new Set<string>(), total: 0 };
  let index = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      let failed = false;
      const fail = (e: unknown) => {
        if (failed) return;
        failed = true;
        zip.close();
        reject(e instanceof ProofloopError ? e : notABundle(file, (e as Error).message));
      };
      zip.on('error', fail);
      // Entries are read concurrently (a large events.jsonl and report.html inflate side by side in
      // zlib's thread pool); done once the directory is read and every entry is in.
      let ended = false;
      let inFlight = 0;
      const maybeDone = () => {
        if (!failed && ended && inFlight === 0) resolve();
      };
      zip.on('end', () => {
        ended = true;
        maybeDone();
      });
      zip.on('entry', (entry: yauzl.Entry) => {
        if (failed) return;
        const name = entry.fileName;
        const kind = checkEntry(file, entry, limits, seen);
        if (kind instanceof Error) return fail(kind);
        if (kind === 'dir') {
          zip.readEntry();
          return;
        }
        const target = path.join(dir, `${index++}.bin`);
        inFlight++;
        zip.openReadStream(entry, (err, stream) => {
          if (err || !stream) return fail(err ?? new Error(`cannot read ${name}`));
          // The declared size is checked by yauzl (validateEntrySizes); the meter is the second fence.
          const meter = new Meter(Math.min(entry.uncompressedSize, limits.maxEntryBytes), () =>
            beyondDeclared(file, name),
          );
          const keep = store(name);
          const sink = keep
            ? createWriteStream(target, { flags: 'wx', mode: 0o600 })
            : new Writable({ write: (_c, _e, cb) => cb() });
          pipeline(stream, meter, sink).then(
            () => {
              entries.set(name, {
                name,
                file: keep ? target : null,
                bytes: meter.bytes,
                sha256: meter.hash.digest('hex'),
              });
              inFlight--;
              maybeDone();
            },
            (e: unknown) => fail(entryFailure(file, name, e)),
          );
          zip.readEntry();
        });
      });
      zip.readEntry();
    });
  } catch (e) {
    removeExtracted({ dir, entries });
    throw e;
  }
  return { dir, entries };
}

export function removeExtracted(b: ExtractedBundle): void {
  rmSync(b.dir, { recursive: true, force: true });
}

export async function withExtractedBundle<T>(
  file: string,
  limits: ZipLimits,
  fn: (b: ExtractedBundle) => Promise<T>,
  store?: (name: string) => boolean,
): Promise<T> {
  const b = await extractBundle(file, limits, store);
  try {
    return await fn(b);
  } finally {
    removeExtracted(b);
  }
}

/** Where `streamBundle` sends an entry's bytes, in order, as they inflate. */
export interface EntrySink {
  /** Takes a chunk; calls `ready` when it can take the next one (backpressure). Never throws. */
  write(chunk: Buffer, ready: () => void): void;
  end(): void;
}

/** What `streamBundle` does with an entry: read it into memory, only measure and hash it, or stream it. */
export type EntryRoute = 'keep' | 'hash' | EntrySink;

const IN_MEMORY_BYTES = 128 * 1024 * 1024;
const INFLATE_CHUNK = 1024 * 1024;

/**
 * A file's bytes, as large as fstat says it is, when that is at most `max` (else undefined): read
 * in one piece (fs.promises.readFile reads 512 KiB at a time, measured twice as slow here).
 */
async function readWhole(file: string, max: number): Promise<Buffer | undefined> {
  const fh = await open(file, 'r');
  try {
    const size = (await fh.stat()).size;
    if (size > max) return undefined;
    const data = Buffer.allocUnsafe(size);
    let at = 0;
    while (at < size) {
      const { bytesRead } = await fh.read(data, at, size - at, at);
      if (bytesRead === 0) break;
      at += bytesRead;
    }
    return data.subarray(0, at);
  } finally {
    await fh.close();
  }
}

/**
 * A stored entry's bytes in memory as a stream of 1 MiB pieces, one per turn of the event loop:
 * hashed between the other entries' chunks (report.html, 13 MB, hashed at once would hold this
 * thread ~7 ms before the events begin to inflate).
 */
function inPieces(raw: Buffer): Readable {
  let at = 0;
  return new Readable({
    read() {
      if (at >= raw.length) return void this.push(null);
      const piece = raw.subarray(at, at + INFLATE_CHUNK);
      at += piece.length;
      setImmediate(() => this.push(piece));
    },
  });
}

/**
 * Reads a bundle zip as untrusted input, in memory and in one pass: every entry of the central
 * directory is checked first (name, type, size, duplicates: as `extractBundle`), then the `early`
 * entries are read into memory, then the others inflate side by side, each measured and hashed as
 * it streams and kept, only hashed, or handed on as `route` decides (it sees the early entries).
 * Nothing is written to disk.
 */
export async function streamBundle(
  file: string,
  limits: ZipLimits,
  early: (name: string, declaredBytes: number) => boolean,
  route: (name: string, early: ReadonlyMap<string, ExtractedEntry>) => EntryRoute,
): Promise<ExtractedBundle> {
  // Not autoClose: the entries are read after the whole directory is. A bundle of up to 128 MiB
  // is read into memory at once (one read instead of one per chunk).
  let data: Buffer | undefined;
  try {
    data = await readWhole(file, IN_MEMORY_BYTES);
  } catch (e) {
    throw notABundle(file, (e as Error).message);
  }
  const zip = await openZip(file, false, data);
  const listed: yauzl.Entry[] = [];
  const entries = new Map<string, ExtractedEntry>();
  const streams: (Readable | Writable)[] = [];
  let failure: ProofloopError | null = null;
  const fail = (e: unknown): ProofloopError => {
    if (failure) return failure;
    failure = e instanceof ProofloopError ? e : notABundle(file, (e as Error).message);
    // The first failure ends the bundle: stop inflating the other entries (every stage of each, with
    // the error: a source destroyed once it has all its data would leave its pipeline waiting).
    for (const st of streams) st.destroy(failure);
    return failure;
  };
  try {
    if (zip.entryCount > limits.maxEntries)
      throw notABundle(file, `${zip.entryCount} entries, more than the ${limits.maxEntries} allowed`);
    const seen: EntryChecks = { lowerNames: new Set<string>(), total: 0 };
    await new Promise<void>((resolve, reject) => {
      zip.on('error', (e: unknown) => reject(fail(e)));
      zip.on('end', () => resolve());
      zip.on('entry', (entry: yauzl.Entry) => {
        const kind = checkEntry(file, entry, limits, seen);
        if (kind instanceof Error) return reject(fail(kind));
        if (kind === 'file') listed.push(entry);
        zip.readEntry();
      });
      zip.readEntry();
    });
    const read = (entry: yauzl.Entry, how: EntryRoute): Promise<void> =>
      new Promise<void>((resolve, reject) => {
        const name = entry.fileName;
        // A deflated entry's raw bytes, inflated here in large pieces (yauzl's own inflate hands out
        // 16 KiB at a time, each through its streams); the sizes are checked below instead.
        const deflated = entry.compressionMethod === 8;
        const opened = (err: Error | null, stream: Readable) => {
          if (err || !stream) return reject(fail(err ?? new Error(`cannot read ${name}`)));
          if (failure) {
            stream.destroy();
            return reject(failure);
          }
          // One stage: measured against the declared size (more is refused at once, less at the
          // end), hashed, and kept, dropped or handed on.
          const limit = Math.min(entry.uncompressedSize, limits.maxEntryBytes);
          const hash = createHash('sha256');
          let bytes = 0;
          const kept: Buffer[] = [];
          const sink = new Writable({
            write: (chunk: Buffer, _e, cb) => {
              bytes += chunk.length;
              if (bytes > limit) return cb(beyondDeclared(file, name));
              hash.update(chunk);
              if (how === 'hash') cb();
              else if (how === 'keep') {
                kept.push(chunk);
                cb();
              } else how.write(chunk, () => cb());
            },
          });
          const stages: (Readable | Writable)[] = [stream];
          if (deflated) stages.push(createInflateRaw({ chunkSize: INFLATE_CHUNK }));
          stages.push(sink);
          streams.push(...stages);
          pipeline(stages).then(
            () => {
              if (bytes !== entry.uncompressedSize)
                return reject(
                  fail(
                    notABundle(
                      file,
                      `entry ${JSON.stringify(name)} has ${bytes} bytes, not the ${entry.uncompressedSize} its size says`,
                    ),
                  ),
                );
              if (typeof how === 'object') how.end();
              entries.set(name, {
                name,
                file: null,
                bytes,
                sha256: hash.digest('hex'),
                data: how === 'keep' ? Buffer.concat(kept) : undefined,
              });
              resolve();
            },
            (e: unknown) => reject(fail(entryFailure(file, name, e))),
          );
        };
        if (data && (deflated || entry.compressionMethod === 0)) {
          // In memory: the entry's bytes as one piece (yauzl's own stream would cut them into 64 KiB
          // pieces, each a round trip through the inflate stream). yauzl checks the local header
          // and that the bytes lie inside the file.
          const bytes = data;
          zip.readLocalFileHeader(entry, { minimal: true }, (err, header) => {
            if (err || !header) return reject(fail(err ?? new Error(`cannot read ${name}`)));
            const raw = bytes.subarray(header.fileDataStart, header.fileDataStart + entry.compressedSize);
            opened(null, deflated ? Readable.from([raw]) : inPieces(raw));
          });
        } else if (deflated) zip.openReadStream(entry, { decompress: false }, opened);
        else zip.openReadStream(entry, opened);
      });
    const first = listed.filter((e) => early(e.fileName, e.uncompressedSize));
    await Promise.all(first.map((e) => read(e, 'keep')));
    const rest = listed.filter((e) => !first.includes(e));
    // Every read settles (a failed one rejects at once, the others end or fail with the zip closed).
    const results = await Promise.allSettled(rest.map((e) => read(e, route(e.fileName, entries))));
    const rejected = results.find((r) => r.status === 'rejected');
    if (rejected) throw failure ?? fail(rejected.reason);
  } finally {
    zip.close();
  }
  return { dir: '', entries };
}
