/**
 * Import and append throughput (issue 2). Runnable alone: `npx tsx bench/ingest.ts [events]`.
 * - parse: a bare read + line split + JSON.parse of the generated file (the ceiling);
 * - import: `ingestFolder` of that file into a fresh folder (validation, redaction, digests, chain
 *   check, inserts and indexes included);
 * - single: durable appends, one transaction each, beside two ceilings on the same disk: a bare
 *   write + fdatasync, and bare SQLite single-row commits; batched: appendBatch of 10,000.
 * Goals: import ≥ 200,000 events/s and ≥ 30% of parse; single ≥ 5,000/s; batched ≥ 200,000/s.
 * cpu_us_per_event is the process's CPU time (all threads) per event: on cores shared with other
 * work, wall-time rates swing from run to run while it stays steadier.
 */
import {
  mkdtempSync,
  rmSync,
  mkdirSync,
  openSync,
  writeSync,
  closeSync,
  statSync,
  fdatasyncSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import Database from 'better-sqlite3';
import path from 'node:path';
import { ZERO_HASH, type LedgerEvent, toJsonLine } from '../shared/protocol';
import { Ledger } from '../electron/ledger';
import { ingestFolder } from '../electron/ingest';
import { digestEvent as fastDigest, linkHash as link } from '../electron/crypto';
import { readBlocks } from '../electron/ingest/lines';
import { isMain } from './is-main';

const hex = (n: number) => n.toString(16).padStart(64, '0');

/** A realistic mix: a run_started, then cycles of propose → allow → invoke → return → respond … */
export function payloadFor(kind: string, i: number): Record<string, unknown> {
  const call = `call-${i >> 3}`;
  switch (kind) {
    case 'run_started':
      return {
        task_id: 'fix-discount',
        goal: 'fix the discount calculation',
        agent: { name: 'sim', variant: 'clean', seed: 7 },
        mode: 'live',
      };
    case 'model_proposed':
      return {
        call_id: call,
        tool: 'read_file',
        args: { path: `src/price_${i % 17}.py` },
        tokens: 120 + (i % 50),
      };
    case 'action_allowed':
      return { call_id: call, rule: 'read_file:src/**', reason: 'inside the workspace' };
    case 'tool_invoked':
      return { call_id: call, tool: 'read_file', args: { path: `src/price_${i % 17}.py` } };
    case 'tool_returned':
      return {
        call_id: call,
        status: 'ok',
        duration_ms: i % 97,
        excerpt: 'def price(x):\n    return x * 0.9\n',
        digest: hex(i),
        bytes: 812,
      };
    case 'model_responded':
      return { content: `Step ${i}: the discount is applied twice; patching price().`, tokens: 64 };
    case 'context_updated':
      return { op: 'append', tokens_before: 1000 + i, tokens_after: 1064 + i };
    case 'file_changed':
      return {
        path: 'src/price.py',
        before: hex(i + 1),
        after: hex(i + 2),
        patch: '@@ -1 +1 @@\n-x * 0.9 * 0.9\n+x * 0.9',
      };
    case 'judge_verdict':
      return { passed: i % 2 === 0, tests_passed: 11, tests_failed: i % 2, command: 'pytest -q' };
    default:
      return { outcome: 'passed' };
  }
}
const CYCLE = [
  'model_proposed',
  'action_allowed',
  'tool_invoked',
  'tool_returned',
  'model_responded',
  'context_updated',
  'file_changed',
  'judge_verdict',
];

/** The kind of event `seq` of an `n`-event generated run. */
export const kindAt = (seq: number, n: number): string =>
  seq === 1 ? 'run_started' : seq === n ? 'run_completed' : CYCLE[(seq - 2) % CYCLE.length]!;

/** Writes line(1) … line(n), each with its newline, 10,000 at a time; returns the file's size. */
export function writeLines(file: string, n: number, line: (i: number) => string): number {
  mkdirSync(path.dirname(file), { recursive: true });
  const fd = openSync(file, 'w');
  let buf: string[] = [];
  for (let i = 1; i <= n; i++) {
    buf.push(line(i) + '\n');
    if (buf.length >= 10_000) {
      writeSync(fd, buf.join(''));
      buf = [];
    }
  }
  if (buf.length) writeSync(fd, buf.join(''));
  closeSync(fd);
  return statSync(file).size;
}

export function generateFile(file: string, n: number, runId = 'bench-run'): number {
  let prev = ZERO_HASH;
  const t0 = Date.parse('2026-01-01T00:00:00.000Z');
  return writeLines(file, n, (seq) => {
    const kind = kindAt(seq, n);
    const payload = payloadFor(kind, seq);
    const at = new Date(t0 + seq * 7).toISOString();
    const digest = fastDigest(seq, runId, kind, 1, at, payload);
    const hash = link(prev, digest);
    const e: LedgerEvent = { seq, run_id: runId, kind, v: 1, at, payload, prev, hash };
    prev = hash;
    return toJsonLine(e);
  });
}

async function bareParse(file: string): Promise<number> {
  const dec = new TextDecoder('utf-8');
  let n = 0;
  for await (const b of readBlocks(file, 0)) {
    if (b.t !== 'lines') continue;
    const text = dec.decode(b.buf);
    let from = 0;
    while (from < text.length) {
      const nl = text.indexOf('\n', from);
      JSON.parse(text.slice(from, nl));
      n += 1;
      from = nl + 1;
    }
  }
  return n;
}

const rate = (n: number, ms: number) => Math.round((n / ms) * 1000);

/**
 * SQLite's own ceiling for durable single appends on this disk: one small row per transaction,
 * WAL and synchronous=FULL as the ledger sets them, no ProofLoop code around it.
 */
function bareSqliteCommits(file: string, n: number): number {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(
    'CREATE TABLE e (run_no INTEGER, seq INTEGER, payload TEXT, PRIMARY KEY (run_no, seq)) WITHOUT ROWID',
  );
  const ins = db.prepare('INSERT INTO e VALUES (1, ?, ?)');
  const tx = db.transaction((i: number) => ins.run(i, `{"content":"step ${i}","tokens":12}`));
  const t = performance.now();
  for (let i = 1; i <= n; i++) tx.immediate(i);
  const perS = rate(n, performance.now() - t);
  db.close();
  return perS;
}
/** CPU time of the whole process (all threads) since `from`, in µs: on shared cores a steadier figure than wall time. */
const cpuMicros = (from: NodeJS.CpuUsage) => {
  const c = process.cpuUsage(from);
  return c.user + c.system;
};
const perEvent = (us: number, n: number) => Math.round((us / n) * 100) / 100;

export async function benchIngest(n = 1_000_000) {
  const root = mkdtempSync(path.join(tmpdir(), 'pl-bench-'));
  try {
    const src = path.join(root, 'folder', 'agents', 'bench-run', 'events.jsonl');
    let t = performance.now();
    const bytes = generateFile(src, n);
    const genMs = performance.now() - t;

    t = performance.now();
    const parsed = await bareParse(src);
    const parseMs = performance.now() - t;

    t = performance.now();
    let c0 = process.cpuUsage();
    const ledger = Ledger.open(path.join(root, 'folder'));
    const summary = await ingestFolder(ledger);
    const importMs = performance.now() - t;
    const importCpu = cpuMicros(c0);
    const run = ledger.run('bench-run');
    const findings = ledger.findings().length;
    ledger.close();

    // The disk's ceiling for durable single appends: one 200-byte write + fdatasync each, the
    // least a commit with synchronous=FULL must do, in the same folder.
    const syncFile = path.join(root, 'fsync.bin');
    const fd = openSync(syncFile, 'w');
    const syncs = 1_000;
    t = performance.now();
    for (let i = 0; i < syncs; i++) {
      writeSync(fd, 'x'.repeat(200));
      fdatasyncSync(fd);
    }
    const fsyncPerS = rate(syncs, performance.now() - t);
    closeSync(fd);
    const sqlitePerS = bareSqliteCommits(path.join(root, 'bare.db'), syncs);

    // Appends into a separate ledger.
    const l2 = Ledger.open(path.join(root, 'appends'));
    const single = 3_000;
    const w1 = l2.writer('single');
    t = performance.now();
    for (let i = 0; i < single; i++) w1.append('model_responded', { content: `step ${i}`, tokens: 12 });
    const singleMs = performance.now() - t;
    w1.close();
    // Batched: as appendBatch runs (a 10,000-item batch is prepared in the helper thread), and in
    // one thread (`appendHelper: false`), alternating rounds so both meet the same machine.
    const per = 10_000;
    const items = Array.from({ length: per }, (_, i) => ({
      kind: 'model_responded',
      payload: { content: `step ${i}`, tokens: 12 },
    }));
    const batched = { helper: { ms: 0, cpu: 0, n: 0 }, thread: { ms: 0, cpu: 0, n: 0 } };
    const oneThread = Ledger.open(path.join(root, 'appends-thread'), { appendHelper: false });
    for (let round = 0; round < 10; round++) {
      const side = round % 2 === 0 ? batched.helper : batched.thread;
      const w2 = (round % 2 === 0 ? l2 : oneThread).writer(`batched-${round}`);
      w2.appendBatch(items); // starts the helper thread, as a process's first large append does
      t = performance.now();
      c0 = process.cpuUsage();
      for (let b = 0; b < 7; b++) w2.appendBatch(items);
      side.ms += performance.now() - t;
      side.cpu += cpuMicros(c0);
      side.n += 7 * per;
      w2.close();
    }
    oneThread.close();
    l2.close();

    const importRate = rate(summary.events, importMs);
    const parseRate = rate(parsed, parseMs);
    return {
      events: n,
      file_mb: Math.round((bytes / 1048576) * 10) / 10,
      generate_ms: Math.round(genMs),
      parse: { events_per_s: parseRate, ms: Math.round(parseMs) },
      import: {
        events_per_s: importRate,
        ms: Math.round(importMs),
        imported: summary.events,
        head_seq: run?.head_seq ?? 0,
        findings,
        of_parse: Math.round((importRate / parseRate) * 1000) / 1000,
        cpu_us_per_event: perEvent(importCpu, summary.events),
        goal_ok: importRate >= 200_000 && importRate >= 0.3 * parseRate,
      },
      single_append: {
        per_s: rate(single, singleMs),
        n: single,
        goal_ok: rate(single, singleMs) >= 5_000,
        disk_fdatasync_per_s: fsyncPerS,
        of_disk_ceiling: Number((rate(single, singleMs) / fsyncPerS).toFixed(2)),
        bare_sqlite_commits_per_s: sqlitePerS,
        of_bare_sqlite: Number((rate(single, singleMs) / sqlitePerS).toFixed(2)),
      },
      batched_append: {
        per_s: rate(batched.helper.n, batched.helper.ms),
        n: batched.helper.n,
        cpu_us_per_event: perEvent(batched.helper.cpu, batched.helper.n),
        goal_ok: rate(batched.helper.n, batched.helper.ms) >= 200_000,
        one_thread_per_s: rate(batched.thread.n, batched.thread.ms),
        one_thread_cpu_us_per_event: perEvent(batched.thread.cpu, batched.thread.n),
        of_one_thread: Number((batched.helper.ms > 0 ? batched.thread.ms / batched.helper.ms : 0).toFixed(2)),
      },
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

if (isMain('ingest')) {
  const n = Number(process.argv[2] ?? 1_000_000);
  benchIngest(n).then(
    (r) => console.log(JSON.stringify(r, null, 2)),
    (e) => {
      console.error(e);
      process.exit(1);
    },
  );
}
