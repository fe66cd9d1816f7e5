import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { afterAll, afterEach, beforeAll } from 'vitest';

/**
 * Things a test file's tests set up and tear down: `folder()` gives a fresh folder, `later(fn)` runs
 * `fn` after the test (ledgers to close); both are undone after each test. Call once at the top of
 * a test file.
 */
export function perTest(): { folder: () => string; later: (fn: () => void) => void } {
  let undo: (() => void)[] = [];
  afterEach(() => {
    for (const fn of undo.reverse()) fn();
    undo = [];
  });
  return {
    folder: () => {
      const f = freshFolder();
      undo.push(f.cleanup);
      return f.dir;
    },
    later: (fn) => void undo.push(fn),
  };
}

/**
 * One folder for a test file's tests, with PROOFLOOP_HOME (where the ledgers of other programs'
 * folders live) inside it while they run; the variable is put back and the folder removed after
 * (kept with PROOFLOOP_KEEP_TMP). Returns the folder's path once the tests run.
 */
export function homeForFile(prefix: string): () => string {
  let dir = '';
  const prev = process.env.PROOFLOOP_HOME;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), prefix));
    process.env.PROOFLOOP_HOME = path.join(dir, 'home');
  });
  afterAll(() => {
    if (prev === undefined) delete process.env.PROOFLOOP_HOME;
    else process.env.PROOFLOOP_HOME = prev;
    if (!process.env.PROOFLOOP_KEEP_TMP) rmSync(dir, { recursive: true, force: true });
  });
  return () => dir;
}

/** A fresh folder per test, removed afterwards unless PROOFLOOP_KEEP_TMP is set. */
export function freshFolder(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'pl-'));
  return {
    dir,
    cleanup: () =>
      process.env.PROOFLOOP_KEEP_TMP ? undefined : rmSync(dir, { recursive: true, force: true }),
  };
}

export const repoRoot = path.resolve(import.meta.dirname, '..', '..', '..');

export interface ChildRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a TypeScript file of this repo in a real Node process (through tsx). */
export function runTs(
  file: string,
  args: string[],
  opts: {
    onLine?: (line: string) => void;
    env?: NodeJS.ProcessEnv;
    stdin?: boolean;
    detached?: boolean;
  } = {},
) {
  const child = spawn(process.execPath, ['--import', 'tsx', path.resolve(repoRoot, file), ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...opts.env },
    stdio: 'pipe',
    // Its own process group: a test can then find whatever the child left behind.
    detached: opts.detached ?? false,
  });
  // Without `stdin`, the child reads end-of-file at once, as from /dev/null.
  if (!opts.stdin) child.stdin.end();
  let stdout = '';
  let stderr = '';
  let pending = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
    pending += d.toString();
    let nl;
    while ((nl = pending.indexOf('\n')) >= 0) {
      opts.onLine?.(pending.slice(0, nl));
      pending = pending.slice(nl + 1);
    }
  });
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<ChildRun>((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr })),
  );
  return { child, done };
}

/** Runs the CLI from sources, as a user would run `proofloop …`. */
export function cli(args: string[], env?: NodeJS.ProcessEnv) {
  return runTs('electron/cli/main.ts', args, { env: { ...env, PROOFLOOP_CLI_ENTRY: '1' } }).done;
}

/** The CLI with its standard input open to the test (`child.stdin`), and each stdout line as it comes. */
export function cliWithStdin(args: string[], onLine?: (line: string) => void) {
  return runTs('electron/cli/main.ts', args, { env: { PROOFLOOP_CLI_ENTRY: '1' }, stdin: true, onLine });
}
