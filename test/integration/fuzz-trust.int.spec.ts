import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, assertBuilt, pl, stackTraceIn } from './helpers/built-cli';
import { repoRoot } from './helpers/tmp';
import { VALID_RUN, writeValidRun } from './helpers/fuzz-cases';
import { SAFE_ID, TRUST_CASES, type Expected, type TrustCase, type TrustRun } from './helpers/trust-cases';

/**
 * Issue 24: valid files nobody here wrote must never raise a false alarm nor lose a run. Each case
 * (several variants of one class, in one folder beside a valid run) goes through the built CLI in
 * child processes: `open` (and, for edits, `open` again), `runs`, `verify` of every run and of
 * every file, `events`, `export` + `verify-bundle`, and `serve` (runs.list and events.read over
 * HTTP) must agree: every valid event readable, verify ok on the valid runs, the
 * finding each run deserves and no other. Then one folder holding every case at once: `proofloop
 * verify` of each run exits 0 exactly for the valid ones.
 */
let root: string;

beforeAll(() => {
  assertBuilt();
  root = mkdtempSync(path.join(tmpdir(), 'pl-trust-'));
});
afterAll(() => {
  // rm walks the tree level by level: a path over PATH_MAX is in it (rmSync names it whole).
  if (!process.env.PROOFLOOP_KEEP_TMP) execFileSync('rm', ['-rf', root]);
});

type Out = { code: number | null; stdout: string; stderr: string };
function clean(what: string, r: Out, codes: number[] = [0, 1]) {
  expect(codes, `${what} exited ${r.code}: ${r.stderr.slice(0, 2000)} ${r.stdout.slice(0, 2000)}`).toContain(
    r.code,
  );
  const trace = stackTraceIn(r.stderr) ?? stackTraceIn(r.stdout.slice(0, 100_000));
  expect(trace, `${what} printed a stack trace`).toBeNull();
}

interface RunRow {
  run_id: string;
  origin: string | null;
  event_count: number;
  head_seq: number;
  findings: number;
  meta: { source_run_id?: string } & Record<string, unknown>;
}

interface FindingRow {
  run_id: string | null;
  file: string | null;
  line: number | null;
  code: string;
  message: string;
}

