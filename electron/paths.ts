import { existsSync } from 'node:fs';
import path from 'node:path';

/** The repository or app root: two levels above this file, in sources and in dist/ alike. */
export function appRoot(): string {
  let dir = import.meta.dirname;
  for (let i = 0; i < 4; i++) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    dir = path.dirname(dir);
  }
  return path.resolve(import.meta.dirname, '..');
}

/** The built renderer (vite), or null when it has not been built. */
export function rendererDir(): string | null {
  const dir = path.join(appRoot(), 'dist', 'renderer');
  return existsSync(path.join(dir, 'index.html')) ? dir : null;
}

export function builtinTasksDir(): string {
  return path.join(appRoot(), 'tasks');
}
