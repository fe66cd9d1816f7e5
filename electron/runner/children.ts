import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** Whether this code runs from the TypeScript sources (vitest, tsx) rather than the built bundle. */
export const FROM_SOURCES = import.meta.url.endsWith('.ts');

/** Environment that makes `process.execPath` behave as plain Node, also inside Electron. */
export function nodeEnv(): Record<string, string> {
  return process.versions.electron ? { ELECTRON_RUN_AS_NODE: '1' } : {};
}

/** The whole environment of a child process (model, judge, tool): PATH and what `extra` adds, no host secret. */
export function childEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', ...extra, ...nodeEnv() };
}

export interface ChildCommand {
  command: string;
  args: string[];
}

/**
 * How to start the model or judge process. From sources: `node --import tsx electron/runner/<x>-process.ts`
 * (tsx resolved to an absolute URL, so any cwd works). From the bundle: `dist/children/<x>.js`,
 * looked for next to, or one or two levels above, the bundle that holds this code; the
 * PROOFLOOP_CHILDREN_DIR environment variable overrides.
 */
export function childEntry(name: 'model' | 'judge'): ChildCommand {
  if (FROM_SOURCES) {
    const file = fileURLToPath(new URL(`./${name}-process.ts`, import.meta.url));
    const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
    return { command: process.execPath, args: ['--import', tsx, file] };
  }
  const here = path.dirname(fileURLToPath(import.meta.url));
  const dirs = [
    process.env.PROOFLOOP_CHILDREN_DIR,
    path.join(here, 'children'),
    path.join(here, '..', 'children'),
    path.join(here, '..', '..', 'children'),
    path.join(here, '..', '..', 'dist', 'children'),
  ].filter((d): d is string => Boolean(d));
  for (const d of dirs) {
    const file = path.join(d, `${name}.js`);
    if (existsSync(file)) return { command: process.execPath, args: [file] };
  }
  throw new Error(`cannot find the ${name} process entry (children/${name}.js) near ${here}`);
}