/** `serve`, then API calls over HTTP with its token, then SIGTERM: what each call answered. */
function serveCalls(
  folder: string,
  env: NodeJS.ProcessEnv,
  calls: (runs: RunRow[]) => { method: string; args: unknown }[],
): Promise<{ code: number | null; stdout: string; stderr: string; runs: RunRow[]; answers: unknown[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'serve', folder, '--port', '0', '--otlp-port', '0'], {
      cwd: repoRoot,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let asked = false;
    let runs: RunRow[] = [];
    const answers: unknown[] = [];
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      const m = /(http:\/\/127\.0\.0\.1:\d+)\/#token=([\w-]+)/.exec(stdout);
      if (!m || asked) return;
      asked = true;
      const call = (method: string, args: unknown) =>
        fetch(`${m[1]}/api/${method}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-proofloop-token': m[2]! },
          body: JSON.stringify(args),
        }).then((r) => r.json() as Promise<{ ok: boolean; value?: unknown; error?: unknown }>);
      (async () => {
        const listed = await call('runs.list', {});
        runs = (listed.value ?? []) as RunRow[];
        for (const c of calls(runs)) answers.push(await call(c.method, c.args));
      })()
        .catch((e: Error) => answers.push({ fetch_error: e.message }))
        .finally(() => child.kill('SIGTERM'));
    });
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, runs, answers });
    });
  });
}

function ledgerFindings(folder: string): FindingRow[] {
  const db = new Database(path.join(folder, '.proofloop', 'ledger.db'), { readonly: true });
  try {
    return db.prepare('SELECT run_id, file, line, code, message FROM findings').all() as FindingRow[];
  } finally {
    db.close();
  }
}

const matches = (f: { code: string; line: number | null; message: string }, want: Expected) =>
  f.code === want.code &&
  (want.line === undefined || f.line === want.line) &&
  (want.message === undefined || want.message.test(f.message));

/** The stored run of an expected one: by its file, and the id its source gives it. */
function storedRun(runs: RunRow[], prefix: string, want: TrustRun): RunRow | undefined {
  return runs.find(
    (r) => r.origin === prefix + want.file && (r.meta.source_run_id ?? r.run_id) === want.source,
  );
}

const show = (s: string) => JSON.stringify(s.length > 60 ? `${s.slice(0, 60)}…(${s.length})` : s);

async function checkCase(c: TrustCase, i: number): Promise<void> {
  const base = path.join(root, String(i));
  const folder = path.join(base, 'folder');
  mkdirSync(folder, { recursive: true });
  writeValidRun(folder);
  const dir = path.join(folder, 'case');
  c.write(dir);
  const prefix = 'case/';
  const env = { PROOFLOOP_HOME: path.join(base, 'home') };
  const at = ['--folder', folder];

  clean('open', await pl(['open', folder], env));
  if (c.edit) {
    c.edit(dir);
    clean('open after the edit', await pl(['open', folder], env));
  }
  const runsCmd = await pl([...at, '--json', 'runs'], env);
  clean('runs', runsCmd, [0]);
  const runs = JSON.parse(runsCmd.stdout) as RunRow[];

  // Every run the case's files hold is there, under a safe id that says where it came from.
  const found = new Map<TrustRun, RunRow>();
  for (const want of c.runs) {
    const r = storedRun(runs, prefix, want);
    expect(
      r,
      `no run of ${want.file} for ${show(want.source)} in ${JSON.stringify(runs.map((x) => [x.run_id, x.origin, x.meta.source_run_id]))}`,
    ).toBeDefined();
    expect(r!.run_id).toMatch(SAFE_ID);
    // Stored under another id exactly when it says so.
    expect(r!.meta.source_run_id === undefined, show(r!.run_id)).toBe(r!.run_id === want.source);
    expect(r!.event_count, `${show(want.source)} events`).toBe(want.seqs.length);
    found.set(want, r!);
  }
  expect(new Set([...found.values()]).size, 'one stored run per expected run').toBe(c.runs.length);
  const others = runs.filter((r) => r.run_id !== VALID_RUN && ![...found.values()].includes(r));
  expect(
    others.map((r) => [r.run_id, r.origin]),
    'runs the case does not make',
  ).toEqual([]);

  const ids = [...found.entries()];
  const files = [...new Set(c.runs.map((r) => r.file))];
  const zip = path.join(base, 'case.zip');
  const [verifies, fileVerifies, events, exported] = await Promise.all([
    Promise.all(ids.map(([, r]) => pl([...at, '--json', 'verify', r.run_id], env))),
    Promise.all(files.map((f) => pl([...at, '--json', 'verify', path.join(dir, f)], env))),
    // One run's events through the CLI; every run's through serve below.
    ids.length > 0 ? pl([...at, '--json', 'events', ids[0]![1].run_id], env) : null,
    ids.length > 0 ? pl([...at, 'export', ...ids.map(([, r]) => r.run_id), '--out', zip], env) : null,
  ]);

  // verify of each run: ok exactly when it deserves no finding, and then without a word.
  ids.forEach(([want, r], k) => {
    const v = verifies[k]!;
    clean(`verify ${r.run_id}`, v);
    const report = JSON.parse(v.stdout) as {
      ok: boolean;
      findings: { code: string; line: number | null; message: string }[];
    };
    const deserved = want.findings ?? [];
    expect(report.ok, `verify ${r.run_id} (${show(want.source)}): ${v.stdout.slice(0, 1500)}`).toBe(
      deserved.length === 0,
    );
    expect(v.code).toBe(deserved.length === 0 ? 0 : 1);
    for (const f of report.findings)
      expect(
        deserved.some((d) => matches(f, d)),
        `verify ${r.run_id}: a finding it does not deserve: ${JSON.stringify(f)}`,
      ).toBe(true);
    for (const d of deserved)
      expect(
        report.findings.some((f) => matches(f, d)),
        `verify ${r.run_id} lacks ${d.code} ${d.line ?? ''} ${d.message ?? ''}`,
      ).toBe(true);
  });
  // verify of each file: the file as it is now, ok unless a line of it is itself at fault.
  files.forEach((f, k) => {
    const v = fileVerifies[k]!;
    clean(`verify ${f}`, v);
    const faulty = c.runs.some(
      (r) => r.file === f && (r.findings ?? []).some((x) => x.code !== 'file_rewritten'),
    );
    const edited = c.edit !== undefined && c.runs.some((r) => r.file === f && (r.findings ?? []).length > 0);
    if (!edited) expect(v.code, `verify ${f}: ${v.stdout.slice(0, 1500)}`).toBe(faulty ? 1 : 0);
  });
  if (events) {
    clean('events', events, [0]);
    const seqs = events.stdout
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => (JSON.parse(l) as { seq: number }).seq);
    expect(seqs).toEqual(ids[0]![0].seqs);
  }

  // The bundle of every run: exported, and verified with the id each run's digests cover.
  if (exported) {
    clean('export', exported, [0]);
    const bundle = await pl(['--json', 'verify-bundle', zip], env);
    clean('verify-bundle', bundle);
    const verdict = JSON.parse(bundle.stdout) as {
      integrity: string;
      findings: { run_id: string; seq: number | null; code: string }[];
      runs: { run_id: string; events: number; last_seq: number; integrity: string; completeness: string }[];
    };
    for (const [want, r] of ids) {
      const rv = verdict.runs.find((x) => x.run_id === r.run_id);
      const why = `bundle run ${r.run_id}: ${JSON.stringify(verdict.findings).slice(0, 1500)}`;
      expect(rv?.events, why).toBe(want.seqs.length);
      // Nothing here was altered: the chain holds in every bundle, over lines that are no event too.
      expect(rv?.integrity, why).toBe('ok');
      // A seq the run lacks (a source line too deep to read) is named as such, and only those.
      const last = Math.max(0, ...want.seqs, ...(want.findings ?? []).map((f) => f.line ?? 0));
      const lacking = Array.from({ length: last }, (_, k) => k + 1).filter((s) => !want.seqs.includes(s));
      const named = verdict.findings.filter((f) => f.run_id === r.run_id).map((f) => [f.code, f.seq]);
      expect(named, why).toEqual(lacking.map((s) => ['event_unchecked', s]));
      // (Unsigned, a bundle cannot prove its tail whole: 'unknown' rather than 'ok'.)
      if (lacking.length > 0) expect(rv?.completeness, why).toBe('failed');
      else expect(rv?.completeness, why).not.toBe('failed');
    }
    const manifest = JSON.parse(execFileSync('unzip', ['-p', zip, 'manifest.json']).toString('utf8')) as {
      runs: { run_id: string; source_run_id?: string }[];
    };
    for (const [want, r] of ids) {
      const m = manifest.runs.find((x) => x.run_id === r.run_id);
      expect(m?.source_run_id, `manifest run ${r.run_id}`).toBe(
        r.run_id === want.source ? undefined : want.source,
      );
    }
  }

  // serve: the same runs, every event readable, the same verdicts (the runs list's badge: its
  // findings; run.verify is the CLI's, not the window's).
  const served = await serveCalls(folder, env, () =>
    ids.map(([, r]) => ({ method: 'events.read', args: { run_id: r.run_id } })),
  );
  clean('serve', served);
  expect(served.runs.map((r) => r.run_id).sort()).toEqual(runs.map((r) => r.run_id).sort());
  ids.forEach(([want, r], k) => {
    const read = served.answers[k] as { ok: boolean; value: { events: { seq: number }[] } };
    expect(read.ok, JSON.stringify(read).slice(0, 500)).toBe(true);
    expect(
      read.value.events.map((e) => e.seq),
      `serve events of ${r.run_id}`,
    ).toEqual(want.seqs);
    if (c.check) c.check(want.source, read.value.events as never);
    const listed = served.runs.find((x) => x.run_id === r.run_id);
    expect(listed?.findings === 0, `serve's badge of ${r.run_id}`).toBe((want.findings ?? []).length === 0);
  });

  // The findings the ledger holds: each deserved one, on its run or its file, and no other.
  const all = ledgerFindings(folder);
  const unexplained = all.filter((f) => {
    const run = ids.find(([, r]) => r.run_id === f.run_id);
    if (run) return !(run[0].findings ?? []).some((d) => matches(f, d));
    return !(c.folderFindings ?? []).some((d) => f.file?.startsWith(prefix + d.file) && matches(f, d));
  });
  expect(unexplained, 'findings nobody deserves').toEqual([]);
  for (const d of c.folderFindings ?? [])
    expect(
      all.some((f) => f.run_id === null && f.file?.startsWith(prefix + d.file) && matches(f, d)),
      `the finding on ${d.file}: ${JSON.stringify(all)}`,
    ).toBe(true);
}

