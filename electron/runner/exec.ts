import { spawn } from 'node:child_process';
import { childEnv, nodeBinary } from './children';

export interface CommandResult {
  exit_code: number | null;
  signal: string | null;
  timed_out: boolean;
  output: string;
  /** Bytes produced beyond the cap and dropped. */
  dropped: number;
  duration_ms: number;
  pid: number | undefined;
}

/** argv of a command line: split on whitespace, no shell; `node` is this very Node. */
export function commandArgv(commandLine: string): { file: string; args: string[] } {
  const [head, ...args] = commandLine.trim().split(/\s+/);
  if (!head) throw new Error('empty command line');
  return { file: head === 'node' ? nodeBinary() : head, args };
}

function killGroup(pid: number | undefined): void {
  if (!pid) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // The group is already gone.
  }
}

/**
 * Runs one command line without a shell, in its own process group, with a minimal environment (no
 * host secrets reach the tool). On timeout the whole group is SIGKILLed; after a normal exit any
 * process it left behind in its group is killed too, so nothing outlives the call.
 */
export function runCommandLine(
  cwd: string,
  commandLine: string,
  opts: { timeoutMs: number; maxBytes: number },
): Promise<CommandResult> {
  const started = performance.now();
  const { file, args } = commandArgv(commandLine);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let dropped = 0;
    let timedOut = false;
    let settled = false;
    const child = spawn(file, args, {
      cwd,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: childEnv({ LANG: 'C.UTF-8', NODE_ENV: 'test' }),
    });
    const take = (b: Buffer) => {
      const room = opts.maxBytes - size;
      if (room <= 0) {
        dropped += b.length;
        return;
      }
      const part = b.length > room ? b.subarray(0, room) : b;
      dropped += b.length - part.length;
      chunks.push(part);
      size += part.length;
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid);
    }, opts.timeoutMs);
    const finish = (code: number | null, signal: string | null, spawnError?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      killGroup(child.pid);
      child.stdout.destroy();
      child.stderr.destroy();
      let output = Buffer.concat(chunks).toString('utf8');
      if (spawnError) output += `${output ? '\n' : ''}cannot start: ${spawnError.message}`;
      resolve({
        exit_code: code,
        signal,
        timed_out: timedOut,
        output,
        dropped,
        duration_ms: Math.round(performance.now() - started),
        pid: child.pid,
      });
    };
    child.on('error', (e) => finish(null, null, e));
    // 'exit' and not 'close': a grandchild holding the pipes open must not hold up the call.
    child.on('exit', (code, signal) => setTimeout(() => finish(code, signal), 20));
  });
}
