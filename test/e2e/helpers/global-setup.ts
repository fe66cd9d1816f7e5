import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../../..');

function newest(dir: string): number {
  let t = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    t = Math.max(t, entry.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

/** Builds the renderer once, unless dist/renderer is newer than every source it is built from. */
export default function globalSetup(): void {
  const built = path.join(root, 'dist/renderer/index.html');
  const sources = Math.max(
    newest(path.join(root, 'renderer')),
    newest(path.join(root, 'shared')),
    statSync(path.join(root, 'vite.config.ts')).mtimeMs,
  );
  if (existsSync(built) && statSync(built).mtimeMs > sources) return;
  execFileSync('npx', ['vite', 'build', '--logLevel', 'warn'], { cwd: root, stdio: 'inherit' });
}
