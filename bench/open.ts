/**
 * `proofloop open` of a new 1,000,000-event folder as a whole process (issue 12), beside the first
 * seed's reader on the same file in the same run: Python's `json.loads` on each line and a check that
 * seq grows by one, keeping the events as the seed's `load_events` does (bench/seed000-load.py is
 * written here, run with python3). Both formats: ProofLoop's chained JSONL, and seed 000's unchained
 * lines (sealed at import). Each round opens a fresh folder (the generated file hard-linked in);
 * rounds alternate which reader goes first. Goals: ≥ 2× the seed reader's events/s, peak RSS ≤ 300 MB.
 * Runnable alone: `npx tsx bench/open.ts [events]` after `npm run build` (the CLI runs from dist/).
 * PROOFLOOP_BENCH_CPU_PROF=<dir> runs the CLI under `node --cpu-prof` and summarises the profiles.
 */
import { linkSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { generateFile, kindAt, payloadFor, writeLines } from './ingest';
import { figures, runMeasured, type ChildFigures } from './child';
import { cliArgs, cliRoot, profileSummary, repoFile } from './cli';
import { isMain } from './is-main';

export const GOALS = { of_seed_reader: 2, peak_rss_mb: 300 };

/** Seed 000's own lines: `{seq, run_id, kind, at, payload}` as its ledger.py writes them (no v, prev, hash). */
export function generateSeed000File(file: string, n: number, runId = 'seed-run'): number {
  const t0 = Date.parse('2026-01-01T00:00:00.000Z');
  return writeLines(file, n, (seq) => {
    const kind = kindAt(seq, n);
    const at = new Date(t0 + seq * 7).toISOString().replace('Z', '+00:00');
    return JSON.stringify({ seq, run_id: runId, kind, at, payload: payloadFor(kind, seq) });
  });
}

const rate = (n: number, ms: number) => Math.round((n / ms) * 1000);
/** Events per CPU second of the process (all threads): steadier than wall time on shared cores. */
const cpuRate = (n: number, cpuS: number | null) => (cpuS ? Math.round(n / cpuS) : null);

function pythonVersion(): string {
  const r = spawnSync('python3', ['--version'], { encoding: 'utf8' });
  return (r.stdout || r.stderr).trim();
}

interface Round {
  load_average: number;
  proofloop: ChildFigures & {
    events_per_s: number;
    events_per_cpu_s: number | null;
    import_ms: number | null;
    imported: number;
  };
  seed_reader: ChildFigures & {
    events_per_s: number;
    events_per_cpu_s: number | null;
    loop_ms: number;
    loop_events_per_s: number;
    events: number;
  };
}

async function openRound(root: string, src: string, rel: string, n: number, round: number): Promise<Round> {
  const folder = path.join(root, `round-${round}`);
  const file = path.join(folder, rel);
  mkdirSync(path.dirname(file), { recursive: true });
  linkSync(src, file);
  const py = async () => {
    const r = await runMeasured('python3', [repoFile('bench/seed000-load.py'), file]);
    const out = JSON.parse(r.stdout) as { events: number; ms: number };
    if (out.events !== n) throw new Error(`the seed reader read ${out.events} of ${n} events`);
    return {
      ...figures(r),
      events_per_s: rate(n, r.wall_ms),
      events_per_cpu_s: cpuRate(n, r.cpu_s),
      loop_ms: Math.round(out.ms),
      // load_events alone, without Python's start and its freeing of the events at exit.
      loop_events_per_s: rate(n, out.ms),
      events: out.events,
    };
  };
  const pl = async () => {
    const r = await runMeasured(process.execPath, cliArgs(['--json', 'open', folder], `open-${round}`), {
      cwd: cliRoot(),
      env: { ...process.env, PROOFLOOP_HOME: path.join(root, 'home') },
    });
    const info = JSON.parse(r.stdout) as { imported: { events: number } };
    if (info.imported.events !== n)
      throw new Error(`proofloop imported ${info.imported.events} of ${n} events`);
    return {
      ...figures(r),
      events_per_s: rate(n, r.wall_ms),
      events_per_cpu_s: cpuRate(n, r.cpu_s),
      // `open` prints when the import is done; snapshots are built after, before the process ends.
      import_ms: r.first_stdout_ms,
      imported: info.imported.events,
    };
  };
  let seed_reader: Round['seed_reader'];
  let proofloop: Round['proofloop'];
  if (round % 2 === 0) {
    seed_reader = await py();
    proofloop = await pl();
  } else {
    proofloop = await pl();
    seed_reader = await py();
  }
  rmSync(folder, { recursive: true, force: true });
  return { load_average: Number(loadavg()[0]!.toFixed(1)), proofloop, seed_reader };
}

function summarise(rounds: Round[]) {
  const best = <T>(xs: T[], f: (x: T) => number) => Math.max(...xs.map(f));
  const plRate = best(rounds, (r) => r.proofloop.events_per_s);
  const pyRate = best(rounds, (r) => r.seed_reader.events_per_s);
  const ratios = rounds.map((r) =>
    Number((r.proofloop.events_per_s / r.seed_reader.events_per_s).toFixed(2)),
  );
  const peak = Math.max(...rounds.map((r) => r.proofloop.peak_rss_mb));
  return {
    proofloop_events_per_s: rounds.map((r) => r.proofloop.events_per_s),
    seed_reader_events_per_s: rounds.map((r) => r.seed_reader.events_per_s),
    proofloop_events_per_cpu_s: rounds.map((r) => r.proofloop.events_per_cpu_s),
    seed_reader_events_per_cpu_s: rounds.map((r) => r.seed_reader.events_per_cpu_s),
    load_average: rounds.map((r) => r.load_average),
    of_seed_reader: ratios,
    best_of_seed_reader: Number((plRate / pyRate).toFixed(2)),
    proofloop_peak_rss_mb: peak,
    seed_reader_peak_rss_mb: Math.max(...rounds.map((r) => r.seed_reader.peak_rss_mb)),
    goal_ok: {
      of_seed_reader: Math.min(...ratios) >= GOALS.of_seed_reader,
      peak_rss: peak <= GOALS.peak_rss_mb,
    },
    rounds,
  };
}

export async function benchOpen(
  n = Number(process.env.PL_BENCH_OPEN_EVENTS ?? 1_000_000),
  roundsN = Number(process.env.PL_BENCH_OPEN_ROUNDS ?? 1),
) {
  const root = mkdtempSync(path.join(tmpdir(), 'pl-bench-open-'));
  try {
    const out: Record<string, unknown> = { events: n, python: pythonVersion(), goals: GOALS };
    const formats = [
      {
        name: 'proofloop',
        rel: path.join('agents', 'bench-run', 'events.jsonl'),
        gen: (f: string) => generateFile(f, n),
      },
      {
        name: 'seed000',
        rel: path.join('runs', 'seed-run', 'events.jsonl'),
        gen: (f: string) => generateSeed000File(f, n),
      },
    ];
    for (const fmt of formats) {
      const src = path.join(root, 'gen', fmt.name, 'events.jsonl');
      const t = performance.now();
      const bytes = fmt.gen(src);
      const genMs = performance.now() - t;
      const rounds: Round[] = [];
      for (let i = 0; i < roundsN; i++) rounds.push(await openRound(root, src, fmt.rel, n, i));
      out[fmt.name] = {
        file_mb: Math.round(bytes / 104857.6) / 10,
        generate_ms: Math.round(genMs),
        ...summarise(rounds),
      };
      rmSync(path.dirname(src), { recursive: true, force: true });
    }
    const prof = profileSummary('open-');
    if (prof) out.cpu_profile = prof;
    return out;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

if (isMain('open')) {
  const n = Number(process.argv[2] ?? 1_000_000);
  console.log(JSON.stringify(await benchOpen(n), null, 2));
}
