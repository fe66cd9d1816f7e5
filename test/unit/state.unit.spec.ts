import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  changes,
  evolve,
  foldEvents,
  initialState,
  PROJECTION_VERSION,
  STATE_CAPS,
  type FoldEvent,
  type RunState,
} from '../../shared/state';

const RUN = 'run-1';

/** One event body: valid v1 payloads over a small pool of call ids, invalid ones, and unknown kinds. */
const callId = fc.constantFrom('c1', 'c2', 'c3', 'c4', '7', 'constructor');
const text = fc.string({ maxLength: 300 });
const body: fc.Arbitrary<{ kind: string; payload: Record<string, unknown> }> = fc.oneof(
  fc.record({
    kind: fc.constant('run_started'),
    payload: fc.record({
      task_id: fc.constantFrom('t1', 't2'),
      goal: text,
      agent: fc.record({ name: fc.constant('sim'), variant: fc.constantFrom('careful', 'hasty') }),
      budget: fc.record({
        steps: fc.integer({ min: 1, max: 20 }),
        tokens: fc.integer({ min: 1, max: 5000 }),
      }),
    }),
  }),
  fc.record({
    kind: fc.constant('model_proposed'),
    payload: fc.record({
      call_id: callId,
      tool: fc.constantFrom('read_file', 'write_file'),
      args: fc.jsonValue(),
      tokens: fc.nat(500),
    }),
  }),
  fc.record({
    kind: fc.constantFrom('action_allowed', 'action_denied'),
    payload: fc.record({ call_id: callId, rule: fc.constantFrom('r1', 'r2'), reason: text }),
  }),
  fc.record({
    kind: fc.constant('tool_invoked'),
    payload: fc.record({ call_id: callId, tool: fc.constant('read_file'), args: fc.jsonValue() }),
  }),
  fc.record({
    kind: fc.constant('tool_returned'),
    payload: fc.record({
      call_id: callId,
      status: fc.constantFrom('ok', 'error'),
      duration_ms: fc.nat(5000),
      excerpt: text,
    }),
  }),
  fc.record({
    kind: fc.constant('tool_timed_out'),
    payload: fc.record({ call_id: callId, timeout_ms: fc.nat(5000) }),
  }),
  fc.record({
    kind: fc.constant('model_responded'),
    payload: fc.record({ content: text, tokens: fc.nat(500) }),
  }),
  fc.record({
    kind: fc.constant('context_updated'),
    payload: fc.record({ op: fc.constantFrom('append', 'compact'), tokens_after: fc.nat(9000) }),
  }),
  fc.record({
    kind: fc.constant('file_changed'),
    payload: fc.record({ path: fc.constantFrom('a.ts', 'b.ts', 'src/c.ts'), patch: text }),
  }),
  fc.record({
    kind: fc.constant('budget_exhausted'),
    payload: fc.record({
      budget: fc.constantFrom('steps', 'tokens', 'wall_ms'),
      limit: fc.nat(100),
      used: fc.nat(100),
    }),
  }),
  fc.record({
    kind: fc.constant('judge_verdict'),
    payload: fc.record({ passed: fc.boolean(), tests_passed: fc.nat(10), tests_failed: fc.nat(10) }),
  }),
  fc.record({
    kind: fc.constant('run_completed'),
    payload: fc.record({ outcome: fc.constantFrom('passed', 'failed') }),
  }),
  fc.record({ kind: fc.constant('run_failed'), payload: fc.record({ reason: text }) }),
  fc.record({ kind: fc.constant('run_resumed'), payload: fc.record({ from_seq: fc.nat(50) }) }),
  fc.record({
    kind: fc.constant('event_annotated'),
    payload: fc.record({ target_seq: fc.integer({ min: 1, max: 80 }), note: text }),
  }),
  // invalid payloads of known kinds, and unknown kinds
  fc.record({
    kind: fc.constantFrom('model_proposed', 'tool_returned', 'run_started', 'judge_verdict', 'action_denied'),
    payload: fc.dictionary(
      fc.constantFrom('call_id', 'status', 'agent', 'passed', 'tool', 'x'),
      fc.jsonValue(),
    ),
  }),
  fc.record({
    kind: fc.constantFrom('mystery_happened', 'constructor', 'to_string', 'x1'),
    payload: fc.dictionary(fc.string(), fc.jsonValue()),
  }),
);

