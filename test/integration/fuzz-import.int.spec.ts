import { lstatSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, pl, serveOnce, stackTraceIn, type BuiltRun } from './helpers/built-cli';
import {
  FUZZ_CASES,
  VALID_EVENTS,
  VALID_RUN,
  writeValidRun,
  type CaseEvent,
  type FuzzCase,
} from './helpers/fuzz-cases';

/**
 * Issue 12's fuzz list, each case in a folder of its own beside a valid run, through the built CLI
 * in child processes (several at once): `open`, `runs`, `verify` (the case's run, the case's file,
 * the valid run), `events`, `state` and `serve` exit 0 or 1 without a stack trace, the valid run
 * is imported whole, and the case has the finding it deserves and no other.
 */
const CASE_FILE = 'case/events.jsonl';
let root: string;
const timings: { name: string; ms: number }[] = [];

beforeAll(() => {
  assertBuilt();
  root = mkdtempSync(path.join(tmpdir(), 'pl-fuzz-'));
});
afterAll(() => {
  if (!process.env.PROOFLOOP_KEEP_TMP) rmSync(root, { recursive: true, force: true });
  const slow = [...timings].sort((a, b) => b.ms - a.ms).slice(0, 5);
  console.log(
    `fuzz: slowest cases (wall, all commands): ${slow.map((t) => `${t.name} ${Math.round(t.ms)} ms`).join('; ')}`,
  );
});

function clean(what: string, r: BuiltRun | { code: number | null; stdout: string; stderr: string }) {
  expect([0, 1], `${what} exited ${r.code}: ${r.stderr.slice(0, 2000)}`).toContain(r.code);
  const trace = stackTraceIn(r.stderr) ?? stackTraceIn(r.stdout.slice(0, 100_000));
  expect(trace, `${what} printed a stack trace`).toBeNull();
}

interface FindingRow {
  run_id: string | null;
  file: string | null;
  line: number | null;
  seq: number | null;
  code: string;
  message: string;
}

/** What the ledger holds after the commands: every finding, and the valid run's seqs. */
function ledgerOf(folder: string): { findings: FindingRow[]; validSeqs: number[] } {
  const db = new Database(path.join(folder, '.proofloop', 'ledger.db'), { readonly: true });
  try {
    return {
      findings: db
        .prepare('SELECT run_id, file, line, seq, code, message FROM findings')
        .all() as FindingRow[],
      validSeqs: db
        .prepare('SELECT seq FROM events_v WHERE run_id = ? ORDER BY seq')
        .pluck()
        .all(VALID_RUN) as number[],
    };
  } finally {
    db.close();
  }
}

const eventsOf = (r: BuiltRun): CaseEvent[] =>
  r.stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as CaseEvent);

/** Codes a case may have beside the ones it deserves (gzip bytes end without a newline). */
const ALSO: Record<string, string[]> = { 'gzip bytes named events.jsonl': ['truncated_line'] };

