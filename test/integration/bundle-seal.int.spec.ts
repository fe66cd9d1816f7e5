import { createHash } from 'node:crypto';
import { cpSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, pl, stackTraceIn } from './helpers/built-cli';
import { freshDir, readZip, reportContent, writeZip } from './bundle.helpers';

/**
 * Issues 12 and 13: an imported run with no chain of its own (seed 000, seed 004, a Claude Code
 * session) that carries credentials exports, through the built CLI, as a bundle with no credential
 * in it, that verifies, that catches one changed byte, and whose verdict names the import seal.
 */
const FIX = path.join(__dirname, '../fixtures');
beforeAll(assertBuilt);

// Shaped as each detector wants them; random-looking, so no allow-list of examples lets them through.
const AWS = 'AKIAQ7R4M2XJ8WZ3KD5T';
const GITHUB = 'ghp_R8mX2qLw9TzK4vNb7YcP1sDf6GhJ3aE0uQ5i';
const PASSWORD = 'Zr7!vQp2-mountain-Lk9';
const SECRETS = [AWS, GITHUB, PASSWORD];
const planted = (text: string) => `${text} [deploy: aws ${AWS}, token ${GITHUB}, password=${PASSWORD}]`;

/** Every file under `dir`, for the ledger (db, WAL, anything SQLite left beside it). */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name));
}

function secretsIn(bytes: Buffer): string[] {
  return SECRETS.filter((s) => bytes.includes(s));
}

/** Edits lines of a JSONL file as objects (1-based line numbers); the other lines keep their bytes. */
function editLines(file: string, edits: Record<number, (o: Record<string, unknown>) => void>): void {
  const lines = readFileSync(file, 'utf8').split('\n');
  for (const [n, edit] of Object.entries(edits)) {
    const o = JSON.parse(lines[Number(n) - 1]!) as Record<string, unknown>;
    edit(o);
    lines[Number(n) - 1] = JSON.stringify(o);
  }
  writeFileSync(file, lines.join('\n'));
}

interface VerdictJson {
  ok: boolean;
  integrity: string;
  runs: {
    run_id: string;
    integrity: string;
    chain: string;
    seal?: { file: string; ranges: { from: number; to: number; sha256: string }[] };
  }[];
}

async function exportAndCheck(opts: {
  folder: string;
  env: NodeJS.ProcessEnv;
  source: string;
  run: string;
  ledgerDir: string;
}): Promise<void> {
  const { folder, env, source, run } = opts;
  // The planted copy does carry them, so finding none later means something.
  expect(secretsIn(readFileSync(source))).toEqual(SECRETS);
  const opened = await pl(['open', folder], env);
  expect(opened.code, opened.stderr).toBe(0);
  for (const f of filesUnder(opts.ledgerDir))
    expect(secretsIn(readFileSync(f)), `credentials in ${f}`).toEqual([]);

  const out = path.join(freshDir(), 'audit.zip');
  const exp = await pl(['--folder', folder, 'export', run, '--out', out], env);
  expect(exp.code, exp.stderr + exp.stdout).toBe(0);
  expect(stackTraceIn(exp.stderr)).toBeNull();

  const entries = await readZip(out);
  expect([...entries.keys()].some((k) => /^runs\/\d+-.*\/events\.jsonl$/.test(k))).toBe(true);
  for (const [name, bytes] of entries) {
    expect(secretsIn(bytes), `credentials in ${name}`).toEqual([]);
    if (name === 'report.html') {
      // The page carries the events gzipped: look inside too.
      for (const ev of reportContent(bytes.toString('utf8')).events)
        expect(secretsIn(ev), 'credentials in report.html').toEqual([]);
    }
  }

  // It verifies, and says the chain is ProofLoop's, sealed over the source's bytes.
  const sha = createHash('sha256').update(readFileSync(source)).digest('hex');
  const vj = await pl(['--json', 'verify-bundle', out], env);
  expect(vj.code, vj.stdout + vj.stderr).toBe(0);
  const verdict = JSON.parse(vj.stdout) as VerdictJson;
  expect(verdict).toMatchObject({ ok: true, integrity: 'ok' });
  expect(verdict.runs).toHaveLength(1);
  expect(verdict.runs[0]).toMatchObject({ integrity: 'ok', chain: 'import' });
  expect(verdict.runs[0]!.seal!.ranges[0]).toEqual({ from: 0, to: statSync(source).size, sha256: sha });
  const human = await pl(['verify-bundle', out], env);
  expect(human.code).toBe(0);
  expect(human.stdout).toMatch(/CHAIN/);
  expect(human.stdout).toMatch(/sealed at import/);
  expect(human.stdout).toContain(sha);

  // One changed byte inside an events.jsonl entry: caught.
  const name = [...entries.keys()].find((k) => /^runs\/.*\/events\.jsonl$/.test(k))!;
  const bytes = Buffer.from(entries.get(name)!);
  const i = bytes.indexOf('"payload":{') + '"payload":{'.length + 2;
  bytes[i] = bytes[i] === 0x61 ? 0x62 : 0x61;
  const tampered = path.join(path.dirname(out), 'tampered.zip');
  await writeZip(tampered, new Map([...entries, [name, bytes]]));
  const bad = await pl(['--json', 'verify-bundle', tampered], env);
  expect(bad.code, bad.stderr).toBe(1);
  expect(stackTraceIn(bad.stderr)).toBeNull();
  expect(JSON.parse(bad.stdout)).toMatchObject({ ok: false, integrity: 'failed' });
}

