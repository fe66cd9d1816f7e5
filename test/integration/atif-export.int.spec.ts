import { cpSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Ajv2020 from 'ajv/dist/2020';
import { cli, homeForFile } from './helpers/tmp';
import { Ledger } from '../../electron/ledger';
import { ingestFile, ingestFolder } from '../../electron/ingest';
import { stateAt } from '../../electron/state';
import { exportAtif } from '../../electron/bundle/atif';
import { interpret } from '../../shared/formats';
import { canonicalJson } from '../../shared/protocol';

/**
 * Issue 27's ATIF out: a run of any format (ProofLoop's own, with the host's denials; a Claude
 * Code session; a Codex rollout; a SWE-agent trajectory; an OpenHands event stream; an ATIF
 * trajectory) is written as a trajectory.json that Harbor's schema accepts (vendored in
 * test/fixtures/atif-schema/, with the checks Harbor's models make beyond the schema), and read back
 * by ProofLoop's ATIF adapter into the same calls: ids, tools, args, and which have results.
 */
const FIX = path.join(__dirname, '../fixtures');
const SCHEMA = JSON.parse(
  readFileSync(path.join(FIX, 'atif-schema/harbor-atif.schema.json'), 'utf8'),
) as object;
const tmpOf = homeForFile('pl-atif-out-');

type Obj = Record<string, unknown>;

const validate = new Ajv2020({ strict: false, allErrors: true }).compile(SCHEMA);

/** What Harbor's Trajectory and Step validators check beyond the JSON Schema. */
function harborChecks(t: Obj): string[] {
  const out: string[] = [];
  const steps = t.steps as Obj[];
  steps.forEach((s, i) => {
    if (s.step_id !== i + 1) out.push(`steps[${i}].step_id is ${String(s.step_id)}, not ${i + 1}`);
    const ids = new Set(((s.tool_calls as Obj[] | undefined) ?? []).map((c) => c.tool_call_id));
    for (const r of ((s.observation as Obj | undefined)?.results as Obj[] | undefined) ?? [])
      if (r.source_call_id != null && !ids.has(r.source_call_id))
        out.push(`steps[${i}]: source_call_id ${String(r.source_call_id)} names no tool call of its step`);
    if (s.source !== 'agent')
      for (const k of ['model_name', 'reasoning_effort', 'reasoning_content', 'tool_calls', 'metrics'])
        if (s[k] != null) out.push(`steps[${i}]: ${k} on a ${String(s.source)} step`);
    if (typeof s.timestamp === 'string' && Number.isNaN(Date.parse(s.timestamp)))
      out.push(`steps[${i}].timestamp ${s.timestamp} is no ISO 8601 time`);
  });
  return out;
}

let folder: string;
let l: Ledger;
const runs: { run: string; why: string }[] = [];

beforeAll(async () => {
  folder = path.join(tmpOf(), 'runs');
  mkdirSync(folder, { recursive: true });
  cpSync(path.join(FIX, 'swe-agent/new'), path.join(folder, 'swe'), { recursive: true });
  cpSync(path.join(FIX, 'openhands/v0'), path.join(folder, 'oh'), { recursive: true });
  cpSync(
    path.join(FIX, 'atif/hello-world-timeout.trajectory.json'),
    path.join(folder, 'atif/trajectory.json'),
  );
  cpSync(
    path.join(FIX, 'claude-code/projects/-home-marco-projects-spotter/tool_heavy.jsonl'),
    path.join(folder, 'cc/tool_heavy.jsonl'),
  );
  cpSync(
    path.join(
      FIX,
      'codex/sessions/2025/12/10/rollout-2025-12-10T04-55-16-019b04ae-b1c6-7c72-a134-a4c2de66058c.jsonl',
    ),
    path.join(folder, 'codex/rollout-2025-12-10T04-55-16-019b04ae-b1c6-7c72-a134-a4c2de66058c.jsonl'),
  );
  // A run ProofLoop executes itself, whose host denies a forbidden tool (the rogue variant).
  const r = await cli([
    '--folder',
    folder,
    '--json',
    'run',
    'fix-discount',
    '--variant',
    'rogue',
    '--seed',
    '3',
  ]);
  expect(r.stderr).toBe('');
  l = Ledger.open(folder);
  await ingestFolder(l);
  const byFormat = (f: string) => l.runs().find((x) => x.format === f)!.run_id;
  runs.push(
    { run: byFormat('proofloop'), why: 'ProofLoop run with denials' },
    { run: byFormat('claude_code'), why: 'Claude Code session' },
    { run: byFormat('codex'), why: 'Codex rollout' },
    { run: byFormat('swe_agent'), why: 'SWE-agent trajectory' },
    { run: byFormat('openhands'), why: 'OpenHands V0 stream' },
    { run: byFormat('atif'), why: 'ATIF trajectory' },
  );
}, 120_000);
afterAll(() => l?.close());

/** Each call of a run: its id and tool, its args as its view reads them (canonical), whether it ended. */
function callsOf(ledger: Ledger, run: string) {
  const fmt = ledger.run(run)!.format;
  const args = new Map<string, string>();
  for (const e of ledger.iterate(run)) {
    if (e.kind !== 'model_proposed' && e.kind !== 'tool_invoked') continue;
    const v = interpret(fmt, e.kind, e.payload, { seq: e.seq, run_id: run, source: e.source ?? null });
    const p = v ? v.payload : e.payload;
    if (!args.has(String(p.call_id))) args.set(String(p.call_id), canonicalJson(p.args ?? null));
  }
  return stateAt(ledger, run, ledger.run(run)!.head_seq).state.calls.items.map((c) => ({
    call_id: c.call_id,
    tool: c.tool,
    args: args.get(c.call_id),
    result: c.result !== null || c.decision?.allowed === false,
  }));
}

describe('proofloop export <run> --format atif', () => {
  it('writes every run as a trajectory Harbor’s schema accepts, that reads back into the same calls', async () => {
    expect(runs.map((r) => r.run).every(Boolean)).toBe(true);
    for (const { run, why } of runs) {
      const out = path.join(tmpOf(), 'out', `${run.replace(/[^A-Za-z0-9]/g, '_')}`, 'trajectory.json');
      mkdirSync(path.dirname(out), { recursive: true });
      // The credentials profile: the share profile (the default) also rewrites home paths in args.
      const r = exportAtif(l, run, out, { profile: 'credentials' });
      const t = JSON.parse(readFileSync(out, 'utf8')) as Obj;
      expect(validate(t), `${why}: ${JSON.stringify(validate.errors?.slice(0, 3))}`).toBe(true);
      expect(harborChecks(t), why).toEqual([]);
      // Every event is in some step: no event dropped.
      const seqs = (t.steps as Obj[]).flatMap((s) => ((s.extra as Obj).proofloop as { seqs: number[] }).seqs);
      expect(
        seqs.sort((a, b) => a - b),
        why,
      ).toEqual(l.read(run).map((e) => e.seq));
      expect(r.events).toBe(l.run(run)!.head_seq);

      const back = Ledger.open(path.join(tmpOf(), 'back', run.replace(/[^A-Za-z0-9]/g, '_')));
      try {
        await ingestFile(back, out);
        const [imported] = back.runs();
        expect(imported!.format, why).toBe('atif');
        const original = callsOf(l, run);
        expect(original.length, why).toBeGreaterThan(0);
        const got = callsOf(back, imported!.run_id);
        for (const [i, c] of original.entries()) expect(got[i], `${why} call ${i}`).toEqual(c);
        expect(got.length, why).toBe(original.length);
        // The same steps: each step of the file is read as events naming it.
        const pointers = new Set(back.read(imported!.run_id).map((e) => e.source?.ids?.pointer));
        (t.steps as Obj[]).forEach((_, i) =>
          expect(pointers.has(`/steps/${i}`), `${why} step ${i}`).toBe(true),
        );
      } finally {
        back.close();
      }
    }
  });

  it('redacts with the share profile by default: no home path of the session is left', () => {
    const run = runs[1]!.run;
    const out = path.join(tmpOf(), 'share.json');
    const r = exportAtif(l, run, out);
    const text = readFileSync(out, 'utf8');
    expect(JSON.stringify(l.read(run))).toContain('/home/marco/');
    expect(text).not.toContain('/home/marco/');
    expect(r.redacted_values).toBeGreaterThan(0);
    expect(validate(JSON.parse(text))).toBe(true);
  });

  it('keeps the host’s decisions: a denied call says so and why', () => {
    const run = runs[0]!.run;
    const out = path.join(tmpOf(), 'denials.json');
    exportAtif(l, run, out);
    const t = JSON.parse(readFileSync(out, 'utf8')) as Obj;
    const denied = l.read(run).filter((e) => e.kind === 'action_denied');
    expect(denied.length).toBeGreaterThan(0);
    const decisions = (t.steps as Obj[]).flatMap((s) =>
      Object.entries(((s.extra as Obj).proofloop as Obj).calls ?? {}).flatMap(([id, c]) =>
        (c as Obj).decision ? [{ id, decision: ((c as Obj).decision as Obj).decision }] : [],
      ),
    );
    expect(decisions.filter((d) => d.decision === 'denied').map((d) => d.id)).toEqual(
      denied.map((e) => e.payload.call_id),
    );
  });

  it('the CLI writes it, and refuses to overwrite without --force', async () => {
    const out = path.join(tmpOf(), 'cli', 'trajectory.json');
    mkdirSync(path.dirname(out), { recursive: true });
    const run = runs[3]!.run;
    const a = await cli(['--folder', folder, 'export', run, '--format', 'atif', '--out', out]);
    expect([a.code, a.stderr]).toEqual([0, '']);
    expect(
      validate(JSON.parse(readFileSync(out, 'utf8'))),
      JSON.stringify(validate.errors?.slice(0, 3)),
    ).toBe(true);
    const b = await cli(['--folder', folder, 'export', run, '--format', 'atif', '--out', out]);
    expect(b.code).toBe(2);
    expect(b.stderr).toMatch(/exists: pass --force/);
  });
});
