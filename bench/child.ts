/**
 * A command timed as a whole process, as a user meets it: wall time from spawn to exit, the time
 * its first stdout byte arrived (the CLI prints when its work is done and before background work
 * such as snapshots ends), and peak RSS of the process (all its threads). Peak RSS and CPU come from
 * GNU time (`/usr/bin/time -v`, Debian package `time`) when installed, else from polling the child's
 * /proc/<pid>/status VmHWM every 20 ms (the last poll before exit can miss a late peak).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const GNU_TIME = '/usr/bin/time';

export interface ChildFigures {
  command: string;
  exit_code: number | null;
  wall_ms: number;
  /** ms from spawn to the first stdout byte; null if it printed nothing. */
  first_stdout_ms: number | null;
  peak_rss_mb: number;
  /** CPU seconds of the process (all threads): user + system; null when only /proc was polled. */
  cpu_s: number | null;
  /** CPU time over wall time: 2.0 means both cores busy all along. */
  cores_used: number | null;
  rss_from: 'gnu-time' | 'proc-poll';
  /** When (ms since spawn) the polled RSS was highest: before or after first_stdout_ms? */
  polled_rss_peak_at_ms: number;
  /** RSS when the first stdout byte arrived (the end of `open`'s import), as polled. */
  polled_rss_at_first_stdout_mb: number | null;
  /** How stop() ended it, when it did. */
  stopped?: string;
}

export interface Running {
  pid: number;
  /** Resolves on the first stdout line that satisfies `test` (ms since spawn, the line). */
  waitForLine(test: (line: string) => boolean): Promise<{ ms: number; line: string }>;
  /** CPU ms the command has used so far, all its threads (null once it is gone, or off Linux). */
  cpuMs(): number | null;
  /** Sends SIGTERM (SIGKILL after `graceMs`) and resolves the figures when it exits. */
  stop(graceMs?: number): Promise<ChildFigures>;
  done: Promise<ChildFigures & { stdout: string; stderr: string }>;
}

export interface SpawnOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Keep at most this much of stdout (ms figures only need the first bytes). */
  keepStdout?: number;
}

const mb = (kb: number) => Math.round(kb / 102.4) / 10;

function parseGnuTime(text: string) {
  const num = (label: string) => {
    const m = text.match(new RegExp(`${label}[^:]*:\\s*([0-9.]+)`));
    return m ? Number(m[1]) : NaN;
  };
  return {
    rssKb: num('Maximum resident set size'),
    cpu: num('User time \\(seconds\\)') + num('System time \\(seconds\\)'),
  };
}

