import { realpathSync, existsSync } from 'node:fs';
import path from 'node:path';
import { ProofloopError } from '../../shared/result';

/** Whether `child` is `root` or lies beneath it (both absolute, normalised). */
export function isWithin(root: string, child: string): boolean {
  const rel = path.relative(root, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** The real path of the deepest existing ancestor of `p`, with the rest appended. */
function realish(p: string): string {
  let cur = p;
  const rest: string[] = [];
  while (!existsSync(cur)) {
    const parent = path.dirname(cur);
    if (parent === cur) break;
    rest.unshift(path.basename(cur));
    cur = parent;
  }
  return path.join(realpathSync(cur), ...rest);
}

/**
 * Resolves a user- or model-supplied path inside `root`, refusing `..`, absolute paths that leave
 * it, and symbolic links (at any depth, existing or not yet created) that point outside.
 */
export function resolveInside(root: string, requested: string, what = 'path'): string {
  if (typeof requested !== 'string' || requested.length === 0) {
    throw new ProofloopError('bad_args', `${what} must be a non-empty string`);
  }
  if (requested.includes('\0')) throw new ProofloopError('forbidden_path', `${what} contains a NUL byte`);
  const realRoot = realpathSync(root);
  const target = path.resolve(realRoot, requested);
  if (!isWithin(realRoot, target)) {
    throw new ProofloopError('forbidden_path', `${what} "${requested}" is outside ${root}`);
  }
  const real = realish(target);
  if (!isWithin(realRoot, real)) {
    throw new ProofloopError(
      'forbidden_path',
      `${what} "${requested}" leads outside ${root} through a symbolic link`,
    );
  }
  return real;
}
