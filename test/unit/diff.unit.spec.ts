import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { diffRunEvents, type RunDiff } from '../../shared/diff';
import { foldEvents, type FoldEvent } from '../../shared/state';

type Item = { kind: string; payload: Record<string, unknown> };

/** Builds a run from kind/payload items: run id, call ids, times and durations vary with `variant`. */
function build(runId: string, items: readonly Item[], variant = 0): FoldEvent[] {
  const t0 = Date.parse('2026-11-29T08:00:00.000Z') + variant * 3_600_000;
  const rename = (p: Record<string, unknown>): Record<string, unknown> => {
    const out: Record<string, unknown> = { ...p };
    if (typeof out.call_id === 'string') out.call_id = `${runId}-${out.call_id}-${variant}`;
    if (typeof out.duration_ms === 'number') out.duration_ms = out.duration_ms + variant * 17;
    if (typeof out.path === 'string') out.path = out.path.replace('{run}', runId);
    return out;
  };
  return items.map((it, i) => ({
    seq: i + 1,
    run_id: runId,
    kind: it.kind,
    v: 1,
    at: new Date(t0 + i * (1000 + variant * 7)).toISOString(),
    payload: rename(it.payload),
  }));
}

const started = (variant: string): Item => ({
  kind: 'run_started',
  payload: {
    task_id: 'fix-sum',
    goal: 'make the tests pass',
    agent: { name: 'sim', variant, seed: 1 },
    budget: { steps: 20 },
  },
});

function call(id: string, tool: string, args: Record<string, unknown>, result: string): Item[] {
  return [
    { kind: 'model_proposed', payload: { call_id: id, tool, args, tokens: 30 } },
    { kind: 'action_allowed', payload: { call_id: id, rule: `allow-${tool}` } },
    { kind: 'tool_invoked', payload: { call_id: id, tool, args } },
    { kind: 'tool_returned', payload: { call_id: id, status: 'ok', duration_ms: 40, excerpt: result } },
  ];
}

const GOOD_PATCH = '-return a - b\n+return a + b';
const BAD_PATCH = '-return a - b\n+return a * b';

const careful: Item[] = [
  started('careful'),
  ...call('c1', 'read_file', { path: 'src/sum.ts' }, 'export const sum = (a, b) => a - b'),
  ...call('c2', 'write_file', { path: 'src/sum.ts', patch: GOOD_PATCH }, 'written'),
  { kind: 'file_changed', payload: { path: 'src/sum.ts', patch: GOOD_PATCH } },
  { kind: 'judge_verdict', payload: { passed: true, tests_passed: 3, tests_failed: 0, command: 'npm test' } },
  { kind: 'run_completed', payload: { outcome: 'passed' } },
];

const hasty: Item[] = [
  started('hasty'),
  ...call('c1', 'read_file', { path: 'src/sum.ts' }, 'export const sum = (a, b) => a - b'),
  ...call('c2', 'write_file', { path: 'src/sum.ts', patch: BAD_PATCH }, 'written'),
  { kind: 'file_changed', payload: { path: 'src/sum.ts', patch: BAD_PATCH } },
  {
    kind: 'judge_verdict',
    payload: { passed: false, tests_passed: 1, tests_failed: 2, command: 'npm test' },
  },
  ...call('c3', 'write_file', { path: 'src/sum.ts', patch: GOOD_PATCH }, 'written'),
  { kind: 'file_changed', payload: { path: 'src/sum.ts', patch: GOOD_PATCH } },
  { kind: 'judge_verdict', payload: { passed: true, tests_passed: 3, tests_failed: 0, command: 'npm test' } },
  { kind: 'run_completed', payload: { outcome: 'passed' } },
];

function diff(a: FoldEvent[], b: FoldEvent[], opts = {}): RunDiff {
  return diffRunEvents(
    { run_id: a[0]!.run_id, events: a, final_state: foldEvents(a[0]!.run_id, a) },
    { run_id: b[0]!.run_id, events: b, final_state: foldEvents(b[0]!.run_id, b) },
    opts,
  );
}

function checkCounts(d: RunDiff, nLeft: number, nRight: number): void {
  expect(d.counts.same + d.counts.changed + d.counts.only_left).toBe(nLeft);
  expect(d.counts.same + d.counts.changed + d.counts.only_right).toBe(nRight);
}

