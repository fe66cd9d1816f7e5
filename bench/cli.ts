/**
 * The built CLI (`node bin/proofloop.js`, which runs dist/cli.cjs) as the benches start it, and where
 * its time goes: PROOFLOOP_BENCH_CPU_PROF=<dir> runs each CLI child under `node --cpu-prof` (one
 * profile per thread, workers included) into <dir>/<tag>/, and profileSummary() lists per thread
 * the functions with the most self time.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { dict } from '../shared/dict.js';

/** The repository root, whether this runs from bench/ (tsx) or bundled in dist/. */
export const cliRoot = (): string => path.resolve(import.meta.dirname, '..');
export const repoFile = (rel: string): string => path.join(cliRoot(), rel);

const profDir = () => process.env.PROOFLOOP_BENCH_CPU_PROF;

/** node's argv for `proofloop <args>`; `tag` names the child's profile folder. */
export function cliArgs(args: string[], tag: string): string[] {
  const bin = repoFile('bin/proofloop.js');
  if (!existsSync(repoFile('dist/cli.cjs'))) throw new Error('the CLI is not built: npm run build');
  const dir = profDir();
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${path.join(dir, tag)}`, bin, ...args] : [bin, ...args];
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Self time per function of one .cpuprofile: the top `top`, with the thread's total. */
export function topSelf(file: string, top = 12) {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byNode = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let total = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const n = byNode.get(p.samples[i]!);
    const dt = p.timeDeltas[i] ?? 0;
    total += dt;
    if (!n) continue;
    const f = n.callFrame;
    const where = f.url ? `${path.basename(f.url)}:${f.lineNumber + 1}` : '';
    const key = `${f.functionName || '(anonymous)'}${where ? ` ${where}` : ''}`;
    self.set(key, (self.get(key) ?? 0) + dt);
  }
  const ms = (us: number) => Math.round(us / 1000);
  return {
    total_ms: ms(total),
    top: [...self.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([fn, us]) => ({ fn, self_ms: ms(us), pct: Math.round((us / total) * 1000) / 10 })),
  };
}

/** Per profiled child whose tag starts with `prefix`: per thread, the top self-time functions. */
export function profileSummary(prefix: string): Record<string, unknown> | null {
  const dir = profDir();
  if (!dir || !existsSync(dir)) return null;
  const out: Record<string, unknown> = dict();
  for (const tag of readdirSync(dir).filter((t) => t.startsWith(prefix))) {
    const files = readdirSync(path.join(dir, tag)).filter((f) => f.endsWith('.cpuprofile'));
    out[tag] = Object.fromEntries(
      files.map((f) => [
        // CPU.<date>.<time>.<pid>.<thread id>.<n>.cpuprofile: thread 0 is the main thread.
        `thread-${f.split('.')[4] ?? f}`,
        topSelf(path.join(dir, tag, f)),
      ]),
    );
  }
  return out;
}