const events: fc.Arbitrary<FoldEvent[]> = fc
  .array(fc.tuple(body, fc.integer({ min: 0, max: 120_000 }), fc.boolean()), { maxLength: 80 })
  .map((xs) => {
    let t = Date.parse('2026-11-29T08:00:00.000Z');
    return xs.map(([b, dt, back], i) => {
      // Clocks step back sometimes: `at` is never used for order.
      t += back && i % 7 === 0 ? -dt : dt;
      return {
        seq: i + 1,
        run_id: RUN,
        kind: b.kind,
        v: 1,
        at: new Date(t).toISOString(),
        payload: b.payload,
      };
    });
  });

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object' && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o as object)) deepFreeze(v);
  }
  return o;
}

const json = (s: unknown) => JSON.stringify(s);

describe('evolve', () => {
  it('folding the same events twice gives equal states', () => {
    fc.assert(
      fc.property(events, (evs) => {
        expect(json(foldEvents(RUN, evs))).toBe(json(foldEvents(RUN, evs)));
      }),
      { numRuns: 300 },
    );
  });

  it('never mutates its input state or event (deep-frozen inputs, strict mode)', () => {
    fc.assert(
      fc.property(events, (evs) => {
        let s: RunState = deepFreeze(initialState(RUN));
        for (const e of evs) {
          const before = json(s);
          const frozenEvent = deepFreeze(structuredClone(e));
          const next = evolve(s, frozenEvent);
          expect(json(s)).toBe(before);
          expect(next).not.toBe(s);
          s = deepFreeze(next);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('state via snapshots (every K, through JSON) equals the full fold at every seq', () => {
    fc.assert(
      fc.property(events, fc.integer({ min: 1, max: 10 }), (evs, k) => {
        const full: string[] = [];
        let s = initialState(RUN);
        for (const e of evs) full.push(json((s = evolve(s, e))));
        // Snapshots as the ledger stores them: JSON text every K events.
        const snaps = new Map<number, string>();
        s = initialState(RUN);
        for (const e of evs) {
          s = evolve(s, e);
          if (e.seq % k === 0) snaps.set(e.seq, JSON.stringify(s));
        }
        for (let n = 1; n <= evs.length; n++) {
          const base = Math.floor(n / k) * k;
          let st = base > 0 ? (JSON.parse(snaps.get(base)!) as RunState) : initialState(RUN);
          for (const e of evs.slice(base, n)) st = evolve(st, e);
          expect(json(st)).toBe(full[n - 1]);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('keeps the state JSON-serialisable and round-trip exact', () => {
    fc.assert(
      fc.property(events, (evs) => {
        const s = foldEvents(RUN, evs);
        expect(JSON.parse(json(s))).toStrictEqual(s);
        expect(s.projection).toBe(PROJECTION_VERSION);
        expect(s.seq).toBe(evs.length);
      }),
      { numRuns: 200 },
    );
  });

  it('changes(a, a) is empty and changes(prev, next) always names the seq', () => {
    fc.assert(
      fc.property(events, (evs) => {
        let s = initialState(RUN);
        for (const e of evs) {
          const next = evolve(s, e);
          expect(changes(next, next)).toEqual([]);
          const c = changes(s, next);
          expect(c.find((x) => x.path === 'seq')).toEqual({ path: 'seq', old: e.seq - 1, new: e.seq });
          s = next;
        }
      }),
      { numRuns: 100 },
    );
  });
});

const ev = (seq: number, kind: string, payload: Record<string, unknown>): FoldEvent => ({
  seq,
  run_id: RUN,
  kind,
  v: 1,
  at: new Date(Date.parse('2026-11-29T08:00:00.000Z') + seq * 1000).toISOString(),
  payload,
});

describe('the run state', () => {
  const start = ev(1, 'run_started', {
    task_id: 't',
    goal: 'fix it',
    agent: { name: 'sim', variant: 'careful', seed: 3 },
    budget: { steps: 2 },
  });

  it('follows a tool call from proposal to result, with decision, duration and budget use', () => {
    const s = foldEvents(RUN, [
      start,
      ev(2, 'model_proposed', { call_id: 'c1', tool: 'read_file', args: { path: 'a.ts' }, tokens: 40 }),
      ev(3, 'action_allowed', { call_id: 'c1', rule: 'allow-read' }),
      ev(4, 'tool_invoked', { call_id: 'c1', tool: 'read_file', args: { path: 'a.ts' } }),
      ev(5, 'tool_returned', { call_id: 'c1', status: 'ok', duration_ms: 12, excerpt: 'export const x = 1' }),
      ev(6, 'model_proposed', { call_id: 'c2', tool: 'shell', args: { cmd: 'rm -rf /' } }),
      ev(7, 'action_denied', { call_id: 'c2', rule: 'deny-shell', reason: 'not allowed' }),
      ev(8, 'judge_verdict', { passed: false, tests_passed: 1, tests_failed: 2 }),
      ev(9, 'run_failed', { reason: 'gave up', error_type: 'Budget' }),
    ]);
    expect(s.status).toBe('failed');
    expect(s.why).toBe('failed: gave up (Budget)');
    expect(s.agent).toEqual({ name: 'sim', variant: 'careful', seed: 3 });
    expect(s.step).toBe(2);
    expect(s.budget.used).toEqual({ steps: 2, tokens: 40, wall_ms: 8000 });
    expect(s.budget.over).toEqual(['steps']);
    const [c1, c2] = s.calls.items;
    expect(c1).toMatchObject({ call_id: 'c1', n: 1, status: 'returned', duration_ms: 12, invoked_seq: 4 });
    expect(c1!.decision).toEqual({
      allowed: true,
      rule: 'allow-read',
      reason: null,
      seq: 3,
      by: 'proofloop',
      also: [],
    });
    expect(c2).toMatchObject({ status: 'denied', decision: { allowed: false, rule: 'deny-shell' } });
    expect(s.denials.items).toEqual([
      { seq: 7, call_id: 'c2', tool: 'shell', rule: 'deny-shell', reason: 'not allowed', by: 'proofloop' },
    ]);
    expect(s.verdicts.last).toMatchObject({ passed: false, tests_failed: 2 });
    expect(s.counts).toMatchObject({ run_started: 1, model_proposed: 2, run_failed: 1 });
    expect(s.notes.total).toBe(0);
  });

  it('one decision from two sources: the same is noted once with both rules, a different one is a finding', () => {
    const s = foldEvents(RUN, [
      start,
      ev(2, 'model_proposed', { call_id: 'a', tool: 'Bash', args: { command: 'ls' } }),
      ev(3, 'action_allowed', { call_id: 'a', rule: 'claude_code.config', decided_by: 'config' }),
      ev(4, 'action_allowed', { call_id: 'a', rule: 'proofloop.policy' }),
      ev(5, 'model_proposed', { call_id: 'b', tool: 'Bash', args: { command: 'rm -rf build' } }),
      ev(6, 'action_denied', { call_id: 'b', rule: 'claude_code.hook', reason: 'no', decided_by: 'hook' }),
      ev(7, 'action_allowed', { call_id: 'b', rule: 'proofloop.policy' }),
      ev(8, 'action_denied', { call_id: 'b', rule: 'claude_code.hook', reason: 'no', decided_by: 'hook' }),
    ]);
    const [a, b] = s.calls.items;
    expect(a!.decision).toMatchObject({ allowed: true, by: 'config', seq: 3, also: ['proofloop.policy'] });
    expect(b!.decision).toMatchObject({ allowed: false, by: 'hook', seq: 8 });
    expect(s.notes.items.map((n) => [n.seq, n.code])).toEqual([
      [7, 'decision_conflict'],
      [8, 'decision_conflict'],
    ]);
    expect(s.notes.items[0]!.message).toBe(
      'call b allowed by proofloop.policy, but denied by claude_code.hook at seq 6',
    );
  });

  it('telemetry (otlp) knows a call from its decision, invocation or result, in any order', () => {
    const t = (seq: number, kind: string, payload: Record<string, unknown>) => ({
      ...ev(seq, kind, payload),
      fmt: 'otlp',
    });
    const s = foldEvents(RUN, [
      t(1, 'tool_invoked', { call_id: 'a', tool: 'Bash' }),
      t(2, 'tool_returned', { call_id: 'a', status: 'ok', duration_ms: 3 }),
      t(3, 'action_allowed', { call_id: 'a', rule: 'claude_code.config', decided_by: 'config' }),
      t(4, 'tool_returned', { call_id: 'a', status: 'ok', duration_ms: 3 }),
      t(5, 'tool_returned', { call_id: 'b', tool: 'exec_command', status: 'error', duration_ms: 1 }),
      t(6, 'tool_returned', { call_id: 'b', status: 'ok', duration_ms: 1 }),
    ]);
    expect(s.calls.items.map((c) => [c.call_id, c.tool, c.result?.status, c.decision?.by ?? null])).toEqual([
      ['a', 'Bash', 'ok', 'config'],
      ['b', 'exec_command', 'ok', null],
    ]);
    // The same result twice is one; a different one is noted (and, as anywhere, the later stands). No call is "never proposed".
    expect(s.notes.items.filter((n) => n.code !== 'before_start').map((n) => [n.seq, n.code])).toEqual([
      [6, 'result_twice'],
    ]);
  });

  it('keeps and notes contradicting events instead of throwing', () => {
    const s = foldEvents(RUN, [
      ev(1, 'tool_returned', { call_id: 'ghost', status: 'ok', duration_ms: 1 }),
      { ...start, seq: 2 },
      ev(3, 'tool_returned', { call_id: 'ghost', status: 'ok', duration_ms: 1 }),
      ev(4, 'model_proposed', { call_id: 'c1', tool: 't' }),
      ev(5, 'tool_invoked', { call_id: 'c1', tool: 't' }),
      ev(6, 'model_proposed', { tool: 42 }),
      ev(7, 'run_completed', { outcome: 'passed' }),
      ev(8, 'model_responded', { content: 'after the end' }),
      ev(9, 'weird_thing_happened', { a: 1 }),
    ]);
    const codes = s.notes.items.map((n) => n.code);
    expect(codes).toEqual([
      'before_start',
      'unknown_call',
      'unknown_call',
      'invoked_without_allow',
      'invalid_payload',
      'after_end',
    ]);
    expect(s.status).toBe('completed');
    expect(s.unknown).toMatchObject({ total: 1, kinds: { weird_thing_happened: 1 } });
    expect(s.counts.weird_thing_happened).toBe(1);
  });

  it('stays bounded on long runs and says what it dropped', () => {
    const evs: FoldEvent[] = [start];
    for (let i = 0; i < 1000; i++) {
      evs.push(
        ev(evs.length + 1, 'model_proposed', {
          call_id: `c${i}`,
          tool: 'read_file',
          args: { path: 'x'.repeat(1000) },
        }),
      );
      evs.push(ev(evs.length + 1, 'model_responded', { content: 'y'.repeat(5000) }));
    }
    const s = foldEvents(RUN, evs);
    expect(s.calls.items.length).toBe(STATE_CAPS.calls);
    expect(s.calls).toMatchObject({ total: 1000, dropped: 1000 - STATE_CAPS.calls });
    expect(s.context.items.length).toBe(STATE_CAPS.context);
    expect(s.calls.items.at(-1)!.args).toMatchObject({ chars: 1011 });
    expect(JSON.stringify(s).length).toBeLessThan(120_000);
    // An event for a call that fell out of the window is noted honestly.
    const late = evolve(
      s,
      ev(evs.length + 1, 'tool_returned', { call_id: 'c0', status: 'ok', duration_ms: 1 }),
    );
    expect(late.notes.items.at(-1)!.message).toMatch(
      new RegExp(`not among the ${STATE_CAPS.calls} most recent calls`),
    );
  });

  it('changes() names paths, matching call records by call_id', () => {
    const a = foldEvents(RUN, [start, ev(2, 'model_proposed', { call_id: 'c1', tool: 't' })]);
    const b = evolve(a, ev(3, 'action_allowed', { call_id: 'c1', rule: 'r' }));
    const paths = changes(a, b).map((c) => c.path);
    expect(paths).toContain('calls.items[call_id=c1].status');
    expect(paths).toContain('calls.items[call_id=c1].decision');
    expect(paths).toContain('counts.action_allowed');
    expect(changes(a, b).find((c) => c.path === 'counts.action_allowed')).toEqual({
      path: 'counts.action_allowed',
      new: 1,
    });
  });
});
