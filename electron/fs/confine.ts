import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  realpathSync,
} from 'node:fs';
import path from 'node:path';
import { ProofloopError } from '../../shared/result';
import { isWithin } from './paths';

/**
 * Every read and write ProofLoop makes under a runs folder goes through here. The folder itself is
 * the user's choice (it may be reached through a link, as /tmp is on macOS); below it, no
 * component may be a symbolic link: a shared or unpacked runs folder can hold a link at
 * `<run_id>`, `<run_id>/artifacts` or `.proofloop`, and following one would read or write outside.
 * Each component is checked with lstat, and the last is opened with O_NOFOLLOW where the platform
 * has it, so a link swapped in between the check and the open is refused too.
 */

/** O_NOFOLLOW where it exists (not on Windows, where creating links needs privileges anyway). */
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;

/** The longest path below a folder ProofLoop builds or accepts (Linux's PATH_MAX). */
const MAX_REL = 4096;

function linkRefused(what: string, rel: string, at: string): ProofloopError {
  return new ProofloopError(
    'forbidden_path',
    `${what} "${rel}": ${at} is a symbolic link; ProofLoop does not follow links inside the runs folder`,
  );
}

/** The segments of a relative path, refusing what could leave the folder. */
function segmentsOf(rel: string | readonly string[], what: string): string[] {
  const parts = typeof rel === 'string' ? [rel] : rel;
  const out: string[] = [];
  for (const p of parts) {
    if (typeof p !== 'string' || p.length === 0) {
      throw new ProofloopError('bad_args', `${what} must be a non-empty path`);
    }
    if (p.length > MAX_REL)
      throw new ProofloopError('bad_args', `${what} is longer than ${MAX_REL} characters`);
    if (p.includes('\0')) throw new ProofloopError('forbidden_path', `${what} contains a NUL byte`);
    if (path.isAbsolute(p))
      throw new ProofloopError('forbidden_path', `${what} must be relative to the folder`);
    for (const s of p.split(/[\\/]+/)) {
      if (s === '' || s === '.') continue;
      if (s === '..') throw new ProofloopError('forbidden_path', `${what} "${p}" leaves the folder ("..")`);
      out.push(s);
    }
  }
  if (out.length === 0) throw new ProofloopError('bad_args', `${what} names the folder itself`);
  return out;
}

/**
 * The absolute path of `rel` (a relative path, or its segments) under `root`, once every component
 * of it that exists is known to be a real directory (or, the last, not a link). Components that do
 * not exist yet are fine: they are what a write will create (with mkdirConfined / openConfined).
 */
export function confine(root: string, rel: string | readonly string[], what = 'path'): string {
  const segs = segmentsOf(rel, what);
  const shown = segs.join('/');
  let cur = realpathSync(root);
  for (let i = 0; i < segs.length; i++) {
    cur = path.join(cur, segs[i]!);
    const st = lstatSync(cur, { throwIfNoEntry: false });
    if (!st) return path.join(cur, ...segs.slice(i + 1));
    if (st.isSymbolicLink()) throw linkRefused(what, shown, cur);
    if (i < segs.length - 1 && !st.isDirectory()) {
      throw new ProofloopError('bad_args', `${what} "${shown}": ${cur} is not a folder`);
    }
  }
  return cur;
}

/**
 * A path the caller received (absolute, or relative to `root`), confined like `confine`: refused
 * when it lies outside the folder, names the folder itself, or passes through a link.
 */
export function confineRequested(root: string, requested: string, what = 'path'): string {
  if (typeof requested !== 'string' || requested.length === 0) {
    throw new ProofloopError('bad_args', `${what} must be a non-empty string`);
  }
  if (requested.length > MAX_REL)
    throw new ProofloopError('bad_args', `${what} is longer than ${MAX_REL} characters`);
  if (requested.includes('\0')) throw new ProofloopError('forbidden_path', `${what} contains a NUL byte`);
  const given = path.resolve(root);
  const real = realpathSync(given);
  const abs = path.resolve(given, requested);
  const base = isWithin(given, abs) ? given : isWithin(real, abs) ? real : null;
  if (base === null || path.relative(base, abs) === '') {
    throw new ProofloopError('forbidden_path', `${what} "${requested}" is outside ${given}`);
  }
  return confine(real, path.relative(base, abs), what);
}

/** Creates the folders of `rel` under `root` one by one, refusing a link at any of them; returns the path. */
export function mkdirConfined(
  root: string,
  rel: string | readonly string[],
  what = 'folder',
  mode = 0o700,
): string {
  const segs = segmentsOf(rel, what);
  for (let i = 1; i <= segs.length; i++) {
    const p = confine(root, segs.slice(0, i), what);
    try {
      mkdirSync(p, { mode });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    // Made by someone else between the check and mkdir: check what is there now.
    const st = lstatSync(p);
    if (st.isSymbolicLink()) throw linkRefused(what, segs.join('/'), p);
    if (!st.isDirectory())
      throw new ProofloopError('bad_args', `${what} "${segs.join('/')}": ${p} is not a folder`);
  }
  return confine(root, segs, what);
}

/** Opens `rel` under `root` with numeric `flags` (fs.constants), never through a link. */
export function openConfined(
  root: string,
  rel: string | readonly string[],
  flags: number,
  what = 'file',
  mode = 0o600,
): number {
  const p = confine(root, rel, what);
  try {
    return openSync(p, flags | NOFOLLOW, mode);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ELOOP') throw linkRefused(what, path.basename(p), p);
    throw e;
  }
}

/** The bytes of a regular file under `root`, never read through a link. */
export function readConfined(root: string, rel: string | readonly string[], what = 'file'): Buffer {
  const fd = openConfined(root, rel, constants.O_RDONLY, what);
  try {
    if (!fstatSync(fd).isFile()) throw new ProofloopError('bad_args', `${what} is not a regular file`);
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}
