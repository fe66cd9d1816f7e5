import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeClaudeSession } from '../../bench/gen-claude';
import { assertBuilt, BIN, pl, stackTraceIn } from './helpers/built-cli';
import { repoRoot } from './helpers/tmp';
import { ProofloopService } from '../../electron/service/service';

/**
 * `proofloop serve` on a folder holding a session it has not imported yet (issue 13, Build 6):
 * the API answers with the session's run and its first events while the import is still under
 * way; SIGTERM in the middle of the import ends the process cleanly (exit 0, no stack trace), what
 * was committed is consistent (the progress row with its events), and a later open completes the
 * import with every event once, its chain and seal verifying.
 */
let root: string;
let folder: string;
let file: string;
/** What a whole import of the file gives, in a home of its own. */
let whole: ReturnType<typeof ledgerIn>;
let total: number;
const SESSION = 'big-serve-session';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  assertBuilt();
  root = mkdtempSync(path.join(tmpdir(), 'pl-serve-import-'));
  folder = path.join(root, 'projects');
  file = path.join(folder, '-home-dev-big', `${SESSION}.jsonl`);
  // ~24 MB: several seconds of import on this machine, far more than the first commit needs.
  writeClaudeSession(file, {
    sessionId: SESSION,
    cwd: '/home/dev/big',
    bytes: 24 << 20,
    bigEvery: 0,
    seed: 9,
  });
  const refHome = path.join(root, 'home-ref');
  const ref = await pl(['--json', 'open', folder], { PROOFLOOP_HOME: refHome });
  expect(ref.code, ref.stderr).toBe(0);
  whole = ledgerIn(refHome);
  total = whole.seqs.length;
  expect(total).toBeGreaterThan(10_000);
  expect(whole.seqs).toEqual(Array.from({ length: total }, (_, i) => i + 1));
}, 120_000);
afterAll(() => {
  if (!process.env.PROOFLOOP_KEEP_TMP) rmSync(root, { recursive: true, force: true });
});

interface RunRow {
  run_id: string;
  event_count: number;
  head_seq: number;
}

/** The foreign folder's ledger in `home`, read directly. */
function ledgerIn(home: string) {
  const dirs = readdirSync(path.join(home, 'folders'));
  expect(dirs).toHaveLength(1);
  const db = new Database(path.join(home, 'folders', dirs[0]!, 'ledger.db'), { readonly: true });
  try {
    const seqs = db
      .prepare('SELECT seq FROM events_v WHERE run_id = ? ORDER BY seq')
      .pluck()
      .all(SESSION) as number[];
    // The chain: the same hashes as a whole import's mean the same events, in the same order.
    const hashes = db.prepare('SELECT hash FROM events_v WHERE run_id = ? ORDER BY seq').pluck().all(SESSION);
    const imp = db.prepare('SELECT offset, line FROM imports').get() as
      { offset: number; line: number } | undefined;
    const findings = db.prepare('SELECT code, message FROM findings').all();
    return { seqs, hashes, imp, findings };
  } finally {
    db.close();
  }
}

