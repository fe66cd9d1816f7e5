import { setFlagsFromString } from 'node:v8';

/**
 * How V8 runs a process that serves a page (serve, the app) until its work turns heavy: lean.
 *
 * - **The young generation stays at its first size.** V8 doubles it (semi-spaces of 1 MiB, up to
 *   16) whenever more bytes survive its scavenges than it holds. Loading the service's modules is
 *   mostly survivors, so `serve` on a folder of 5 small sessions grew it to 4 MiB semi-spaces and
 *   held ~6 MB more RSS than at 1 MiB, with no speed a page's calls need (bench/peer.ts).
 * - **No optimizing compiler (TurboFan).** On the same folder the import and the page's calls made
 *   13 functions hot (canonical JSON's key sort, the redactor, the depth check, path normalising);
 *   compiling them held ~4 MB more peak RSS (the compiler's zones, in its threads' malloc arenas)
 *   to save a few milliseconds. Without it they run as baseline code: `proofloop open` of 17 MB of
 *   sessions took 0.94–0.96 s against 0.84–0.88 s (most of an import is SQLite, hashing and
 *   JSON.parse, native either way).
 *
 * Heavy work needs both: at the first young-generation size `proofloop open` of 300,000 events ran
 * 15–25% slower (bench/open.ts), and hot JavaScript runs ~4× faster optimized. The process leaves
 * lean mode for good when a worker thread starts (workers.ts: every large job runs in one: a big
 * import, snapshots, a bundle, a diff, the gateway, OTLP decoding), when the command is not serve
 * (cli/main.ts), or once it has used CPU_BUDGET_MS of CPU (noteWork, on each call the service
 * answers): a page used for long, a session that keeps growing.
 *
 * Both flags are read while running: `--semi-space-growth-factor` each time V8 grows the young
 * generation (NewSpace::Grow), `--turbofan` each time a function is found hot; setting them changes
 * what comes next. `--max-semi-space-size` and `--max-opt`, the obvious flags, do not serve: the
 * first is read once when the heap is set up, the second implies --no-turbofan and never undoes it.
 */

/** CPU time (user + system, every thread) after which a lean process is doing heavy work. */
export const CPU_BUDGET_MS = 2000;

let lean = false;

export type FlagsMode = 'lean' | 'full';

/**
 * Called (when set) before V8's flags change: a code cache carries the flags it was made under, and
 * V8 rejects it under others (cli/code-cache.ts, which sets it, writes its caches first).
 */
export const BEFORE_FLAGS_CHANGE = Symbol.for('proofloop.before-v8-flags-change');

function setFlags(mode: FlagsMode, flags: string[]): void {
  const hook = (globalThis as { [BEFORE_FLAGS_CHANGE]?: (m: FlagsMode) => void })[BEFORE_FLAGS_CHANGE];
  hook?.(mode);
  for (const f of flags) setFlagsFromString(f);
  lean = mode === 'lean';
}

export function goLean(): void {
  setFlags('lean', ['--semi-space-growth-factor=1', '--no-turbofan']);
}

/** V8's defaults back (doubling, TurboFan), for work that allocates and computes a lot. */
export function leaveLean(): void {
  setFlags('full', ['--semi-space-growth-factor=2', '--turbofan']);
}

export const isLean = (): boolean => lean;

/** Leaves lean mode once the process has used `budgetMs` of CPU. Cheap: one getrusage(2). */
export function noteWork(budgetMs = CPU_BUDGET_MS): void {
  if (!lean) return;
  const { user, system } = process.cpuUsage();
  if ((user + system) / 1000 >= budgetMs) leaveLean();
}