/** Starts `cmd args` measured; see ChildFigures. */
export function spawnMeasured(cmd: string, args: string[], opts: SpawnOptions = {}): Running {
  const viaTime = existsSync(GNU_TIME);
  const tmp = mkdtempSync(path.join(tmpdir(), 'pl-bench-time-'));
  const timeOut = path.join(tmp, 'time.txt');
  const argv = viaTime ? ['-v', '-o', timeOut, cmd, ...args] : args;
  const t0 = performance.now();
  const child = spawn(viaTime ? GNU_TIME : cmd, argv, {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const keep = opts.keepStdout ?? 1 << 20;
  let stdout = '';
  let stderr = '';
  let firstOut: number | null = null;
  let pending = '';
  const waiters: { test: (l: string) => boolean; resolve: (v: { ms: number; line: string }) => void }[] = [];
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (s: string) => {
    const now = performance.now() - t0;
    firstOut ??= now;
    if (stdout.length < keep) stdout += s.slice(0, keep - stdout.length);
    pending += s;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines)
      for (const w of [...waiters])
        if (w.test(line)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve({ ms: now, line });
        }
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (s: string) => {
    if (stderr.length < 65536) stderr += s;
  });
  // The command's /proc status polled every 20 ms (under GNU time, the command is time's child):
  // its high-water mark when GNU time is missing, and when the peak came (import or after it?).
  let hwmKb = 0;
  let rssPeak = { kb: 0, ms: 0 };
  let rssAtFirstOut: number | null = null;
  let stopped: string | undefined;
  let target: number | null = viaTime ? null : (child.pid ?? null);
  const poll = setInterval(() => {
    target ??= childOf(child.pid!);
    if (target === null) return;
    try {
      const st = readFileSync(`/proc/${target}/status`, 'utf8');
      const hwm = st.match(/VmHWM:\s+(\d+)/);
      const rss = Number(st.match(/VmRSS:\s+(\d+)/)?.[1] ?? 0);
      if (hwm) hwmKb = Math.max(hwmKb, Number(hwm[1]));
      if (rss > rssPeak.kb) rssPeak = { kb: rss, ms: performance.now() - t0 };
      if (firstOut !== null && rssAtFirstOut === null) rssAtFirstOut = rss;
    } catch {
      // exited between polls
    }
  }, 20);
  const done = new Promise<ChildFigures & { stdout: string; stderr: string }>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      const wall = performance.now() - t0;
      clearInterval(poll);
      let rssKb = hwmKb;
      let cpu: number | null = null;
      if (viaTime) {
        const text = existsSync(timeOut) ? readFileSync(timeOut, 'utf8') : '';
        const t = parseGnuTime(text);
        rssKb = t.rssKb;
        cpu = Number.isFinite(t.cpu) ? Math.round(t.cpu * 100) / 100 : null;
        // GNU time exits with the command's status; "Command terminated by signal" when killed.
        if (/Command terminated by signal/.test(text)) code = null;
      }
      rmSync(tmp, { recursive: true, force: true });
      resolve({
        command: [cmd, ...args].map((a) => (/\s/.test(a) ? JSON.stringify(a) : a)).join(' '),
        exit_code: code,
        wall_ms: Math.round(wall),
        first_stdout_ms: firstOut === null ? null : Math.round(firstOut),
        peak_rss_mb: mb(rssKb),
        cpu_s: cpu,
        cores_used: cpu === null ? null : Math.round((cpu / (wall / 1000)) * 100) / 100,
        rss_from: viaTime ? 'gnu-time' : 'proc-poll',
        polled_rss_peak_at_ms: Math.round(rssPeak.ms),
        polled_rss_at_first_stdout_mb: rssAtFirstOut === null ? null : mb(rssAtFirstOut),
        ...(stopped ? { stopped } : {}),
        stdout,
        stderr,
      });
    });
  });
  return {
    pid: child.pid ?? -1,
    waitForLine: (test) =>
      new Promise((resolve, reject) => {
        waiters.push({ test, resolve });
        done.then(
          (f) => reject(new Error(`exited (${f.exit_code}) before the line: ${f.stderr.slice(0, 500)}`)),
          reject,
        );
      }),
    cpuMs() {
      const target = viaTime ? childOf(child.pid!) : child.pid!;
      return target === null ? null : procCpuMs(`/proc/${target}/stat`);
    },
    async stop(graceMs = 10_000) {
      // GNU time forwards no signal: the command is its child. SIGKILL if SIGTERM does not end it.
      const target = viaTime ? childOf(child.pid!) : child.pid!;
      if (target === null) return done;
      process.kill(target, 'SIGTERM');
      const late = setTimeout(() => {
        stopped = 'SIGKILL after SIGTERM';
        process.kill(target, 'SIGKILL');
      }, graceMs);
      const f = await done;
      clearTimeout(late);
      return f;
    },
    done,
  };
}

/** The first child of `pid` (the command GNU time started). */
/**
 * The user + system CPU ms a /proc `stat` file (a process's, or a thread's under task/) counts, or
 * null when it cannot be read (gone, or not Linux). Its fields are read after the name's closing
 * parenthesis (a name may hold spaces and parentheses), in clock ticks of 10 ms.
 */
export function procCpuMs(statFile: string): number | null {
  try {
    const stat = readFileSync(statFile, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return null;
  }
}

function childOf(pid: number): number | null {
  try {
    const kids = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/);
    return kids[0] ? Number(kids[0]) : null;
  } catch {
    return null;
  }
}

/** Runs to the end; throws with its stderr when it exits with a code not in `ok`. */
export async function runMeasured(
  cmd: string,
  args: string[],
  opts: SpawnOptions & { ok?: number[] } = {},
): Promise<ChildFigures & { stdout: string; stderr: string }> {
  const r = await spawnMeasured(cmd, args, opts).done;
  if (!(opts.ok ?? [0]).includes(r.exit_code ?? -1))
    throw new Error(`${r.command} exited ${r.exit_code}: ${r.stderr.slice(0, 2000)}`);
  return r;
}

/** The figures without the captured output, for the JSON report. */
export function figures(r: ChildFigures & { stdout?: string; stderr?: string }): ChildFigures {
  const { stdout: _o, stderr: _e, ...f } = r;
  return f;
}
