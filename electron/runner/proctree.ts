/**
 * The processes of a run, found and killed as a tree. A real agent does not keep its children in
 * its process group: Codex runs each command in a session of its own (a PTY, inside bubblewrap),
 * Claude Code moves a command past its timeout to the background and waits for it before it
 * exits. Killing the agent's group leaves those running; so the host snapshots the process table
 * (`/proc` on Linux, `ps` elsewhere), takes every descendant of the agent (and, after the agent is
 * gone, every process whose working directory is inside the run's folder: orphans re-parented to
 * init keep it) and kills them all, then looks again until none is left.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';

export interface Proc {
  pid: number;
  ppid: number;
  /** The command line, arguments joined by spaces ('' when unreadable). */
  cmd: string;
  /** The working directory, when readable (Linux: same user). */
  cwd: string | null;
}

function readProcLinux(): Proc[] {
  const out: Proc[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // `pid (comm) state ppid …`: comm may hold spaces and parentheses; the last ')' ends it.
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (rest[0] === 'Z' || rest[0] === 'X') continue; // a zombie is gone, only not yet reaped
      let cmd = '';
      let cwd: string | null = null;
      try {
        cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ').trim();
        cwd = readlinkSync(`/proc/${name}/cwd`);
      } catch {
        // another user's process, or gone
      }
      out.push({ pid: Number(name), ppid: Number(rest[1]), cmd, cwd });
    } catch {
      // exited while listing
    }
  }
  return out;
}

function readPs(): Proc[] {
  const text = execFileSync('ps', ['-A', '-o', 'pid=,ppid=,stat=,args='], { encoding: 'utf8' });
  const out: Proc[] = [];
  for (const line of text.split('\n')) {
    const m = /^\s*(\d+)\s+(\d+)\s+(\S+)\s*(.*)$/.exec(line);
    if (!m || m[3]!.startsWith('Z')) continue;
    out.push({ pid: Number(m[1]), ppid: Number(m[2]), cmd: m[4]!, cwd: null });
  }
  return out;
}

/** The process table now (live processes only, zombies left out). */
export function processes(): Proc[] {
  return existsSync('/proc/self/stat') ? readProcLinux() : readPs();
}

/** `roots` and every descendant of them, in the table given (breadth first, no recursion). */
export function descendants(table: readonly Proc[], roots: readonly number[]): Proc[] {
  const children = new Map<number, Proc[]>();
  for (const p of table) {
    const list = children.get(p.ppid) ?? [];
    list.push(p);
    children.set(p.ppid, list);
  }
  const byPid = new Map(table.map((p) => [p.pid, p]));
  const seen = new Set<number>();
  const out: Proc[] = [];
  const queue = roots.filter((r) => byPid.has(r));
  while (queue.length > 0) {
    const pid = queue.shift()!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    out.push(byPid.get(pid)!);
    for (const c of children.get(pid) ?? []) queue.push(c.pid);
  }
  return out;
}

/** Is `dir` inside `folder` (or the folder itself)? */
const inside = (folder: string, dir: string) => {
  const r = path.relative(folder, dir);
  return r === '' || (!r.startsWith('..') && !path.isAbsolute(r));
};

/**
 * The run's processes: the agent's tree (when its pid is given) and any process working inside
 * the run's folder, with their trees. Never the calling process or its ancestors.
 */
export function runProcesses(runDir: string, agentPid?: number | null): Proc[] {
  const table = processes();
  const own = new Set<number>([process.pid]);
  for (let p = process.ppid; p > 1 && !own.has(p);) {
    own.add(p);
    p = table.find((x) => x.pid === p)?.ppid ?? 0;
  }
  const roots = table.filter((p) => p.cwd !== null && inside(runDir, p.cwd)).map((p) => p.pid);
  if (agentPid) roots.push(agentPid);
  return descendants(table, roots).filter((p) => !own.has(p.pid));
}

/**
 * The processes running `command` in the agent's tree: the topmost whose command line holds it
 * (a shell, a sandbox wrapper, the command itself), each with its whole tree.
 */
export function commandTree(agentPid: number, command: string): Proc[] {
  const table = processes();
  const tree = descendants(table, [agentPid]);
  const hits = new Set(tree.filter((p) => p.pid !== agentPid && p.cmd.includes(command)).map((p) => p.pid));
  const top = [...hits].filter((pid) => !hits.has(table.find((p) => p.pid === pid)?.ppid ?? -1));
  return descendants(table, top);
}

/** SIGKILLs each process; returns the pids signalled (a process gone already is left out). */
export function killAll(procs: readonly Proc[]): number[] {
  const killed: number[] = [];
  for (const p of procs) {
    try {
      process.kill(p.pid, 'SIGKILL');
      killed.push(p.pid);
    } catch {
      // gone already
    }
  }
  return killed;
}

/** Kills what `find` returns until it returns nothing (a dying parent may start one more child). */
export async function killUntilGone(find: () => Proc[], rounds = 5): Promise<number[]> {
  const all: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const procs = find();
    if (procs.length === 0) break;
    all.push(...killAll(procs));
    await new Promise((r) => setTimeout(r, 50 * (i + 1)));
  }
  return [...new Set(all)];
}
