// Bench of issue 26: the ledger on PostgreSQL beside the embedded SQLite one, in one run, through
// the one interface (LedgerEngine): batched appends (10,000 a transaction), single appends, state
// at seq on a long run, and the inspector's first rows (connect, runs list, first page of events).
// The two engines take turns (a batch each, a lookup each), so both see the same load of a shared
// machine; besides wall time, the CPU an event costs is measured (this process, all its threads;
// the server, every process of the cluster), which the load of other sessions does not inflate.
// A throwaway cluster (initdb, loopback, fsync and synchronous_commit on, as a server keeps them;
// shared_buffers 512MB where the tests' clusters keep 64MB: a server is given memory).
// Run alone: `npx tsx bench/team-ledger.ts`; PL_BENCH_TEAM_EVENTS=200000 for a quicker look.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { NewEvent } from '../shared/protocol';
import type { EngineWriter, LedgerEngine } from '../electron/ledger/engine';
import { SqliteEngine } from '../electron/ledger/sqlite-engine';
import { PostgresEngine } from '../electron/ledger/postgres/engine';
import { pgUnavailable, startCluster, type PgCluster } from '../test/support/pg-cluster';
import { syntheticRun } from './state';
import { isMain } from './is-main';
import { dict } from '../shared/dict.js';

const GOALS = { batched_events_per_s: 50_000, state_p99_ms: 10, first_rows_ms: 1000 };
const BATCH = 10_000;

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return +s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!.toFixed(2);
}

