import { createHash } from 'node:crypto';
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeClaudeSession } from '../../bench/gen-claude';
import { ProofloopService } from '../../electron/service/service';
import { assertBuilt, pl } from './helpers/built-cli';

/**
 * Lines of many MB (issue 13, Build 6): a Claude Code session with a pasted 5 MB screenshot, a
 * 5 MB tool output, and a 5 MB tool output with credentials in it, opened by the built CLI. Each
 * large value is stored as an artifact beside the foreign folder's ledger (never in the folder),
 * redacted first; its event keeps a bounded excerpt with a note, and `source.artifacts` names
 * the path, digest and size; `proofloop artifact` and `artifact.read` give the value back whole;
 * the run verifies and exports as a bundle that verifies.
 */
const MB5 = 5 << 20;
const GITHUB = 'ghp_R8mX2qLw9TzK4vNb7YcP1sDf6GhJ3aE0uQ5i';
const AWS = 'AKIAQ7R4M2XJ8WZ3KD5T';
const SESSION = 'big-lines-session';
let root: string;
let folder: string;
let home: string;
let file: string;
/** The planted value as the file has it. */
let planted: string;

interface Ev {
  seq: number;
  kind: string;
  payload: Record<string, unknown>;
  redacted?: boolean;
  source?: { line: number; artifacts?: { path: (string | number)[]; digest: string; bytes: number }[] };
}

const at = (v: unknown, p: (string | number)[]): unknown =>
  p.reduce<unknown>((o, k) => (o as Record<string | number, unknown>)[k], v);
const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

beforeAll(() => {
  assertBuilt();
  root = mkdtempSync(path.join(tmpdir(), 'pl-big-lines-'));
  folder = path.join(root, 'projects');
  home = path.join(root, 'home');
  file = path.join(folder, '-home-dev-big', `${SESSION}.jsonl`);
  // Turn 2: a pasted 5 MB image; turn 4: a 5 MB tool output.
  writeClaudeSession(file, {
    sessionId: SESSION,
    cwd: '/home/dev/big',
    turns: 4,
    bigEvery: 2,
    bigSizes: [MB5],
    seed: 4,
  });
  const filler = 'x'.repeat(1 << 20);
  planted = `token ${GITHUB} at the start\n${filler.repeat(3)}and ${AWS} in the middle\n${filler.repeat(2)}`;
  appendFileSync(
    file,
    JSON.stringify({
      parentUuid: null,
      isSidechain: false,
      userType: 'external',
      cwd: '/home/dev/big',
      sessionId: SESSION,
      version: '2.1.38',
      type: 'user',
      message: {
        role: 'user',
        content: [{ tool_use_id: 'toolu_planted', type: 'tool_result', content: planted, is_error: false }],
      },
      uuid: '7d1f0c3a-0000-4000-a000-000000000001',
      timestamp: '2026-02-10T10:00:00.000Z',
    }) + '\n',
  );
});
afterAll(() => {
  if (!process.env.PROOFLOOP_KEEP_TMP) rmSync(root, { recursive: true, force: true });
});

function ledgerDir(): string {
  const dirs = readdirSync(path.join(home, 'folders'));
  expect(dirs).toHaveLength(1);
  return path.join(home, 'folders', dirs[0]!);
}

