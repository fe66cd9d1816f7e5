import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  diffRunEvents,
  joinSides,
  KeyTable,
  keyMap,
  newTrail,
  prepareSide,
  prepareStored,
  storedRecord,
  storedSide,
  type KeyedSide,
  type RunDiff,
  type StoredSide,
} from '../../shared/diff';
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

// The fast way (templates of the stored payload text, shared/diff/stored.ts) against the
// straightforward way (parse, normalise, write each payload: prepareSide), on payload texts built to
// hit what the fast way must get right: key order, duplicate keys, escapes (also in key names),
// whitespace, call ids at any depth and of any type, dropped keys with any value, ISO times (also
// ones just outside what the template blanks), run ids inside strings, numbers that JSON writes
// differently, and the kinds with their own rules.
describe('run diff from stored text', () => {
  const LEFT = 'left-run-0001';
  const RIGHT = 'right-run-0002';

  /** A JSON value as text, written in one of several ways that parse alike. */
  type Text = fc.Arbitrary<string>;
  /** A string as JSON text: as JSON.stringify writes it, or with escapes that parse alike. */
  const str = (s: string, esc: number): string => {
    const t = JSON.stringify(s);
    if (esc === 1) return t.replace(/\//g, '\\/');
    if (esc === 2) return t.replace(/[lr]/, (c) => `\\u00${c.charCodeAt(0).toString(16)}`);
    if (esc === 3) return t.replace(/\\u00([0-9a-f]{2})/g, (_, h: string) => `\\u00${h.toUpperCase()}`);
    return t;
  };
  const strings = fc.constantFrom(
    'x',
    'a"b',
    'line\nbreak',
    '\u0001',
    '\u001f',
    `${LEFT}\n`,
    'é',
    '😀',
    '\ud800',
    'src/mod1.ts',
    LEFT,
    RIGHT,
    `/runs/${LEFT}/ws/a.ts`,
    `/runs/${RIGHT}/ws/a.ts`,
    '2026-11-29T08:00:00.000Z',
    '2026-11-29 08:00',
    '2026-11-29T08:00:00+01:00',
    '2026-11-29T08:00:00.1234567890123Z',
    '2026-11-29T08:00:00.123456789012345678901234567890Z',
    'c1',
    'c2',
    '#',
  );
  /** Times, as the template blanks them or just not (too long, or with a run id in them). */
  const times = fc.constantFrom(
    '"2026-11-29T08:00:00.000Z"',
    '"2026-11-29T09:00:00.000Z"',
    '"2026-11-29 08:00"',
    '"2026-11-29T08:00:00.1234567890123Z"',
    '"2026-11-29T08:00:00.123456789012345678901234567890Z"',
    '"2026-11-29T08:00:00.123456789012345678901234567891Z"',
  );
  const number = fc.constantFrom('0', '-0', '1', '1.5', '1.50', '1e2', '1E400', '12345678901234567890', '-3');
  const primitive: Text = fc.oneof(
    fc.tuple(strings, fc.constantFrom(0, 0, 0, 1, 2, 3)).map(([s, esc]) => str(s, esc)),
    number,
    fc.constantFrom('true', 'false', 'null'),
  );
  const KEYS = [
    'call_id',
    'at',
    'time',
    'timestamp',
    'duration_ms',
    'elapsed_ms',
    'started_at',
    'seq',
    'tool',
    'args',
    'path',
    'a',
    'b',
    'of',
    'mode',
    'budget',
    'used',
    '__proto__',
  ];
  const key = fc.tuple(fc.constantFrom(...KEYS), fc.nat(9)).map(([k, r]) =>
    // Now and then a key spelled with an escape, which parses to the same name.
    r === 0 ? JSON.stringify(k).replace('_', '\\u005f') : JSON.stringify(k),
  );
  const space = fc.constantFrom('', '', '', ' ');
  const value: Text = fc.letrec<{ v: string; o: string; a: string }>((tie) => ({
    v: fc.oneof({ depthSize: 'small', withCrossShrink: true }, primitive, tie('o'), tie('a')),
    o: fc
      .tuple(fc.array(fc.tuple(key, tie('v'), space), { maxLength: 5 }), space)
      .map(([members, sp]) => `{${members.map(([k, v, s]) => `${k}${s}:${s}${v}`).join(`,${sp}`)}}`),
    a: fc.array(tie('v'), { maxLength: 3 }).map((xs) => `[${xs.join(',')}]`),
  })).v;
  /** A top-level call id: mostly first, as the ledger's writers put it, else anywhere or unusual. */
  const callMember = fc.constantFrom(
    null,
    '"call_id":"c1"',
    '"call_id":"c2"',
    '"call_id":"c3"',
    '"call_id":"c\\u0031"',
    '"call\\u005fid":"c1"',
    '"call_id":7',
    '"call_id":"c9","call_id":"c1"',
  );
  const payload: Text = fc
    .tuple(fc.array(fc.tuple(key, value), { maxLength: 6 }), callMember, fc.boolean())
    .map(([members, call, first]) => {
      const all = members.map(([k, v]) => `${k}:${v}`);
      if (call) {
        if (first) all.unshift(call);
        else all.push(call);
      }
      return `{${all.join(',')}}`;
    });
  const kindAndText = fc.record({
    kind: fc.constantFrom('model_proposed', 'tool_returned', 'run_started', 'budget_exhausted', 'odd_kind'),
    text: fc.oneof(
      payload,
      payload.map((p) => p.replace('"budget":', '"budget":"wall_ms","x":')),
    ),
  });
  /** The value tokens of a JSON text (strings that are not keys, numbers, literals). */
  const VALUE_TOKEN = /"(?:[^"\\]|\\.)*"(?=\s*[,}\]])|-?\d[\d.eE+-]*|true|false|null/g;
  /**
   * Events as variations of a few payloads: one value replaced by another. Templates then collide
   * often, which is where a template that blanks too much would show.
   */
  const runEvents = (min: number, max: number) =>
    fc
      .tuple(
        fc.array(kindAndText, { minLength: 1, maxLength: 4 }),
        fc.array(fc.tuple(fc.nat(), fc.nat(), fc.option(fc.oneof(primitive, times), { freq: 3 })), {
          minLength: min,
          maxLength: max,
        }),
      )
      .map(([pool, picks]) =>
        picks.map(([p, at, v]) => {
          const base = pool[p % pool.length]!;
          if (v === null) return base;
          const tokens = [...base.text.matchAll(VALUE_TOKEN)];
          if (!tokens.length) return base;
          const t = tokens[at % tokens.length]!;
          const text = base.text.slice(0, t.index) + v + base.text.slice(t.index + t[0].length);
          try {
            JSON.parse(text);
            return { kind: base.kind, text };
          } catch {
            return base;
          }
        }),
      );
  const event = kindAndText;

  function stored(runId: string, evs: { kind: string; text: string }[]): StoredSide {
    return {
      run_id: runId,
      seqs: evs.map((_, i) => i + 1),
      records: evs.map((e) => storedRecord(e.kind, e.text)),
    };
  }
  function events(runId: string, evs: { kind: string; text: string }[]): FoldEvent[] {
    return evs.map((e, i) => ({
      seq: i + 1,
      run_id: runId,
      kind: e.kind,
      v: 1,
      at: '',
      payload: JSON.parse(e.text) as Record<string, unknown>,
    }));
  }
  /** Per event: key text, kind and call id, as both ways must agree on them. */
  const perEvent = (s: KeyedSide) =>
    Array.from(s.keyOf, (k, i) => [
      s.keys[k],
      s.kinds[s.kindOf[i]!],
      s.callOf[i] ? s.callIds[s.callOf[i]! - 1] : null,
      s.seqs[i],
    ]);

  it('property: per event the same key, kind and call as the straightforward way', () => {
    fc.assert(
      fc.property(runEvents(0, 30), fc.constantFrom(LEFT, 'ab', '2026-11-29'), (evs, runId) => {
        const fast = prepareStored(stored(runId, evs));
        expect(fast).not.toBeNull();
        const ref = prepareSide({ run_id: runId, events: events(runId, evs) });
        expect(perEvent(fast!)).toEqual(perEvent(ref));
        expect(fast!.callIds).toEqual(ref.callIds);
      }),
      { numRuns: 1000 },
    );
  });

  it('property: the same diff as the straightforward way, one table for both runs or joined parts', () => {
    fc.assert(
      fc.property(
        runEvents(1, 40),
        fc.array(fc.tuple(fc.nat(40), event, fc.boolean()), { maxLength: 6 }),
        fc.nat(40),
        (base, edits, cut) => {
          // The right run: the left one with events replaced or inserted.
          const other = base.slice();
          for (const [at, e, insert] of edits) other.splice(at % (other.length + 1), insert ? 0 : 1, e);
          const want = diffRunEvents(
            { run_id: LEFT, events: events(LEFT, base) },
            { run_id: RIGHT, events: events(RIGHT, other) },
          );
          const table = new KeyTable([LEFT, RIGHT]);
          const l = prepareStored(stored(LEFT, base), table)!;
          const r = prepareStored(stored(RIGHT, other), table)!;
          expect(diffRunEvents(l, r)).toEqual(want);
          // The second run following the first's trail.
          const trail = newTrail();
          const t1 = new KeyTable([LEFT, RIGHT]);
          const l1 = prepareStored(stored(LEFT, base), t1, { leave: trail })!;
          const r1 = prepareStored(stored(RIGHT, other), t1, { follow: trail })!;
          expect(perEvent(r1)).toEqual(perEvent(r));
          expect(diffRunEvents(l1, r1)).toEqual(want);
          // Each run in two parts, the later ones over a table of their own (as a worker has).
          const split = (runId: string, evs: typeof base, t: KeyTable, later: KeyTable) => {
            const c = Math.min(cut, evs.length);
            const first = prepareStored(stored(runId, evs.slice(0, c)), t)!;
            const rest = stored(runId, evs.slice(c));
            const restSide = prepareStored({ ...rest, seqs: Array.from(rest.seqs, (s) => s + c) }, later)!;
            return joinSides(t, first, restSide, keyMap(t, later));
          };
          const t2 = new KeyTable([LEFT, RIGHT]);
          const later = new KeyTable([LEFT, RIGHT]);
          const l2 = split(LEFT, base, t2, later);
          const r2 = split(RIGHT, other, t2, later);
          expect(diffRunEvents(l2, r2)).toEqual(want);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("reads a call id off the text only where it is the payload's own", () => {
    const texts = [
      '{"args":{"call_id":"c1"}}',
      '{"a":"x\\"","call_id":"c2"}',
      '{"a":"{[","call_id":"c3"}',
      '{"a\\"call_id":"x"}',
      '{"a":["call_id"],"b":1}',
      '{"a":"\\\\","call_id":"c4"}',
      '{"a":{"b":[1,{"c":2}]},"call_id":"c5"}',
      '{"a":{"b":"}"},"call_id":"c6"}',
      '{"a":"\\\\\\"}","call_id":"c7"}',
      '{"call_id":"c8","z":{"call_id":"c9"}}',
      '{"call_id":5}',
      '{"call_id":"c\\"x"}',
    ];
    const evs = texts.map((text) => ({ kind: 'model_proposed', text }));
    for (const t of texts) expect(() => JSON.parse(t) as unknown).not.toThrow();
    const fast = prepareStored(stored(LEFT, evs))!;
    const ref = prepareSide({ run_id: LEFT, events: events(LEFT, evs) });
    expect(perEvent(fast)).toEqual(perEvent(ref));
    expect(fast.callIds).toEqual(['c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'c8', 'c"x']);
  });

  it('leaves to the straightforward way what it does not expect', () => {
    const ok = storedRecord('model_responded', '{"content":"x"}');
    const side = (records: string[]): StoredSide => ({
      run_id: LEFT,
      seqs: records.map((_, i) => i + 1),
      records,
    });
    expect(prepareStored(side([ok]))).not.toBeNull();
    // An old payload version (upcasting is the protocol's), a NUL, a kind that is not a plain name.
    expect(prepareStored(side([ok, storedRecord('model_responded', '{"content":"x"}', 0)]))).toBeNull();
    expect(prepareStored(side([ok, storedRecord('model_responded', '{"content":"x\0"}')]))).toBeNull();
    expect(prepareStored(side([storedRecord('Bad-Kind', '{}')]))).toBeNull();
    // Chunks whose records or seqs do not line up.
    expect(storedSide({ run_id: LEFT, chunks: [{ n: 2, seqs: '[1,2]', text: ok }] })).toBeNull();
    expect(
      storedSide({ run_id: LEFT, chunks: [{ n: 2, seqs: '[2,1]', text: `${ok}\x1e${ok}` }] }),
    ).toBeNull();
    expect(
      storedSide({ run_id: LEFT, chunks: [{ n: 2, seqs: '[1,2]', text: `${ok}\x1e${ok}` }] })?.records,
    ).toEqual([ok, ok]);
  });
});