describe('export and verify-bundle of imported runs that carry credentials', () => {
  it('seed 000', async () => {
    const folder = freshDir();
    cpSync(path.join(FIX, 'seed000'), folder, { recursive: true });
    const source = path.join(folder, 'runs', 'demo-001', 'events.jsonl');
    editLines(source, {
      1: (o) => ((o.payload as { goal: string }).goal = planted('fix the discount')),
      2: (o) => ((o.payload as { path: string }).path = planted('price.py')),
    });
    await exportAndCheck({
      folder,
      env: { PROOFLOOP_HOME: path.join(folder, 'home') },
      source,
      run: 'demo-001',
      ledgerDir: path.join(folder, '.proofloop'),
    });
  });

  it('seed 004', async () => {
    const folder = freshDir();
    cpSync(path.join(FIX, 'seed004'), folder, { recursive: true });
    const source = path.join(folder, 'data', 'events.jsonl');
    editLines(source, {
      1: (o) => ((o.payload as { task: string }).task = planted('multiply')),
      3: (o) => ((o.payload as { result: string }).result = planted('391')),
    });
    await exportAndCheck({
      folder,
      env: { PROOFLOOP_HOME: path.join(folder, 'home') },
      source,
      run: 'task-demo-001',
      ledgerDir: path.join(folder, '.proofloop'),
    });
  });

  it('a Claude Code session (issue 13), its ledger in PROOFLOOP_HOME', async () => {
    const base = freshDir();
    const home = path.join(base, 'home');
    const projects = path.join(base, 'claude', 'projects');
    const project = '-home-marco-projects-spotter';
    cpSync(path.join(FIX, 'claude-code', 'projects', project), path.join(projects, project), {
      recursive: true,
    });
    const source = path.join(projects, project, 'tool_heavy.jsonl');
    // Line 11 is the result of a Bash call: the credentials turn up in the tool's output.
    editLines(source, {
      11: (o) => {
        const block = (o.message as { content: { type: string; content: unknown }[] }).content[0]!;
        expect(block.type).toBe('tool_result');
        block.content = planted(String(block.content));
      },
    });
    await exportAndCheck({
      folder: projects,
      env: { PROOFLOOP_HOME: home },
      source,
      run: 'tool_heavy',
      ledgerDir: home,
    });
    // Nothing was written into the other program's folder.
    expect(readdirSync(projects)).toEqual([project]);
    expect(readdirSync(path.join(projects, project))).toEqual(['tool_heavy.jsonl']);
  });
});
