import { spawn } from 'node:child_process';
import { childEntry, childEnv } from './children';
import type { Verdict } from './judge-process';

/** Runs the judge process on a workspace and returns its verdict. It never sees the ledger. */
export function runJudge(workspace: string, command: string, timeoutMs: number): Promise<Verdict> {
  const { command: exe, args } = childEntry('judge');
  return new Promise((resolve, reject) => {
    const child = spawn(exe, [...args, JSON.stringify({ workspace, command, timeout_ms: timeoutMs })], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: childEnv(),
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString('utf8')));
    child.stderr.on('data', (b: Buffer) => (err += b.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs + 15_000);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const line = out.trim().split('\n').at(-1) ?? '';
      try {
        resolve(JSON.parse(line) as Verdict);
      } catch {
        reject(
          Object.assign(new Error(`judge process ended (${signal ?? `code ${code}`}) without a verdict`), {
            stderr: err,
          }),
        );
      }
    });
  });
}