describe('serve while the opening import runs', () => {
  it('answers with the first rows during the import, stops cleanly on SIGTERM, and a reopen completes it', async () => {
    const home = path.join(root, 'home');
    const t0 = performance.now();
    const child = spawn(process.execPath, [BIN, 'serve', folder, '--port', '0', '--otlp-port', '0'], {
      cwd: repoRoot,
      env: { ...process.env, PROOFLOOP_HOME: home },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const closed = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      child.on('close', (code, signal) => resolve({ code, signal })),
    );
    const killer = setTimeout(() => child.kill('SIGKILL'), 100_000);
    try {
      const m = await new Promise<RegExpExecArray>((resolve, reject) => {
        const look = () => {
          const hit = /(http:\/\/127\.0\.0\.1:\d+)\/#token=([\w-]+)/.exec(stdout);
          if (hit) resolve(hit);
        };
        child.stdout.on('data', look);
        void closed.then(() => reject(new Error(`serve ended before printing its URL: ${stderr}`)));
      });
      const urlMs = performance.now() - t0;
      const call = async <T>(method: string, args: unknown): Promise<T> => {
        const r = await fetch(`${m[1]}/api/${method}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-proofloop-token': m[2]! },
          body: JSON.stringify(args),
        });
        const body = (await r.json()) as { ok: boolean; value: T; error?: unknown };
        expect(body.ok, JSON.stringify(body.error)).toBe(true);
        return body.value;
      };

      // The run shows up, with rows, while the import goes on.
      let run: RunRow | undefined;
      while (!run || run.event_count === 0) {
        expect(performance.now() - t0, 'the session run appears within 30 s').toBeLessThan(30_000);
        run = (await call<RunRow[]>('runs.list', {})).find((r) => r.run_id === SESSION);
        if (!run || run.event_count === 0) await new Promise((r) => setTimeout(r, 25));
      }
      const firstRowsMs = performance.now() - t0;
      const first = await call<{ events: { seq: number }[] }>('events.read', {
        run_id: SESSION,
        from: 1,
        to: 20,
      });
      expect(first.events.map((e) => e.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      const during = (await call<RunRow[]>('runs.list', {})).find((r) => r.run_id === SESSION)!;
      expect(during.event_count, 'still importing when the first rows are read').toBeLessThan(total);
      console.log(
        `serve-import: URL after ${Math.round(urlMs)} ms, first rows after ${Math.round(firstRowsMs)} ms, ${during.event_count} of ${total} events then`,
      );

      // Mid-import: more committed since, not all.
      await new Promise((r) => setTimeout(r, 700));
      const before = (await call<RunRow[]>('runs.list', {})).find((r) => r.run_id === SESSION)!;
      expect(before.event_count).toBeLessThan(total);
      const killedAt = performance.now();
      child.kill('SIGTERM');
      const end = await closed;
      // Well inside serve's grace period, after which it would exit whatever still ran.
      expect(performance.now() - killedAt, 'the import stopped at once').toBeLessThan(2500);
      expect(end, stderr).toEqual({ code: 0, signal: null });
      expect(stackTraceIn(stderr), 'serve printed a stack trace').toBeNull();
      expect(stderr).toBe('');
    } finally {
      clearTimeout(killer);
      child.kill('SIGKILL');
    }

    // What was committed is whole: seqs from 1 without a gap, the progress row within the file.
    const cut = ledgerIn(home);
    expect(cut.seqs.length).toBeGreaterThan(0);
    expect(cut.seqs.length, 'SIGTERM came in the middle of the import').toBeLessThan(total);
    expect(cut.seqs).toEqual(Array.from({ length: cut.seqs.length }, (_, i) => i + 1));
    expect(cut.imp!.offset).toBeLessThan(statSync(file).size);
    expect(cut.findings).toEqual([]);

    // Opening again goes on from the stored progress: every event once, as the whole import has it.
    const again = await pl(['--json', 'open', folder], { PROOFLOOP_HOME: home });
    expect(again.code, again.stderr).toBe(0);
    const info = JSON.parse(again.stdout) as { imported: { events: number } };
    expect(info.imported.events).toBe(total - cut.seqs.length);
    const done = ledgerIn(home);
    expect(done.seqs).toEqual(whole.seqs);
    expect(done.hashes).toEqual(whole.hashes);
    expect(done.imp).toEqual(whole.imp);
    expect(done.findings).toEqual([]);
    const verify = await pl(['--folder', folder, 'verify', SESSION], { PROOFLOOP_HOME: home });
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  }, 180_000);

  it('closeFolder stops a background import between commits and waits for it before closing the ledger', async () => {
    const home = path.join(root, 'home-inproc');
    const was = process.env.PROOFLOOP_HOME;
    process.env.PROOFLOOP_HOME = home;
    const said: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((s: string | Uint8Array) => (
      said.push(String(s)),
      true
    )) as typeof process.stderr.write;
    try {
      const svc = new ProofloopService({ watch: true });
      const info = await svc.openFolder(folder, { background: true });
      expect(info.imported.events, 'openFolder returned before importing').toBe(0);
      const ledger = svc.ctx.ledger();
      const count = () =>
        ledger.db.prepare('SELECT COUNT(*) FROM events_v WHERE run_id = ?').pluck().get(SESSION) as number;
      for (let i = 0; count() === 0; i++) {
        expect(i, 'first rows within 30 s').toBeLessThan(1500);
        await sleep(20);
      }
      await sleep(300);
      await svc.closeFolder();
      expect(ledger.db.open, 'closed once the import stopped').toBe(false);
      await svc.opening;
      expect(said, 'nothing said: no error reached the opening import').toEqual([]);
      const cut = ledgerIn(home);
      expect(cut.seqs.length).toBeLessThan(total);
      expect(cut.seqs).toEqual(Array.from({ length: cut.seqs.length }, (_, i) => i + 1));

      // The same service opens it again and, waiting this time, finishes it.
      const again = await svc.openFolder(folder);
      expect(again.imported.events).toBe(total - cut.seqs.length);
      await svc.closeFolder();
      const done = ledgerIn(home);
      expect(done.hashes).toEqual(whole.hashes);
      expect(done.imp).toEqual(whole.imp);
    } finally {
      process.stderr.write = write;
      if (was === undefined) delete process.env.PROOFLOOP_HOME;
      else process.env.PROOFLOOP_HOME = was;
    }
  }, 120_000);

  it('imports and then builds snapshots through a connection of its own, while the serving thread answers', async () => {
    const home = path.join(root, 'home-apart');
    const was = process.env.PROOFLOOP_HOME;
    process.env.PROOFLOOP_HOME = home;
    try {
      const svc = new ProofloopService({ watch: true });
      await svc.openFolder(folder, { background: true });
      const ledger = svc.ctx.ledger();
      // Rows this connection (the serving thread's) has written; the import's worker has its own.
      const mine = ledger.db.prepare('SELECT total_changes()').pluck();
      const count = ledger.db.prepare('SELECT COUNT(*) FROM events_v WHERE run_id = ?').pluck();
      const snapshots = ledger.db.prepare('SELECT COUNT(*) FROM snapshots').pluck();
      const pushes: string[] = [];
      const off = svc.onPush((channel, payload) => {
        if (channel === 'job.progress') pushes.push((payload as { job_id: string }).job_id);
      });
      // Answered again and again while the import goes on, each answer seeing as many rows or more.
      const seen: number[] = [];
      let imported = false;
      void svc.opening.then(() => (imported = true));
      for (let i = 0; !imported; i++) {
        expect(i, 'the import ends within 60 s').toBeLessThan(3000);
        const r = await svc.call('runs.list', {}, 'renderer');
        expect(r.ok).toBe(true);
        const run = (r.ok ? (r.value as RunRow[]) : []).find((x) => x.run_id === SESSION);
        seen.push(run?.event_count ?? 0);
        await sleep(20);
      }
      expect(seen).toEqual([...seen].sort((a, b) => a - b));
      const during = new Set(seen.filter((n) => n > 0 && n < total));
      expect(during.size, 'answers at several points of the import').toBeGreaterThanOrEqual(3);
      expect(count.get(SESSION)).toBe(total);
      // The serving thread made the first commit only (its first rows, their run and progress).
      const wroteHere = mine.get() as number;
      expect(wroteHere).toBeGreaterThan(0);
      expect(wroteHere).toBeLessThan(total / 10);
      // Then the worker builds the snapshots the run lacks, with their progress pushed here.
      for (let i = 0; (snapshots.get() as number) === 0; i++) {
        expect(i, 'snapshots within 60 s').toBeLessThan(3000);
        await sleep(20);
      }
      expect(mine.get(), 'no snapshot written by the serving thread').toBe(wroteHere);
      for (let i = 0; !pushes.includes(`snapshots:${SESSION}`); i++) {
        expect(i, 'snapshot progress pushed').toBeLessThan(3000);
        await sleep(20);
      }
      off();
      await svc.closeFolder();
      // Closing stopped the worker's snapshots too: none are written after it.
      const db = new Database(
        path.join(home, 'folders', readdirSync(path.join(home, 'folders'))[0]!, 'ledger.db'),
        {
          readonly: true,
        },
      );
      try {
        const at = db.prepare('SELECT COUNT(*) FROM snapshots').pluck();
        const then = at.get() as number;
        await sleep(1500);
        expect(at.get()).toBe(then);
      } finally {
        db.close();
      }
    } finally {
      if (was === undefined) delete process.env.PROOFLOOP_HOME;
      else process.env.PROOFLOOP_HOME = was;
    }
  }, 120_000);
});
