import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** Whether this code runs from the TypeScript sources (vitest, tsx) rather than the built bundle. */
export const FROM_SOURCES = import.meta.url.endsWith('.ts');

/**
 * The Node.js that runs the model, the judge and `node …` commands. Under plain Node it is this
 * process's own binary. Inside Electron it cannot be: packaged builds turn the RunAsNode fuse off
 * (electron-builder.yml), so Electron's binary no longer acts as Node; the runner then uses
 * PROOFLOOP_NODE, else the first `node` on PATH, and says so when there is none.
 */
export function nodeBinary(): string {
  if (!process.versions.electron) return process.execPath;
  const own = process.env.PROOFLOOP_NODE;
  if (own && isExecutable(own)) return own;
  for (const dir of (process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin').split(path.delimiter)) {
    const file = path.join(dir, process.platform === 'win32' ? 'node.exe' : 'node');
    if (dir && isExecutable(file)) return file;
  }
  throw new Error(
    'the runner needs Node.js to start its model and judge: put `node` on PATH or set PROOFLOOP_NODE (the desktop app does not run its own binary as Node)',
  );
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The whole environment of a child process (model, judge, tool): PATH and what `extra` adds, no host secret. */
export function childEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', ...extra };
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
    return { command: nodeBinary(), args: ['--import', tsx, file] };
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
    if (existsSync(file)) return { command: nodeBinary(), args: [file] };
  }
  throw new Error(`cannot find the ${name} process entry (children/${name}.js) near ${here}`);
}