describe('run diff', () => {
  it('careful vs hasty: the first divergence is the first patch', () => {
    const a = build('careful-1', careful);
    const b = build('hasty-1', hasty, 1);
    const d = diff(a, b);
    const patchSeq = 6; // run_started + 4 events of the read call + 1
    expect(a[patchSeq - 1]!.kind).toBe('model_proposed');
    expect(d.first_divergence).toMatchObject({
      left_seq: patchSeq,
      right_seq: patchSeq,
      right_kind: 'model_proposed',
    });
    expect(d.identical).toBe(false);
    // The variants are set up differently: that is said apart, and is not the first divergence.
    expect(d.settings).toEqual([{ path: 'agent.variant', old: 'careful', new: 'hasty' }]);
    expect(d.rows[0]).toMatchObject({ type: 'changed', left_kind: 'run_started' });
    checkCounts(d, a.length, b.length);
    // hasty's wrong patch, failed verdict, and the extra call show as its own events; the good patch aligns.
    expect(d.counts.only_right).toBe(6);
    expect(d.counts.changed).toBe(1); // run_started
    expect(d.counts.only_left).toBe(0);
    expect(d.state_changes.map((c) => c.path)).toContain('verdicts.failed');
  });

  it('the first patch pairs as `changed` when only its content differs', () => {
    const wrongOnce = careful.map((it) =>
      it.kind === 'file_changed' ? { ...it, payload: { ...it.payload, patch: BAD_PATCH } } : it,
    );
    const d = diff(build('a', careful), build('b', wrongOnce, 2));
    expect(d.counts).toEqual({ same: careful.length - 1, changed: 1, only_left: 0, only_right: 0 });
    const row = d.rows.find((r) => r.type === 'changed')!;
    expect(row.changes).toEqual([{ path: 'patch', old: GOOD_PATCH, new: BAD_PATCH }]);
    expect(d.first_divergence).toMatchObject({ type: 'changed', left_kind: 'file_changed' });
  });

  it('a rerun with other run ids, call ids, times and durations is all "same"', () => {
    const a = build(
      'run-AAAA',
      careful.concat([{ kind: 'file_changed', payload: { path: '/runs/{run}/ws/x.ts', patch: 'p' } }]),
    );
    const b = build(
      'run-BBBB',
      careful.concat([{ kind: 'file_changed', payload: { path: '/runs/{run}/ws/x.ts', patch: 'p' } }]),
      5,
    );
    b[0]!.payload = { ...b[0]!.payload, mode: 'rerun', of: 'run-AAAA' };
    const d = diff(a, b);
    expect(d.identical).toBe(true);
    expect(d.first_divergence).toBeNull();
    expect(d.rows).toEqual([
      expect.objectContaining({ type: 'same', count: a.length, left_seq: 1, right_seq: 1 }),
    ]);
    expect(d.state_changes).toEqual([]);
  });

  it('an inserted and a deleted event show as only_right and only_left', () => {
    const inserted = [
      ...careful.slice(0, 5),
      { kind: 'model_responded', payload: { content: 'thinking' } },
      ...careful.slice(5),
    ];
    const d1 = diff(build('a', careful), build('b', inserted, 1));
    expect(d1.counts).toMatchObject({ only_right: 1, only_left: 0, changed: 0 });
    expect(d1.first_divergence).toMatchObject({
      type: 'only_right',
      right_seq: 6,
      left_seq: 6,
      right_kind: 'model_responded',
    });

    const deleted = careful.filter((_, i) => i !== 3);
    const d2 = diff(build('a', careful), build('b', deleted, 1));
    expect(d2.counts).toMatchObject({ only_left: 1, only_right: 0, changed: 0 });
    expect(d2.rows.find((r) => r.type === 'only_left')).toMatchObject({
      left_seq: 4,
      right_seq: null,
      left_kind: 'tool_invoked',
    });

    // An inserted whole tool call does not shift the rest: call ids are compared as references.
    const extraCall = [
      ...careful.slice(0, 5),
      ...call('cx', 'list_dir', { path: '.' }, 'a b'),
      ...careful.slice(5),
    ];
    const d3 = diff(build('a', careful), build('b', extraCall, 1));
    expect(d3.counts).toMatchObject({ only_right: 4, only_left: 0, changed: 0, same: careful.length });
  });

  it('stays bounded when runs differ a lot, and says what was cut', () => {
    const r = (n: number, salt: string): Item[] =>
      Array.from({ length: n }, (_, i) => ({ kind: 'model_responded', payload: { content: `${salt}${i}` } }));
    const d = diff(build('a', r(400, 'x')), build('b', r(390, 'y')), { maxEditLength: 50, maxRows: 100 });
    expect(d.alignment.method).toBe('positional');
    expect(d.truncated?.reason).toMatch(/aligned by position/);
    expect(d.rows.length).toBe(100);
    expect(d.rows_left_off).toBeGreaterThan(0);
    checkCounts(d, 400, 390);
  });

  it('property: counts account for every event, and a run against its rerun is identical', () => {
    const item: fc.Arbitrary<Item> = fc.oneof(
      fc.record({
        kind: fc.constant('model_responded'),
        payload: fc.record({ content: fc.constantFrom('a', 'b', 'c') }),
      }),
      fc.record({ kind: fc.constant('judge_verdict'), payload: fc.record({ passed: fc.boolean() }) }),
      fc.record({
        kind: fc.constant('model_proposed'),
        payload: fc.record({ call_id: fc.constantFrom('1', '2'), tool: fc.constantFrom('t', 'u') }),
      }),
      fc.record({
        kind: fc.constant('odd_kind'),
        payload: fc.dictionary(fc.string({ maxLength: 3 }), fc.jsonValue({ maxDepth: 2 })),
      }),
    );
    fc.assert(
      fc.property(
        fc.array(item, { minLength: 1, maxLength: 60 }),
        fc.array(item, { minLength: 1, maxLength: 60 }),
        (xs, ys) => {
          const a = build('left-run-0001', xs);
          const b = build('right-run-0002', ys, 1);
          const d = diff(a, b);
          checkCounts(d, a.length, b.length);
          expect(d.identical).toBe(d.first_divergence === null);
          const again = diff(a, build('rerun-run-0003', xs, 3));
          expect(again.identical).toBe(true);
          expect(again.counts.same).toBe(a.length);
        },
      ),
      { numRuns: 200 },
    );
  });
});