/** CPU ms of this process, all threads (the SQLite engine's append helper included). */
function selfCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** CPU ms of the whole cluster: the postmaster and every process it started (backends, WAL writer, checkpointer). */
function clusterCpuMs(postmaster: number): number {
  const tick = 10; // ms a clock tick (USER_HZ 100 on Linux)
  let ms = 0;
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${d}/stat`, 'utf8');
    } catch {
      continue; // ended meanwhile
    }
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const pid = Number(d);
    if (pid !== postmaster && Number(f[1]) !== postmaster) continue;
    ms += (Number(f[11]) + Number(f[12])) * tick;
  }
  return ms;
}

interface Side {
  name: 'sqlite' | 'postgres';
  engine: LedgerEngine;
  open: () => Promise<LedgerEngine>;
  serverCpu: () => number;
  wall: number;
  cpu: number;
  server: number;
  lat: number[];
}

async function timed<T>(s: Side, fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  // The server's reading (a scan of /proc) is taken outside the window this process's CPU and the
  // wall time are measured in.
  const s0 = s.serverCpu();
  const c0 = selfCpuMs();
  const t0 = performance.now();
  const value = await fn();
  const ms = performance.now() - t0;
  s.wall += ms;
  s.cpu += selfCpuMs() - c0;
  s.server += s.serverCpu() - s0;
  return { ms, value };
}

const reset = (s: Side) => {
  s.wall = 0;
  s.cpu = 0;
  s.server = 0;
  s.lat = [];
};

async function figures(sides: Side[], events: number, singles: number) {
  const out: Record<string, Record<string, unknown>> = dict();
  for (const s of sides) out[s.name] = dict();
  const perEvent = (ms: number, n: number) => +((ms * 1000) / n).toFixed(1);

  // Batched: the long run, 10,000 events a transaction, the engines in turn on the same batches.
  const writers = new Map<Side, EngineWriter>();
  for (const s of sides) writers.set(s, await s.engine.writer('long', { create: {} }));
  sides.forEach(reset);
  let batch: NewEvent[] = [];
  const flush = async () => {
    for (const s of sides) await timed(s, () => writers.get(s)!.appendBatch(batch));
    batch = [];
  };
  for (const item of syntheticRun(events, 7)) {
    batch.push(item);
    if (batch.length === BATCH) await flush();
  }
  if (batch.length) await flush();
  for (const s of sides) {
    await writers.get(s)!.close();
    const cpu = perEvent(s.cpu, events);
    const server = perEvent(s.server, events);
    out[s.name]!.batched = {
      events,
      per_transaction: BATCH,
      events_per_s: Math.round(events / (s.wall / 1000)),
      cpu_us_per_event: { here: cpu, server },
      // What the CPU alone allows when this process and the server run one after the other on free cores.
      cpu_bound_events_per_s: Math.round(1e6 / (cpu + server)),
    };
  }

  // Where `serve --ledger` starts following (service/follow.ts): at the feed's end, by feedEnd,
  // against reading the ledger's past page by page to reach it, as it did before.
  for (const s of sides) {
    let t = performance.now();
    let cursor = '';
    let pages = 0;
    for (;;) {
      const p = await s.engine.feed(cursor);
      cursor = p.cursor;
      pages += 1;
      if (p.events.length === 0) break;
    }
    const paged = performance.now() - t;
    t = performance.now();
    const end = await s.engine.feedEnd();
    out[s.name]!.follow_start = {
      paged_ms: Math.round(paged),
      pages,
      feed_end_ms: +(performance.now() - t).toFixed(1),
      same_cursor: end === cursor,
    };
  }

  // Single appends: one event a transaction, one after another, the engines in turn.
  const single = new Map<Side, EngineWriter>();
  for (const s of sides) single.set(s, await s.engine.writer('singles', { create: {} }));
  sides.forEach(reset);
  for (const item of syntheticRun(singles, 9)) {
    for (const s of sides) s.lat.push((await timed(s, () => single.get(s)!.appendBatch([item]))).ms);
  }
  for (const s of sides) {
    await single.get(s)!.close();
    out[s.name]!.single = {
      events: singles,
      events_per_s: Math.round(singles / (s.wall / 1000)),
      p50_ms: pct(s.lat, 50),
      p99_ms: pct(s.lat, 99),
      cpu_us_per_event: { here: perEvent(s.cpu, singles), server: perEvent(s.server, singles) },
    };
  }

  // State at seq: the first lookup past the end stores snapshots on the way (as the app's
  // snapshotter does as a run grows), then random seqs, the engines in turn on the same seqs.
  const warm = new Map<Side, number>();
  for (const s of sides) {
    const t = performance.now();
    await s.engine.stateAt('long', events);
    warm.set(s, (performance.now() - t) / 1000);
  }
  sides.forEach(reset);
  let x = 12345;
  for (let i = 0; i < 200; i++) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    const seq = 1 + (x % events);
    for (const s of sides) s.lat.push((await timed(s, () => s.engine.stateAt('long', seq))).ms);
  }
  for (const s of sides) {
    out[s.name]!.state_at_seq = {
      events,
      lookups: s.lat.length,
      p50_ms: pct(s.lat, 50),
      p99_ms: pct(s.lat, 99),
      max_ms: pct(s.lat, 100),
      cpu_ms_per_lookup: {
        here: +(s.cpu / s.lat.length).toFixed(2),
        server: +(s.server / s.lat.length).toFixed(2),
      },
      snapshots_built_s: +warm.get(s)!.toFixed(1),
    };
  }

  // First rows: a new connection, the runs list, the first page of the long run; 5 times each, in turn.
  sides.forEach(reset);
  for (let i = 0; i < 5; i++) {
    for (const s of sides) {
      const t = performance.now();
      const f = await s.open();
      await f.runs();
      await f.read('long', { from: 1, limit: 200 });
      s.lat.push(performance.now() - t);
      await f.close();
    }
  }
  for (const s of sides) out[s.name]!.first_rows_ms = { p50: pct(s.lat, 50), max: pct(s.lat, 100) };
  return out;
}

export async function benchTeamLedger(): Promise<Record<string, unknown>> {
  const events = Number(process.env.PL_BENCH_TEAM_EVENTS ?? 1_000_000);
  const singles = Number(process.env.PL_BENCH_TEAM_SINGLES ?? 2000);
  const dir = mkdtempSync(join(tmpdir(), 'pl-bench-team-'));
  const result: Record<string, unknown> = { goals: GOALS };
  const folder = join(dir, 'runs');
  const sqlite: Side = {
    name: 'sqlite',
    engine: new SqliteEngine(folder),
    open: () => Promise.resolve(new SqliteEngine(folder)),
    serverCpu: () => 0,
    wall: 0,
    cpu: 0,
    server: 0,
    lat: [],
  };
  let cluster: PgCluster | null = null;
  try {
    const sides: Side[] = [sqlite];
    const why = pgUnavailable();
    if (why) {
      result.postgres = { skipped: why };
    } else {
      cluster = await startCluster({ conf: ['shared_buffers = 512MB', 'max_wal_size = 4GB'] });
      const c = cluster;
      const admin = new pg.Client(c.url());
      await admin.connect();
      await admin.query('CREATE DATABASE bench');
      await admin.end();
      const postmaster = c.pid();
      sides.push({
        name: 'postgres',
        engine: await PostgresEngine.connect(c.url('bench')),
        open: () => PostgresEngine.connect(c.url('bench')),
        serverCpu: () => clusterCpuMs(postmaster),
        wall: 0,
        cpu: 0,
        server: 0,
        lat: [],
      });
    }
    try {
      Object.assign(result, await figures(sides, events, singles));
    } finally {
      for (const s of sides) await s.engine.close();
    }
    const p = result.postgres as Record<string, { events_per_s?: number; p99_ms?: number; p50?: number }>;
    if (p && !('skipped' in p)) {
      result.goal_ok = {
        batched: p.batched!.events_per_s! >= GOALS.batched_events_per_s,
        state_p99: p.state_at_seq!.p99_ms! <= GOALS.state_p99_ms,
        first_rows: (p.first_rows_ms as { max: number }).max <= GOALS.first_rows_ms,
      };
    }
  } finally {
    cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return result;
}

if (isMain('team-ledger')) {
  benchTeamLedger().then(
    (r) => console.log(JSON.stringify(r, null, 2)),
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
