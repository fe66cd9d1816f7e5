// Bench of issue 26: the ledger on PostgreSQL beside the embedded SQLite one, in one run, through
// the one interface (LedgerEngine): batched appends (10,000 a transaction), single appends, state
// at seq on a long run, and the inspector's first rows (connect, runs list, first page of events).
// A throwaway cluster (initdb, loopback, fsync and synchronous_commit on, as a server keeps them).
// Run alone: `npx tsx bench/team-ledger.ts`; PL_BENCH_TEAM_EVENTS=200000 for a quicker look.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { NewEvent } from '../shared/protocol';
import type { LedgerEngine } from '../electron/ledger/engine';
import { SqliteEngine } from '../electron/ledger/sqlite-engine';
import { PostgresEngine } from '../electron/ledger/postgres/engine';
import { pgUnavailable, startCluster } from '../test/support/pg-cluster';
import { syntheticRun } from './state';
import { isMain } from './is-main';
import { dict } from '../shared/dict.js';

const GOALS = { batched_events_per_s: 50_000, state_p99_ms: 10, first_rows_ms: 1000 };
const BATCH = 10_000;

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return +s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!.toFixed(2);
}

async function engineFigures(open: () => Promise<LedgerEngine>, events: number, singles: number) {
  const e = await open();
  const out: Record<string, unknown> = dict();
  try {
    // Batched: the long run, 10,000 events a transaction.
    const w = await e.writer('long', { create: {} });
    const gen = syntheticRun(events, 7);
    let batch: NewEvent[] = [];
    let appended = 0;
    const t0 = performance.now();
    for (const item of gen) {
      batch.push(item);
      if (batch.length === BATCH) {
        await w.appendBatch(batch);
        appended += batch.length;
        batch = [];
      }
    }
    if (batch.length) {
      await w.appendBatch(batch);
      appended += batch.length;
    }
    const batchedS = (performance.now() - t0) / 1000;
    await w.close();
    out.batched = { events: appended, per_transaction: BATCH, events_per_s: Math.round(appended / batchedS) };

    // Single appends: one event a transaction, one after another.
    const s = await e.writer('singles', { create: {} });
    const lat: number[] = [];
    const t1 = performance.now();
    for (const item of syntheticRun(singles, 9)) {
      const a = performance.now();
      await s.appendBatch([item]);
      lat.push(performance.now() - a);
    }
    const singleS = (performance.now() - t1) / 1000;
    await s.close();
    out.single = {
      events: singles,
      events_per_s: Math.round(singles / singleS),
      p50_ms: pct(lat, 50),
      p99_ms: pct(lat, 99),
    };

    // State at seq: the first lookup past the end stores snapshots on the way (as the app's
    // snapshotter does as a run grows), then random seqs.
    const tw = performance.now();
    await e.stateAt('long', events);
    const warmS = (performance.now() - tw) / 1000;
    const stateMs: number[] = [];
    let x = 12345;
    for (let i = 0; i < 200; i++) {
      x = (x * 1103515245 + 12345) % 2 ** 31;
      const seq = 1 + (x % events);
      const a = performance.now();
      await e.stateAt('long', seq);
      stateMs.push(performance.now() - a);
    }
    out.state_at_seq = {
      events,
      lookups: stateMs.length,
      p50_ms: pct(stateMs, 50),
      p99_ms: pct(stateMs, 99),
      snapshots_built_s: +warmS.toFixed(1),
    };
  } finally {
    await e.close();
  }
  // First rows: a new connection, the runs list, the first page of the long run.
  const tf = performance.now();
  const f = await open();
  await f.runs();
  await f.read('long', { from: 1, limit: 200 });
  out.first_rows_ms = +(performance.now() - tf).toFixed(1);
  await f.close();
  return out;
}

export async function benchTeamLedger(): Promise<Record<string, unknown>> {
  const events = Number(process.env.PL_BENCH_TEAM_EVENTS ?? 1_000_000);
  const singles = Number(process.env.PL_BENCH_TEAM_SINGLES ?? 2000);
  const dir = mkdtempSync(join(tmpdir(), 'pl-bench-team-'));
  const result: Record<string, unknown> = { goals: GOALS };
  try {
    result.sqlite = await engineFigures(
      () => Promise.resolve(new SqliteEngine(join(dir, 'runs'))),
      events,
      singles,
    );
    const why = pgUnavailable();
    if (why) {
      result.postgres = { skipped: why };
      return result;
    }
    const c = await startCluster();
    try {
      const admin = new pg.Client(c.url());
      await admin.connect();
      await admin.query('CREATE DATABASE bench');
      await admin.end();
      const pgFigures = await engineFigures(() => PostgresEngine.connect(c.url('bench')), events, singles);
      result.postgres = pgFigures;
      const b = pgFigures.batched as { events_per_s: number };
      const st = pgFigures.state_at_seq as { p99_ms: number };
      result.goal_ok = {
        batched: b.events_per_s >= GOALS.batched_events_per_s,
        state_p99: st.p99_ms <= GOALS.state_p99_ms,
        first_rows: (pgFigures.first_rows_ms as number) <= GOALS.first_rows_ms,
      };
    } finally {
      c.stop();
    }
  } finally {
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
