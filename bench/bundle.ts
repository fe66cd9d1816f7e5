// Bench of issue 6: export (share profile) and verify throughput on a 100,000-event run.
// Goals: export ≥ 50,000 events/s, verify ≥ 200,000 events/s. Run alone: `npx tsx bench/bundle.ts`
// (PL_BENCH_EVENTS=20000 for a quicker look).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NewEvent } from '../shared/protocol';
import { Ledger } from '../electron/ledger';
import { exportBundle, verifyBundle } from '../electron/bundle';
import { syntheticRun, timedAsync, writeRun } from './state';
import { isMain } from './is-main';

/** The synthetic run, with personal data the share profile redacts in one event of twenty. */
export function* leakyRun(n: number): Generator<NewEvent> {
  let i = 0;
  for (const e of syntheticRun(n, 7)) {
    i++;
    yield i % 20 === 0
      ? {
          ...e,
          payload: { ...e.payload, note: `ask dev${i % 50}@example.com about /home/dev${i % 50}/repo` },
        }
      : e;
  }
}

export async function benchBundle(): Promise<{
  events: number;
  export_events_per_s: number;
  verify_events_per_s: number;
  export_ms: number;
  verify_ms: number;
  export_cpu_ms: number;
  verify_cpu_ms: number;
  verify_runs_ms: number[];
  verify_runs_cpu_ms: number[];
  verify_fresh_process_ms: number[];
  verify_fresh_process_events_per_s: number[];
  load_average: number;
  bundle_bytes: number;
  redacted_events: number;
  goals: { export_events_per_s: number; verify_events_per_s: number };
}> {
  const n = Number(process.env.PL_BENCH_EVENTS ?? 100_000);
  const dir = mkdtempSync(join(tmpdir(), 'pl-bench-bundle-'));
  const prevHome = process.env.PROOFLOOP_HOME;
  process.env.PROOFLOOP_HOME = join(dir, 'home');
  const ledger = Ledger.open(join(dir, 'runs'));
  try {
    writeRun(ledger, 'bench-bundle', leakyRun(n));
    const events = ledger.run('bench-bundle')!.event_count;
    const out = join(dir, 'bench.zip');

    // CPU time (all threads of the process) says more than wall time on a shared, busy machine.
    const exported = await timedAsync(() =>
      exportBundle(ledger, { runIds: ['bench-bundle'], out, profile: 'share', sign: true }),
    );
    const exportMs = exported.ms;

    // Verify three times (a cold first run, as a user's, then two more): the first is the figure,
    // the others show the machine's noise beside it.
    const verifyRuns: { ms: number; cpu: number }[] = [];
    for (let i = 0; i < 3; i++) {
      const { value: v, ms, cpu } = await timedAsync(() => verifyBundle(out));
      if (!v.ok || v.integrity !== 'ok')
        throw new Error(`bench bundle does not verify: ${v.first_failure?.reason}`);
      verifyRuns.push({ ms, cpu });
    }
    const verifyMs = verifyRuns[0]!.ms;
    const fresh = [0, 1, 2].map(() => verifyInFreshProcess(out));

    return {
      events,
      export_events_per_s: Math.round(events / (exportMs / 1000)),
      verify_events_per_s: Math.round(events / (verifyMs / 1000)),
      export_ms: Math.round(exportMs),
      verify_ms: Math.round(verifyMs),
      export_cpu_ms: Math.round(exported.cpu),
      verify_cpu_ms: Math.round(verifyRuns[0]!.cpu),
      verify_runs_ms: verifyRuns.map((r) => Math.round(r.ms)),
      verify_runs_cpu_ms: verifyRuns.map((r) => Math.round(r.cpu)),
      // As `proofloop verify-bundle` meets it: a new process (cold JIT, no export before it in the
      // same heap), timed inside that process from the call to the report.
      verify_fresh_process_ms: fresh.map((f) => f.ms),
      verify_fresh_process_events_per_s: fresh.map((f) => Math.round(events / (f.ms / 1000))),
      load_average: Number(loadavg()[0]!.toFixed(2)),
      bundle_bytes: statSync(out).size,
      redacted_events: exported.value.manifest.redaction.events_redacted,
      goals: { export_events_per_s: 50_000, verify_events_per_s: 200_000 },
    };
  } finally {
    ledger.close();
    if (prevHome === undefined) delete process.env.PROOFLOOP_HOME;
    else process.env.PROOFLOOP_HOME = prevHome;
    rmSync(dir, { recursive: true, force: true });
  }
}

const VERIFY_ONCE = '--verify-once';

/** Runs this module (or the bench bundle) again in a new process that only verifies `file`. */
function verifyInFreshProcess(file: string): { ms: number; cpu_ms: number } {
  const r = spawnSync(process.execPath, [...process.execArgv, process.argv[1]!, VERIFY_ONCE, file], {
    encoding: 'utf8',
    env: process.env,
  });
  const line = r.stdout.trim().split('\n').at(-1) ?? '';
  if (r.status !== 0 || !line.startsWith('{')) throw new Error(`verify in a new process failed: ${r.stderr}`);
  return JSON.parse(line) as { ms: number; cpu_ms: number };
}

/** The child's side of verifyInFreshProcess: one verify, its wall and CPU time as JSON. */
export async function verifyOnceFromArgv(): Promise<boolean> {
  const i = process.argv.indexOf(VERIFY_ONCE);
  if (i < 0) return false;
  const { value: v, ms, cpu } = await timedAsync(() => verifyBundle(process.argv[i + 1]!));
  if (!v.ok) throw new Error(`bench bundle does not verify: ${v.first_failure?.reason}`);
  process.stdout.write(JSON.stringify({ ms: Math.round(ms), cpu_ms: Math.round(cpu) }) + '\n');
  return true;
}

if (isMain('bundle') && !process.argv.includes(VERIFY_ONCE)) {
  benchBundle().then(
    (r) => process.stdout.write(JSON.stringify(r, null, 2) + '\n'),
    (e: unknown) => {
      process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
      process.exitCode = 1;
    },
  );
}

if (isMain('bundle') && process.argv.includes(VERIFY_ONCE)) {
  verifyOnceFromArgv().catch((e: unknown) => {
    process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
    process.exitCode = 1;
  });
}