describe.concurrent('fuzz (issue 24): no false alarm, no lost run', () => {
  TRUST_CASES.forEach((c, i) => {
    it(c.name, () => checkCase(c, i), 600_000);
  });
});

describe('fuzz (issue 24): one folder holding every case', () => {
  it('proofloop verify of every run exits 0 exactly for the valid ones', async () => {
    const folder = path.join(root, 'all');
    mkdirSync(folder, { recursive: true });
    writeValidRun(folder);
    TRUST_CASES.forEach((c, i) => c.write(path.join(folder, `c${i}`)));
    const env = { PROOFLOOP_HOME: path.join(root, 'all-home') };
    clean('open', await pl(['open', folder], env));
    TRUST_CASES.forEach((c, i) => c.edit?.(path.join(folder, `c${i}`)));
    clean('open after the edits', await pl(['open', folder], env));
    const runs = JSON.parse((await pl(['--folder', folder, '--json', 'runs'], env)).stdout) as RunRow[];
    const expected = TRUST_CASES.flatMap((c, i) => c.runs.map((r) => ({ r, prefix: `c${i}/` })));
    expect(runs).toHaveLength(expected.length + 1);
    const results = await Promise.all(
      expected.map(async ({ r, prefix }) => {
        const stored = storedRun(runs, prefix, r);
        expect(stored, `${prefix}${r.file} ${show(r.source)}`).toBeDefined();
        const v = await pl(['--folder', folder, 'verify', stored!.run_id], env);
        clean(`verify ${stored!.run_id}`, v);
        return {
          id: stored!.run_id,
          code: v.code,
          want: (r.findings ?? []).length === 0 ? 0 : 1,
          out: v.stdout,
        };
      }),
    );
    const wrong = results.filter((x) => x.code !== x.want);
    expect(wrong.map((x) => `${x.id}: exit ${x.code}, want ${x.want}: ${x.out.slice(0, 300)}`)).toEqual([]);
  }, 900_000);
});