async function checkCase(c: FuzzCase, i: number): Promise<void> {
  const t0 = performance.now();
  const base = path.join(root, String(i));
  const folder = path.join(base, 'folder');
  const outside = path.join(base, 'outside');
  mkdirSync(folder, { recursive: true });
  mkdirSync(outside);
  writeValidRun(folder);
  c.write(folder, outside);
  const env = { PROOFLOOP_HOME: path.join(base, 'home') };
  const at = ['--folder', folder];

  clean('open', await pl(['open', folder], env));
  const runsCmd = await pl([...at, '--json', 'runs'], env);
  clean('runs', runsCmd);
  const runs = JSON.parse(runsCmd.stdout) as {
    run_id: string;
    event_count: number;
    head_seq: number;
    findings: number;
    meta: Record<string, unknown>;
  }[];

  // Every other file of the folder is imported: the valid run, whole, with nothing to say.
  const valid = runs.find((r) => r.run_id === VALID_RUN);
  expect(valid, JSON.stringify(runs)).toMatchObject({
    event_count: VALID_EVENTS,
    head_seq: VALID_EVENTS,
    findings: 0,
  });
  const others = runs.filter((r) => r.run_id !== VALID_RUN);
  const caseRun = others[0];
  if (c.run) {
    expect(others, 'the case makes one run').toHaveLength(1);
    if (typeof c.run.id === 'string') expect(caseRun!.run_id).toBe(c.run.id);
    else expect(caseRun!.run_id).toMatch(c.run.id);
    expect(caseRun!.event_count).toBe(c.run.seqs.length);
    // A run stored under another id names the id its digests cover (source_run_id).
    if (c.sourceRunId !== undefined) expect(caseRun!.meta.source_run_id).toBe(c.sourceRunId);
  } else {
    expect(others, 'the case makes no run').toEqual([]);
  }

  const isFile = (() => {
    try {
      return lstatSync(path.join(folder, CASE_FILE)).isFile();
    } catch {
      return false;
    }
  })();
  // `events` and `verify` of the case's run, or of the valid run when the case makes none (a
  // process each costs ~0.5 s of CPU: the valid run's events are read from the ledger below).
  const [verifyFile, events, verify, state, served] = await Promise.all([
    isFile ? pl([...at, 'verify', path.join(folder, CASE_FILE)], env) : null,
    pl([...at, '--json', 'events', caseRun?.run_id ?? VALID_RUN], env),
    pl([...at, 'verify', caseRun?.run_id ?? VALID_RUN], env),
    caseRun ? pl([...at, '--json', 'state', caseRun.run_id, '--at', String(caseRun.head_seq)], env) : null,
    serveOnce(folder, env),
  ]);
  if (verifyFile) clean('verify of the case file', verifyFile);
  clean('events', events);
  clean('verify', verify);
  if (state) clean('state of the case run', state);
  if (caseRun) {
    const es = eventsOf(events);
    expect(es.map((e) => e.seq)).toEqual(c.run!.seqs);
    c.check?.(es);
    // verify agrees with the import: ok exactly when the case deserves no finding (a run stored
    // under another id is checked with the id its digests cover), and so does its bundle.
    expect(verify.code, verify.stdout).toBe(c.findings.length === 0 ? 0 : 1);
    const zip = path.join(base, 'case.zip');
    const exported = await pl([...at, 'export', caseRun.run_id, '--out', zip], env);
    clean('export', exported);
    expect(exported.code, exported.stderr).toBe(0);
    const bundle = await pl(['--json', 'verify-bundle', zip], env);
    clean('verify-bundle', bundle);
    const verdict = JSON.parse(bundle.stdout) as { integrity: string; runs: { events: number }[] };
    // A seq that no line holds is a gap in the bundle too; otherwise its chain verifies.
    const continuous = c.run!.seqs.every((seq, k) => seq === k + 1);
    expect(verdict.integrity, bundle.stdout.slice(0, 2000)).toBe(continuous ? 'ok' : 'failed');
    expect(verdict.runs[0]!.events).toBe(c.run!.seqs.length);
  } else {
    expect(eventsOf(events).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(verify.code, verify.stdout).toBe(0);
  }
  clean('serve', served);
  expect(served.signal, 'serve ends on SIGTERM by itself').toBeNull();
  expect(served.runs, served.stderr).toMatchObject({ ok: true });
  const listed = (served.runs as { value: { run_id: string; event_count: number }[] }).value;
  expect(listed.map((r) => r.run_id).sort()).toEqual(runs.map((r) => r.run_id).sort());

  // The finding it deserves, on the case's file, and no other finding anywhere.
  const { findings: all, validSeqs } = ledgerOf(folder);
  expect(validSeqs).toEqual([1, 2, 3, 4, 5]);
  expect(
    all.filter((f) => f.file !== CASE_FILE),
    'findings outside the case file',
  ).toEqual([]);
  for (const want of c.findings) {
    const hit = all.find(
      (f) =>
        f.code === want.code &&
        (want.line === undefined || f.line === want.line) &&
        (want.seq === undefined || f.seq === want.seq) &&
        (want.message === undefined || want.message.test(f.message)),
    );
    expect(
      hit,
      `${want.code} ${want.line ?? ''} ${want.message ?? ''} in ${JSON.stringify(all, null, 1)}`,
    ).toBeDefined();
  }
  const allowed = new Set([...c.findings.map((f) => f.code), ...(ALSO[c.name] ?? [])]);
  const extra = all.filter((f) => !allowed.has(f.code));
  expect(extra, 'findings the case does not deserve').toEqual([]);
  timings.push({ name: c.name, ms: performance.now() - t0 });
}

describe.concurrent('fuzz: no file stops the folder, every case has its finding', () => {
  FUZZ_CASES.forEach((c, i) => {
    it(c.name, () => checkCase(c, i), 120_000);
  });
});
