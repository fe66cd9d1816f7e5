import { cpSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { homeForFile } from './helpers/tmp';
import { Ledger, digestRunIdOf, verifyEvents, type StoredEvent } from '../../electron/ledger';
import { ingestFolder } from '../../electron/ingest';
import { stateAt } from '../../electron/state';
import { exportBundle, verifyBundle } from '../../electron/bundle';
import { interpret } from '../../shared/formats';

/**
 * Issue 27 on real files of SWE-agent (0.x and 1.x `.traj`), OpenHands (a V0 event stream, a V1
 * conversation folder) and ATIF (Harbor's golden trajectories), through the real importer into a
 * real ledger: every part of each document is an event whose source names it (or a finding), its
 * payload the part as written; calls pair with their results; the run ends as the file says; each
 * run verifies and exports as a bundle that verifies.
 */
const FIX = path.join(__dirname, '../fixtures');
const tmpOf = homeForFile('pl-trajectories-');

type Obj = Record<string, unknown>;
const json = (file: string): unknown => JSON.parse(readFileSync(file, 'utf8'));

/** The value at an RFC 6901 pointer (`/trajectory/3`). */
function at(doc: unknown, pointer: string): unknown {
  let v = doc;
  for (const tok of pointer.split('/').slice(1)) v = (v as Obj)[tok.replace(/~1/g, '/').replace(/~0/g, '~')];
  return v;
}

let folder: string;
let l: Ledger;
const events = (run: string): StoredEvent[] => l.read(run);
const ofFile = (key: string): StoredEvent[] =>
  l
    .runs()
    .filter((r) => r.origin === key)
    .flatMap((r) => l.read(r.run_id));
const pointerOf = (e: StoredEvent): string => e.source?.ids?.pointer ?? '';
const calls = (run: string) => stateAt(l, run, l.run(run)!.head_seq).state.calls.items;

beforeAll(async () => {
  folder = path.join(tmpOf(), 'runs');
  for (const sub of ['swe-agent', 'openhands', 'atif'])
    cpSync(path.join(FIX, sub), path.join(folder, sub), { recursive: true });
  l = Ledger.open(folder);
  await ingestFolder(l);
});
afterAll(() => l.close());

describe.each([
  ['0.x', 'swe-agent/old/swe-agent__test-repo-i1.traj', 'swe-agent__test-repo-i1', false],
  ['1.x', 'swe-agent/new/6e44b9__sweagenttestrepo-1c2844.traj', '6e44b9__sweagenttestrepo-1c2844', true],
])('SWE-agent %s trajectory', (_v, key, run, timed) => {
  const doc = () => json(path.join(folder, key)) as Obj;

  it('every part of the document is an event naming its pointer, with the part as written', () => {
    const d = doc();
    const steps = d.trajectory as unknown[];
    const history = d.history as unknown[];
    const expected = [
      '/',
      ...steps.map((_, i) => `/trajectory/${i}`),
      ...history.map((_, i) => `/history/${i}`),
      '/info',
    ];
    const evs = ofFile(key);
    expect([...new Set(evs.map(pointerOf))].sort()).toEqual(expected.sort());
    expect(l.findings().filter((f) => f.file === key)).toEqual([]);
    for (const e of evs) {
      const p = pointerOf(e);
      if (p === '/') {
        const head = { ...d };
        delete head.trajectory;
        delete head.history;
        delete head.info;
        expect(e.payload).toEqual(head);
      } else expect(e.payload, p).toEqual(at(d, p));
    }
    // A step is a proposal and its result; nothing else is made of it.
    expect(evs.filter((e) => pointerOf(e).startsWith('/trajectory/')).map((e) => e.kind)).toEqual(
      steps.flatMap(() => ['model_proposed', 'tool_returned']),
    );
  });

  it('pairs each step’s proposal with its result, and takes no time the file does not hold', () => {
    const d = doc();
    const steps = d.trajectory as Obj[];
    const cs = calls(run);
    expect(cs.map((c) => c.call_id)).toEqual(steps.map((_, i) => `/trajectory/${i}`));
    expect(cs.map((c) => c.tool)).toEqual(steps.map((s) => String(s.action).trim().split(/\s+/)[0]));
    for (const c of cs) expect(c.result, c.call_id).toBeTruthy();
    for (const e of events(run)) expect(e.at).toBe(''); // a .traj has no times: none is invented
    const results = events(run).filter((e) => e.kind === 'tool_returned');
    for (const [i, e] of results.entries()) {
      const view = interpret('swe_agent', e.kind, e.payload, { seq: e.seq, run_id: run, source: e.source })!;
      if (timed) {
        expect(view.payload.duration_ms).toBe(Math.round((steps[i]!.execution_time as number) * 1000));
        expect(view.inferred).not.toContain('duration_ms');
      } else expect(view.inferred).toContain('duration_ms');
    }
  });

  it('ends as info.exit_status says, the submission a file change', () => {
    const { state } = stateAt(l, run, l.run(run)!.head_seq);
    expect((doc().info as Obj).exit_status).toBe('submitted');
    expect(state.status).toBe('completed');
    const changed = events(run).find((e) => e.kind === 'file_changed')!;
    const view = interpret('swe_agent', changed.kind, changed.payload, {
      seq: changed.seq,
      run_id: run,
      source: changed.source,
    })!;
    expect(view.payload.path).toBe('tests/missing_colon.py');
    expect(String(view.payload.patch)).toContain('+def division(a: float, b: float) -> float:');
    expect(events(run).at(-1)!.kind).toBe('run_completed');
  });
});

describe('OpenHands V0 event stream (tests/runtime/trajs/basic_gui_mode.json)', () => {
  const key = 'openhands/v0/basic_gui_mode.json';
  it('every event of the array is one event, in order, as written', () => {
    const d = json(path.join(folder, key)) as Obj[];
    const evs = ofFile(key);
    expect(evs.map(pointerOf)).toEqual(d.map((_, i) => `/${i}`));
    for (const [i, e] of evs.entries()) expect(e.payload).toEqual(d[i]);
    expect(evs.map((e) => e.source?.ids?.id)).toEqual(d.map((x) => String(x.id)));
  });

  it('pairs each action with the observation whose cause it is', () => {
    const d = json(path.join(folder, key)) as Obj[];
    const agentActions = d.filter(
      (e) => e.source === 'agent' && typeof e.action === 'string' && e.action !== 'message',
    );
    const cs = calls('basic_gui_mode');
    expect(cs.map((c) => c.call_id)).toEqual(agentActions.map((e) => String(e.id)));
    for (const c of cs) {
      const obs = d.find((e) => String(e.cause) === c.call_id)!;
      expect(c.result?.seq, c.call_id).toBe(d.indexOf(obs) + 1);
    }
    expect(cs.map((c) => c.tool)).toEqual(agentActions.map((e) => e.action));
    expect(cs.length).toBe(4);
  });
});

describe('OpenHands V1 conversation folder (base_state.json + events/event-<n>-<id>.json)', () => {
  const key = 'openhands/v1/11111111-2222-3333-4444-555555555555';
  const dir = () => path.join(folder, key);
  it('base_state starts the run; each event file is one event, in the order of its number', () => {
    const files = readdirSync(path.join(dir(), 'events')).sort();
    const evs = events('11111111-2222-3333-4444-555555555555');
    // base_state.json's execution_status is "idle": the conversation did not end.
    expect(evs.map(pointerOf)).toEqual(['base_state.json', ...files.map((f) => `events/${f}`)]);
    expect(evs[0]!.kind).toBe('run_started');
    for (const [i, f] of files.entries())
      expect(evs[i + 1]!.payload).toEqual(json(path.join(dir(), 'events', f)));
  });

  it('pairs actions and observations by tool_call_id', () => {
    const cs = calls('11111111-2222-3333-4444-555555555555');
    expect(cs.length).toBe(2);
    expect(cs.filter((c) => c.result === null)).toEqual([]);
  });

  it('a new event file is imported on the next open, continuing the run', async () => {
    const run = '11111111-2222-3333-4444-555555555555';
    const before = l.run(run)!.head_seq;
    const msg = {
      id: 'fe0c0000-0000-4000-8000-000000000001',
      timestamp: '2026-06-16T05:41:00.000000',
      source: 'environment',
      key: 'execution_status',
      value: 'finished',
      kind: 'ConversationStateUpdateEvent',
    };
    writeFileSync(path.join(dir(), 'events', `event-00010-${msg.id}.json`), JSON.stringify(msg));
    await ingestFolder(l);
    expect(l.run(run)!.head_seq).toBe(before + 1);
    const last = events(run).at(-1)!;
    expect([last.kind, pointerOf(last)]).toEqual(['run_completed', `events/event-00010-${msg.id}.json`]);
    expect(stateAt(l, run, l.run(run)!.head_seq).state.status).toBe('completed');
  });
});

/**
 * A conversation folder as the agent SDK wrote it (test/fixtures/README.md: committed by its
 * authors, gpt-4o-mini, a terminal call and a finish), with its `.eventlog.lock`, unlike the
 * assembled folder above.
 */
describe('OpenHands V1 conversation folder the SDK wrote (software-agent-sdk .pr artifacts)', () => {
  const key = 'openhands/v1-sdk/cd94562403b9487ebdd4018e3f531dfd';
  const run = 'cd945624-03b9-487e-bdd4-018e3f531dfd';
  const dir = () => path.join(folder, key);
  it('every event file is one event as written, after base_state; the empty lock file is no record', () => {
    const all = readdirSync(path.join(dir(), 'events')).sort();
    expect(all).toContain('.eventlog.lock');
    const files = all.filter((f) => f.endsWith('.json'));
    expect(files).toHaveLength(8);
    const evs = events(run);
    expect(l.run(run)!.origin).toBe(key);
    // base_state.json's execution_status ("finished") ends the run, after the events: the SDK
    // writes no event for it (openhands-folder.int.spec.ts follows it as it changes).
    expect(evs.map(pointerOf)).toEqual([
      'base_state.json',
      ...files.map((f) => `events/${f}`),
      'base_state.json#/execution_status',
    ]);
    // As written, but for the key the credentials profile redacts whatever it holds (the SDK
    // already masked it as `**********`).
    const base = json(path.join(dir(), 'base_state.json')) as {
      agent: { llm: Obj };
      execution_status: string;
    };
    expect(base.agent.llm.api_key).toBe('**********');
    expect((evs[0]!.payload as typeof base).agent.llm.api_key).toMatch(/^\[REDACTED:/);
    base.agent.llm.api_key = (evs[0]!.payload as typeof base).agent.llm.api_key;
    expect(evs[0]!.payload).toEqual(base);
    for (const [i, f] of files.entries())
      expect(evs[i + 1]!.payload).toEqual(json(path.join(dir(), 'events', f)));
    expect(l.findings().filter((f) => f.file?.startsWith(key))).toEqual([]);
    expect(evs.map((e) => e.kind)).toEqual([
      'run_started',
      'openhands_system_prompt_event',
      'user_prompted',
      'model_proposed',
      'tool_returned',
      'model_proposed',
      'tool_returned',
      'user_prompted',
      'model_responded',
      'run_completed',
    ]);
    expect(evs.at(-1)!.payload).toEqual({ execution_status: base.execution_status });
    expect(base.execution_status).toBe('finished');
    expect(stateAt(l, run, l.run(run)!.head_seq).state.status).toBe('completed');
  });

  it('the terminal call and the finish pair with their observations by tool_call_id', () => {
    const cs = calls(run);
    expect(cs.map((c) => [c.call_id, c.tool, c.result?.status])).toEqual([
      ['call_KaQ0kUcBb5tbMzhxbIx9dvoZ', 'terminal', 'ok'],
      ['call_HhojVstik9LFNxVlLTgV0iIA', 'finish', 'ok'],
    ]);
    expect(cs[0]!.args).toMatchObject({ command: 'pwd > tool_output.txt' });
  });
});

describe('ATIF trajectories (Harbor golden files)', () => {
  const key = 'atif/hello-world-context-summarization.trajectory.json';
  it('each step is its message, its tool calls and its observation results, with the step as written', () => {
    const d = json(path.join(folder, key)) as Obj;
    const steps = d.steps as Obj[];
    const evs = ofFile(key);
    for (const [i, s] of steps.entries()) {
      const mine = evs.filter((e) => pointerOf(e) === `/steps/${i}`);
      const nCalls = s.source === 'agent' ? ((s.tool_calls as unknown[]) ?? []).length : 0;
      const nResults = ((s.observation as Obj | undefined)?.results as unknown[] | undefined)?.length ?? 0;
      expect(mine.length, `step ${i}`).toBe(1 + nCalls + nResults);
      for (const e of mine) expect(e.payload).toEqual(s);
      expect(mine.map((e) => e.source?.part ?? 0)).toEqual(mine.map((_, j) => j));
    }
    expect(l.findings().filter((f) => f.file === key)).toEqual([]);
  });

  it('pairs tool calls with results, and names the subagent trajectories, which are runs of their own', () => {
    const run = l.runs().find((r) => r.origin === key)!.run_id;
    const d = json(path.join(folder, key)) as Obj;
    const callIds = (d.steps as Obj[]).flatMap((s) =>
      ((s.tool_calls as Obj[]) ?? []).map((c) => c.tool_call_id),
    );
    const cs = calls(run);
    expect(cs.map((c) => c.call_id)).toEqual(callIds);
    expect(cs.filter((c) => c.result === null)).toEqual([]);
    const subs = ofFile(key).flatMap((e) =>
      Object.entries(e.source?.ids ?? {}).flatMap(([k, v]) =>
        k.startsWith('subagent_session_id') ? [v] : [],
      ),
    );
    expect(subs).toEqual([
      'test-session-context-summarization-summarization-1-summary',
      'test-session-context-summarization-summarization-1-questions',
      'test-session-context-summarization-summarization-1-answers',
    ]);
    for (const s of subs) expect(l.run(s)?.format).toBe('atif');
  });
});

describe('every imported run', () => {
  it('verifies, and exports as a redacted bundle that verifies', async () => {
    const runs = l.runs();
    expect(new Set(runs.map((r) => r.format))).toEqual(new Set(['swe_agent', 'openhands', 'atif']));
    for (const r of runs) {
      const report = verifyEvents(r.run_id, l.iterate(r.run_id), {
        expectedHead: { seq: r.head_seq, hash: r.head_hash },
        digestRunId: digestRunIdOf(r),
      });
      expect(report.findings, r.run_id).toEqual([]);
    }
    const out = path.join(tmpOf(), 'all.zip');
    await exportBundle(l, { runIds: runs.map((r) => r.run_id), out, profile: 'share' });
    const v = await verifyBundle(out);
    // Unsigned: completeness is unproven (a chain cannot show a cut tail), and that is all.
    expect(v.findings.map((f) => f.code)).toEqual(['completeness_unproven']);
    expect(v).toMatchObject({ ok: true, integrity: 'ok' });
    expect(v.runs.map((r) => r.run_id).sort()).toEqual(runs.map((r) => r.run_id).sort());
    expect(v.runs.every((r) => r.chain === 'import' && (r.seal?.ranges.length ?? 0) > 0)).toBe(true);
  });

  it('a .traj rewritten after its import is reported once, and its run kept as imported', async () => {
    const key = 'swe-agent/new/6e44b9__sweagenttestrepo-1c2844.traj';
    const run = '6e44b9__sweagenttestrepo-1c2844';
    const head = l.run(run)!.head_hash;
    const d = json(path.join(folder, key)) as Obj;
    (d.trajectory as unknown[]).push({ action: 'ls', observation: '', thought: '', response: '' });
    writeFileSync(path.join(folder, key), JSON.stringify(d));
    await ingestFolder(l);
    await ingestFolder(l);
    expect(
      l
        .findings()
        .filter((f) => f.file === key)
        .map((f) => f.code),
    ).toEqual(['file_rewritten']);
    expect(l.run(run)!.head_hash).toBe(head);
  });
});
