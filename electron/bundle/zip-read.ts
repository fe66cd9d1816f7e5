import { createHash } from 'node:crypto';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Transform, Writable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
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

function bad(file: string, message: string): ProofloopError {
  return new ProofloopError('invalid_input', `${path.basename(file)} is not a valid bundle: ${message}`);
}

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

function openZip(file: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) => {
    // strictFileNames: a backslash stays a backslash (and is refused), instead of being read as "/".
    yauzl.open(
      file,
      {
        lazyEntries: true,
        autoClose: true,
        validateEntrySizes: true,
        strictFileNames: true,
        decodeStrings: true,
      },
      (err, zip) => {
        if (err || !zip) reject(bad(file, err ? err.message : 'cannot open'));
        else resolve(zip);
      },
    );
  });
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
    throw bad(file, `${zip.entryCount} entries, more than the ${limits.maxEntries} allowed`);
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'proofloop-bundle-'));
  const entries = new Map<string, ExtractedEntry>();
  const lowerNames = new Set<string>();
  let total = 0;
  let index = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      let failed = false;
      const fail = (e: unknown) => {
        if (failed) return;
        failed = true;
        zip.close();
        reject(e instanceof ProofloopError ? e : bad(file, (e as Error).message));
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
        const problem = entryNameProblem(name);
        if (problem) return fail(bad(file, problem));
        const lower = name.toLowerCase();
        if (lowerNames.has(lower)) return fail(bad(file, `duplicate entry ${JSON.stringify(name)}`));
        lowerNames.add(lower);
        const type = (entry.externalFileAttributes >>> 16) & S_IFMT;
        if (type === S_IFLNK) return fail(bad(file, `entry ${JSON.stringify(name)} is a symbolic link`));
        const isDir = name.endsWith('/');
        if (type !== 0 && type !== (isDir ? S_IFDIR : S_IFREG)) {
          return fail(bad(file, `entry ${JSON.stringify(name)} is not a regular file`));
        }
        if (entry.isEncrypted()) return fail(bad(file, `entry ${JSON.stringify(name)} is encrypted`));
        if (isDir) {
          if (entry.uncompressedSize !== 0)
            return fail(bad(file, `folder entry ${JSON.stringify(name)} has content`));
          zip.readEntry();
          return;
        }
        if (entry.uncompressedSize > limits.maxEntryBytes) {
          return fail(
            bad(
              file,
              `entry ${JSON.stringify(name)} expands to ${entry.uncompressedSize} bytes, more than ${limits.maxEntryBytes}`,
            ),
          );
        }
        total += entry.uncompressedSize;
        if (total > limits.maxTotalBytes) {
          return fail(bad(file, `entries expand to more than ${limits.maxTotalBytes} bytes in all`));
        }
        const target = path.join(dir, `${index++}.bin`);
        inFlight++;
        zip.openReadStream(entry, (err, stream) => {
          if (err || !stream) return fail(err ?? new Error(`cannot read ${name}`));
          // The declared size is checked by yauzl (validateEntrySizes); the meter is the second fence.
          const meter = new Meter(Math.min(entry.uncompressedSize, limits.maxEntryBytes), () =>
            bad(file, `entry ${JSON.stringify(name)} expands beyond its declared size`),
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
            (e: unknown) =>
              fail(
                e instanceof ProofloopError
                  ? e
                  : bad(file, `entry ${JSON.stringify(name)}: ${(e as Error).message}`),
              ),
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