describe('lines of many MB', () => {
  it('stores each large value as a redacted artifact beside the ledger, with a bounded excerpt in its event', async () => {
    const env = { PROOFLOOP_HOME: home };
    const open = await pl(['--json', 'open', folder], env);
    expect(open.code, open.stderr).toBe(0);
    // Nothing written into the other program's folder.
    expect(readdirSync(folder, { recursive: true }).sort()).toEqual([
      '-home-dev-big',
      `-home-dev-big/${SESSION}.jsonl`,
    ]);

    const listed = await pl(['--folder', folder, '--json', 'events', SESSION], env);
    expect(listed.code, listed.stderr).toBe(0);
    const lines = listed.stdout.split('\n').filter(Boolean);
    // No event carries MBs: the largest is far under the 5 MB values.
    const longest = Math.max(...lines.map((l) => l.length));
    expect(longest).toBeLessThan(64 << 10);
    const events = lines.map((l) => JSON.parse(l) as Ev);
    const moved = events.filter((e) => e.source?.artifacts);
    // One value each; the pasted image's line has two content blocks, so two events, each
    // naming the same artifact (stored once).
    expect(moved.map((e) => e.source!.artifacts!.length)).toEqual([1, 1, 1, 1]);
    expect(moved.map((e) => e.source!.line)).toEqual([
      moved[0]!.source!.line,
      moved[0]!.source!.line,
      moved[2]!.source!.line,
      moved[3]!.source!.line,
    ]);

    const dir = ledgerDir();
    for (const e of moved) {
      const m = e.source!.artifacts![0]!;
      // The event says it was changed from the line (its original digest is kept) …
      expect(e.redacted).toBe(true);
      // … and the value left in the payload is its first bytes and a note naming the artifact.
      const left = at(e.payload, m.path);
      expect(typeof left).toBe('string');
      expect(left as string).toMatch(
        new RegExp(`…\\[${m.bytes} bytes in all: moved to artifact sha256:${m.digest}\\]$`),
      );
      expect(Buffer.byteLength(left as string)).toBeLessThan(4096);
      // The artifact is beside the ledger, named by the sha256 of what it holds.
      const stored = readFileSync(path.join(dir, 'artifacts', m.digest), 'utf8');
      expect(sha(stored)).toBe(m.digest);
      expect(Buffer.byteLength(stored)).toBe(m.bytes);
      expect((left as string).startsWith(stored.slice(0, 1000))).toBe(true);
      // The CLI prints it whole.
      const art = await pl(['--folder', folder, 'artifact', SESSION, m.digest], env);
      expect(art.code, art.stderr).toBe(0);
      expect(art.stdout).toBe(stored);
    }
    const [image, , output, secret] = moved;
    expect(image!.kind).toBe('user_prompted');
    expect(image!.source!.artifacts![0]!.path.slice(-2)).toEqual(['source', 'data']);
    expect(output!.kind).toBe('tool_returned');
    expect(output!.source!.artifacts![0]!.bytes).toBe(MB5);
    expect(secret!.kind).toBe('tool_returned');

    // Redacted before it was stored: the secrets are in neither the artifact, the excerpt nor the ledger.
    const secretArt = readFileSync(
      path.join(dir, 'artifacts', secret!.source!.artifacts![0]!.digest),
      'utf8',
    );
    expect(secretArt).not.toContain(GITHUB);
    expect(secretArt).not.toContain(AWS);
    expect(secretArt).toMatch(/\[REDACTED:[^\]]+\] at the start/);
    expect(secretArt).toMatch(/\[REDACTED:[^\]]+\] in the middle/);
    expect(JSON.stringify(secret!.payload)).not.toContain(GITHUB);
    for (const f of readdirSync(dir)) {
      if (!statSync(path.join(dir, f)).isFile()) continue;
      const bytes = readFileSync(path.join(dir, f)).toString('latin1');
      expect(bytes.includes(GITHUB) || bytes.includes(AWS), `a secret in ${f}`).toBe(false);
    }
    for (const f of readdirSync(path.join(dir, 'artifacts'))) {
      const text = readFileSync(path.join(dir, 'artifacts', f), 'utf8');
      expect(text.includes(GITHUB) || text.includes(AWS), `a secret in artifact ${f}`).toBe(false);
    }
    // The ledger holds excerpts, not 15 MB of values.
    expect(statSync(path.join(dir, 'ledger.db')).size).toBeLessThan(4 << 20);

    // The seal covers the lines as written: the run verifies, and exports as a bundle that verifies.
    const verify = await pl(['--folder', folder, 'verify', SESSION], env);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    const bundle = path.join(root, 'big.zip');
    const exp = await pl(['--folder', folder, 'export', SESSION, '--out', bundle], env);
    expect(exp.code, exp.stderr).toBe(0);
    const vb = await pl(['verify-bundle', bundle], env);
    expect(vb.code, vb.stdout + vb.stderr).toBe(0);

    // Through the API too: artifact.read reads an imported run's artifact from beside the ledger.
    const was = process.env.PROOFLOOP_HOME;
    process.env.PROOFLOOP_HOME = home;
    const svc = new ProofloopService();
    try {
      await svc.openFolder(folder);
      const m = output!.source!.artifacts![0]!;
      const r = await svc.invoke('artifact.read', { run_id: SESSION, digest: m.digest });
      expect(r.bytes).toBe(MB5);
      expect(r.digest).toBe(m.digest);
      const ev = await svc.invoke('events.read', { run_id: SESSION, from: output!.seq, to: output!.seq });
      expect(ev.events[0]!.source?.artifacts).toEqual(output!.source!.artifacts);
    } finally {
      await svc.closeFolder();
      if (was === undefined) delete process.env.PROOFLOOP_HOME;
      else process.env.PROOFLOOP_HOME = was;
    }
  }, 180_000);
  it('moves large values of lines parsed in the worker threads too (a file over 8 MiB of ordinary lines)', async () => {
    const big = path.join(root, 'many-lines');
    const session = 'worker-parsed-session';
    const f = path.join(big, '-home-dev-w', `${session}.jsonl`);
    // Values of 200 KB: over the 64 KiB bound, in blocks far under the 2 MiB parsed in the main thread.
    writeClaudeSession(f, {
      sessionId: session,
      cwd: '/home/dev/w',
      turns: 900,
      bigEvery: 100,
      bigSizes: [200_000],
      seed: 9,
    });
    expect(statSync(f).size).toBeGreaterThan(8 << 20);
    const env = { PROOFLOOP_HOME: path.join(root, 'home-w') };
    const open = await pl(['--json', 'open', big], env);
    expect(open.code, open.stderr).toBe(0);
    const listed = await pl(['--folder', big, '--json', 'events', session], env);
    const events = listed.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Ev);
    const moved = events.filter((e) => e.source?.artifacts);
    expect(moved.length).toBeGreaterThanOrEqual(9);
    expect(Math.max(...listed.stdout.split('\n').map((l) => l.length))).toBeLessThan(64 << 10);
  }, 180_000);
  it('gives one ledger whether its long lines are parsed in their worker, in the main thread, or there after that worker fails', async () => {
    // Over 8 MiB: the parallel path, whose long lines go to a worker of their own.
    expect(statSync(file).size).toBeGreaterThan(8 << 20);
    const ledgerOf = async (tag: string, extra: NodeJS.ProcessEnv) => {
      const h = path.join(root, `home-${tag}`);
      const open = await pl(['--json', 'open', folder], { PROOFLOOP_HOME: h, ...extra });
      expect(open.code, open.stderr).toBe(0);
      const dirs = readdirSync(path.join(h, 'folders'));
      const dir = path.join(h, 'folders', dirs[0]!);
      const db = new Database(path.join(dir, 'ledger.db'), { readonly: true });
      try {
        return {
          stderr: open.stderr,
          events: db.prepare('SELECT * FROM events ORDER BY id').all(),
          findings: db.prepare('SELECT code, line, seq, message FROM findings ORDER BY id').all(),
          runs: db.prepare('SELECT run_id, head_hash, meta FROM runs ORDER BY run_id').all(),
          artifacts: readdirSync(path.join(dir, 'artifacts'))
            .sort()
            .map((f) => [f, sha(readFileSync(path.join(dir, 'artifacts', f), 'utf8'))]),
        };
      } finally {
        db.close();
      }
    };
    const inWorkers = await ledgerOf('workers', {});
    const here = await ledgerOf('main-thread', { PROOFLOOP_INGEST_WORKERS: '0' });
    // A heap far smaller than one 5 MB line needs: the worker runs out of it on the first one.
    const failed = await ledgerOf('worker-fails', { PROOFLOOP_INGEST_HUGE_HEAP_MB: '4' });
    expect(inWorkers.stderr).toBe('');
    expect(failed.stderr).toMatch(/a parse worker failed .*parsed in the main thread/);
    expect(inWorkers.events.length).toBeGreaterThan(30);
    expect(inWorkers.artifacts.length).toBeGreaterThanOrEqual(2);
    // Each artifact holds what its name says.
    for (const [name, digest] of inWorkers.artifacts) expect(digest).toBe(name);
    for (const other of [here, failed]) {
      expect(other.events).toEqual(inWorkers.events);
      expect(other.findings).toEqual(inWorkers.findings);
      expect(other.runs).toEqual(inWorkers.runs);
      expect(other.artifacts).toEqual(inWorkers.artifacts);
    }
  }, 180_000);
});
