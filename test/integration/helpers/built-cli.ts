import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { repoRoot, type ChildRun } from './tmp';

/**
 * The CLI as users run it: `node bin/proofloop.js …`, the bundle `npm run build` makes in dist/
 * (`npm test` builds first). Each call is a new process; at most one per core (plus one) run at
 * once, so a file of tests can start them all together.
 */
export const BIN = path.join(repoRoot, 'bin', 'proofloop.js');

export function assertBuilt(): void {
  if (!existsSync(path.join(repoRoot, 'dist', 'cli.cjs')))
    throw new Error('dist/cli.cjs is missing: run `npm run build` before these tests');
}

const limit = availableParallelism() + 1;
let running = 0;
const waiting: (() => void)[] = [];

async function slot<T>(fn: () => Promise<T>): Promise<T> {
  if (running >= limit) await new Promise<void>((r) => waiting.push(r));
  running += 1;
  try {
    return await fn();
  } finally {
    running -= 1;
    waiting.shift()?.();
  }
}

export interface BuiltRun extends ChildRun {
  ms: number;
}

export function pl(args: string[], env: NodeJS.ProcessEnv = {}): Promise<BuiltRun> {
  return slot(
    () =>
      new Promise<BuiltRun>((resolve, reject) => {
        const t0 = performance.now();
        const child = spawn(process.execPath, [BIN, ...args], {
          cwd: repoRoot,
          env: { ...process.env, ...env },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        const out: Buffer[] = [];
        const err: Buffer[] = [];
        child.stdout.on('data', (d: Buffer) => out.push(d));
        child.stderr.on('data', (d: Buffer) => err.push(d));
        child.on('error', reject);
        child.on('close', (code) =>
          resolve({
            code,
            stdout: Buffer.concat(out).toString(),
            stderr: Buffer.concat(err).toString(),
            ms: performance.now() - t0,
          }),
        );
      }),
  );
}

/** A JavaScript stack trace or an uncaught error's name, anywhere in a process's output. */
export function stackTraceIn(text: string): string | null {
  const m =
    /^\s+at .*(?:\(.*:\d+:\d+\)|:\d+:\d+)$/m.exec(text) ??
    /\b(?:RangeError|TypeError|ReferenceError|SyntaxError|Maximum call stack)\b/.exec(text) ??
    /Uncaught|unhandled/i.exec(text);
  return m ? text.slice(Math.max(0, m.index - 200), m.index + 300) : null;
}

/**
 * `proofloop serve <folder>`: starts it, waits for the URL it prints, calls `runs.list` with the
 * token from that URL, then stops it with SIGTERM. Resolves with what the API answered and how
 * the process ended.
 */
export function serveOnce(
  folder: string,
  env: NodeJS.ProcessEnv = {},
  timeoutMs = 60_000,
): Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string; runs: unknown }> {
  return slot(
    () =>
      new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [BIN, 'serve', folder, '--port', '0', '--otlp-port', '0'], {
          cwd: repoRoot,
          env: { ...process.env, ...env },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        let runs: unknown = undefined;
        let asked = false;
        const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.stdout.on('data', (d: Buffer) => {
          stdout += d.toString();
          const m = /(http:\/\/127\.0\.0\.1:\d+)\/#token=([\w-]+)/.exec(stdout);
          if (!m || asked) return;
          asked = true;
          fetch(`${m[1]}/api/runs.list`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-proofloop-token': m[2]! },
            body: '{}',
          })
            .then((r) => r.json())
            .then(
              (body) => (runs = body),
              (e: Error) => (runs = { fetch_error: e.message }),
            )
            .finally(() => child.kill('SIGTERM'));
        });
        child.on('error', reject);
        child.on('close', (code, signal) => {
          clearTimeout(timer);
          resolve({ code, signal, stdout, stderr, runs });
        });
      }),
  );
}
