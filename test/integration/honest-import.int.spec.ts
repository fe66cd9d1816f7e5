import { appendFileSync, cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { Ledger } from '../../electron/ledger';
import { ingestFolder } from '../../electron/ingest';
import { stateAt } from '../../electron/state';
import { ProofloopService } from '../../electron/service/service';
import { assertBuilt, pl } from './helpers/built-cli';
import { perTest } from './helpers/tmp';

const FIX = path.join(__dirname, '../fixtures');
const { folder, later } = perTest();
beforeAll(assertBuilt);

const at = (s: number) => `2026-11-29T08:00:${String(s).padStart(2, '0')}.000Z`;
const line = (seq: number, kind: string, payload: unknown, run = 'honest') =>
  JSON.stringify({ seq, run_id: run, kind, at: at(seq), payload });

function open(dir: string): Ledger {
  const l = Ledger.open(dir);
  later(() => l.close());
  return l;
}

describe('honest import (issue 12)', () => {
  it('an event whose payload fails its schema is stored as written, counted, noted in the state, and leaves no seq_gap', async () => {
    const dir = folder();
    mkdirSync(path.join(dir, 'honest'));
    const lines = [
      line(1, 'run_started', { task_id: 't', goal: 'g', agent: { name: 'a' } }),
      line(2, 'model_proposed', { call_id: 'c1', tool: 'read_file', args: { path: 'a.py' } }),
      line(3, 'action_allowed', { call_id: 'c1' }), // no rule
      line(4, 'model_responded', { text: 'hello' }), // text instead of content
      line(5, 'run_completed', { outcome: 'passed' }),
    ];
    writeFileSync(path.join(dir, 'honest', 'events.jsonl'), lines.join('\n') + '\n');
    const l = open(dir);
    await ingestFolder(l);

    const events = l.read('honest');
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(events[2]!.payload).toEqual({ call_id: 'c1' });
    expect(events[3]!.payload).toEqual({ text: 'hello' });

    const findings = l.findings('honest');
    expect(findings.filter((f) => f.code === 'seq_gap')).toEqual([]);
    const invalid = findings.filter((f) => f.code === 'invalid_event');
    expect(invalid.map((f) => [f.line, f.seq])).toEqual([
      [3, 3],
      [4, 4],
    ]);
    expect(invalid[0]!.message).toMatch(/rule/);
    expect(invalid[1]!.message).toMatch(/content/);

    // Counted: the runs list and the state's counts hold all five.
    const svc = new ProofloopService();
    later(() => svc.closeFolder());
    await svc.openFolder(dir);
    const run = (await svc.invoke('runs.list', {})).find((r) => r.run_id === 'honest');
    expect(run).toMatchObject({ event_count: 5, head_seq: 5, findings: 2 });
    const { state } = stateAt(l, 'honest', 5, { full: true });
    expect(state.counts).toMatchObject({ action_allowed: 1, model_responded: 1, run_completed: 1 });
    const notes = state.notes.items.filter((n) => n.code === 'invalid_payload');
    expect(notes.map((n) => [n.seq, n.kind])).toEqual([
      [3, 'action_allowed'],
      [4, 'model_responded'],
    ]);
    // Folded as far as it makes sense, as contradictions are (evolve.ts): allowed, by no rule.
    expect(state.calls.items[0]!.decision).toMatchObject({ allowed: true, rule: '', seq: 3 });
    expect(state.status).toBe('completed');
  });

  it('a seed-000 import stores each payload exactly as the file has it; the state reads the inferred v1 fields', async () => {
    const dir = folder();
    cpSync(path.join(FIX, 'seed000'), dir, { recursive: true });
    const l = open(dir);
    await ingestFolder(l);
    const file = path.join(dir, 'runs', 'demo-001', 'events.jsonl');
    const written = readFileSync(file, 'utf8')
      .split('\n')
      .filter((t) => t.trim() !== '')
      .map((t) => JSON.parse(t) as { seq: number; kind: string; payload: Record<string, unknown> });
    const events = l.read('demo-001');
    expect(events.map((e) => [e.seq, e.kind])).toEqual(written.map((w) => [w.seq, w.kind]));
    for (const [i, e] of events.entries()) {
      // Key order aside (payloads are stored as canonical JSON), nothing added, nothing dropped.
      expect(e.payload).toEqual(written[i]!.payload);
      expect(Object.keys(e.payload).sort()).toEqual(Object.keys(written[i]!.payload).sort());
    }
    expect(events[0]!.payload).not.toHaveProperty('agent');
    expect(events[0]!.payload).not.toHaveProperty('task_id');

    // On read, the projection fills what protocol v1 needs and the file lacks.
    const { state } = stateAt(l, 'demo-001', 2, { full: true });
    expect(state.task).toMatchObject({ task_id: 'demo-001', goal: written[0]!.payload.goal });
    expect(state.agent).toMatchObject({ name: 'unknown' });
    expect(state.calls.items[0]).toMatchObject({
      call_id: 'seq-2',
      tool: written[1]!.payload.tool,
      args: { path: written[1]!.payload.path },
    });
  });

  it('`proofloop verify` of a valid file without a final newline is ok, and its last event imports', async () => {
    const dir = folder();
    mkdirSync(path.join(dir, 'nonl'));
    const file = path.join(dir, 'nonl', 'events.jsonl');
    writeFileSync(
      file,
      [
        line(1, 'run_started', { task_id: 't', goal: 'g', agent: { name: 'a' } }, 'nonl'),
        line(2, 'run_completed', { outcome: 'passed' }, 'nonl'),
      ].join('\n'),
    );
    const v = await pl(['--json', 'verify', file]);
    expect(v.code, v.stderr).toBe(0);
    expect(JSON.parse(v.stdout)).toMatchObject({ ok: true, findings: [] });
    const human = await pl(['verify', file]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^ok\s+nonl: 2 events/);
    const l = open(dir);
    await ingestFolder(l);
    expect(l.read('nonl').map((e) => e.seq)).toEqual([1, 2]);
    expect(l.findings('nonl')).toEqual([]);
  });

  it('a cut last line stays truncated_line until its writer completes it', async () => {
    const dir = folder();
    mkdirSync(path.join(dir, 'cut'));
    const file = path.join(dir, 'cut', 'events.jsonl');
    const third = line(3, 'run_completed', { outcome: 'passed' }, 'cut');
    writeFileSync(
      file,
      [
        line(1, 'run_started', { task_id: 't', goal: 'g', agent: { name: 'a' } }, 'cut'),
        line(2, 'model_responded', { content: 'x' }, 'cut'),
        third.slice(0, 30),
      ].join('\n'),
    );
    const l = open(dir);
    const truncated = () => l.findings('cut').filter((f) => f.code === 'truncated_line');
    await ingestFolder(l);
    expect(l.read('cut').map((e) => e.seq)).toEqual([1, 2]);
    expect(truncated().map((f) => [f.line, f.seq])).toEqual([[3, 3]]);
    // Opened again with nothing new: still cut, reported once.
    await ingestFolder(l);
    expect(l.read('cut').map((e) => e.seq)).toEqual([1, 2]);
    expect(truncated()).toHaveLength(1);
    const cutVerify = await pl(['--json', 'verify', file]);
    expect(cutVerify.code).toBe(1);
    expect(
      (JSON.parse(cutVerify.stdout) as { findings: { code: string }[] }).findings.map((f) => f.code),
    ).toEqual(['truncated_line']);

    appendFileSync(file, third.slice(30) + '\n');
    await ingestFolder(l);
    expect(l.read('cut').map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(truncated()).toEqual([]);
    const done = await pl(['verify', file]);
    expect(done.code, done.stdout).toBe(0);
  });
});
