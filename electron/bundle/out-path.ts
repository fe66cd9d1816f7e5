import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, realpathSync } from 'node:fs';
import path from 'node:path';
import yauzl from 'yauzl';
import { ProofloopError } from '../../shared/result';
import { confine } from '../fs/confine';
import { isWithin } from '../fs/paths';
import { BUNDLE_FORMAT, MANIFEST } from './format';

/** A manifest larger than this is not one ProofLoop wrote (one run's entry is a few hundred bytes). */
const MAX_MANIFEST_BYTES = 16 << 20;

/** The manifest text of the zip at `file`, or null when it is not a zip or has none. */
async function manifestOf(file: string): Promise<string | null> {
  const zip = await new Promise<yauzl.ZipFile | null>((resolve) =>
    yauzl.open(file, { lazyEntries: true, autoClose: false }, (e, z) => resolve(e ? null : z)),
  );
  if (!zip) return null;
  try {
    return await new Promise<string | null>((resolve) => {
      zip.on('error', () => resolve(null));
      zip.on('end', () => resolve(null));
      zip.on('entry', (entry: yauzl.Entry) => {
        if (entry.fileName !== MANIFEST) return zip.readEntry();
        if (entry.uncompressedSize > MAX_MANIFEST_BYTES) return resolve(null);
        zip.openReadStream(entry, (e, stream) => {
          if (e) return resolve(null);
          const chunks: Buffer[] = [];
          let size = 0;
          stream.on('data', (d: Buffer) => {
            size += d.length;
            if (size > MAX_MANIFEST_BYTES) stream.destroy();
            else chunks.push(d);
          });
          stream.on('error', () => resolve(null));
          stream.on('close', () =>
            resolve(size > MAX_MANIFEST_BYTES ? null : Buffer.concat(chunks).toString('utf8')),
          );
        });
      });
      zip.readEntry();
    });
  } finally {
    zip.close();
  }
}

/** Whether `file` is an audit bundle ProofLoop wrote: a zip whose manifest names the bundle format. */
export async function isBundle(file: string): Promise<boolean> {
  // The first bytes before yauzl: a file that is not even a zip (a database, a key) is refused at once.
  const fd = openSync(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  try {
    if (!fstatSync(fd).isFile()) return false;
    const magic = Buffer.alloc(4);
    if (readSync(fd, magic, 0, 4, 0) !== 4 || magic.readUInt32LE(0) !== 0x04034b50) return false;
  } finally {
    closeSync(fd);
  }
  const text = await manifestOf(file);
  if (text === null) return false;
  try {
    return (JSON.parse(text) as { format?: unknown }).format === BUNDLE_FORMAT;
  } catch {
    return false;
  }
}

/**
 * Where an export may write: a new `.zip`, or (with `force`) over an earlier bundle, never over
 * anything else (the ledger, a key, a run's files), and never inside the runs folder's
 * `.proofloop/` or a run's own folder, whose files ProofLoop reads back. Under the runs folder the
 * path is confined (no links); outside it (the CLI's `--out`, a user's own choice) it is taken as
 * given. Returns the absolute path.
 */
export async function checkBundleOut(
  folder: string,
  runIds: ReadonlySet<string>,
  requested: string,
  force: boolean,
): Promise<string> {
  let out = path.resolve(requested);
  if (path.extname(out).toLowerCase() !== '.zip') {
    throw new ProofloopError('bad_args', `out "${requested}": a bundle is written to a new .zip file`);
  }
  const root = realpathSync(folder);
  const dir = (() => {
    try {
      return realpathSync(path.dirname(out));
    } catch {
      throw new ProofloopError('not_found', `folder ${path.dirname(out)} does not exist`);
    }
  })();
  out = path.join(dir, path.basename(out));
  if (isWithin(root, out)) {
    const rel = path.relative(root, out);
    const top = rel.split(path.sep)[0]!;
    if (top === '.proofloop' || (rel.includes(path.sep) && runIds.has(top))) {
      throw new ProofloopError(
        'forbidden_path',
        `out "${requested}": a bundle is never written into .proofloop/ or a run's folder; choose a path beside them`,
      );
    }
    out = confine(root, rel, 'out');
  }
  const st = lstatSync(out, { throwIfNoEntry: false });
  if (st) {
    if (!force)
      throw new ProofloopError('conflict', `${out} exists: choose another name or replace it (--force)`);
    if (st.isSymbolicLink())
      throw new ProofloopError('forbidden_path', `${out} is a symbolic link: not replaced`);
    if (st.isDirectory()) throw new ProofloopError('bad_args', `${out} is a folder`);
    if (!(await isBundle(out))) {
      throw new ProofloopError(
        'forbidden_path',
        `${out} is not an audit bundle: --force replaces only an earlier bundle, never another file`,
      );
    }
  }
  return out;
}
