import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { NewEvent } from '../../shared/protocol';
import { Ledger, verifyEvents } from '../../electron/ledger';
import type { AppendHelper } from '../../electron/ledger/append-helper';
import { perTest } from './helpers/tmp';

// Large appends are prepared in a helper thread (electron/ledger/append-helper.ts) from this many
// items; smaller ones in the ledger's own thread. These tests append on both sides of the line.
const LARGE = 5_000;
const SMALL = 1_000;
const NOW = '2026-12-01T12:00:00.000Z';

const { folder, later } = perTest();
function open(appendHelper = true): { ledger: Ledger; dir: string } {
  const dir = folder();
  const ledger = Ledger.open(dir, { now: () => NOW, appendHelper });
  later(() => ledger.close());
  return { ledger, dir };
}
const helperOf = (l: Ledger) => (l as unknown as { helper: AppendHelper | null | false }).helper;

/** A mix that exercises every step: known and unknown kinds, redaction, toJSON, own `at`s. */
function items(n: number, from = 0): NewEvent[] {
  const out: NewEvent[] = [];
  for (let j = from; j < from + n; j++) {
    if (j === 0) {
      out.push({
        kind: 'run_started',
        payload: { task_id: 't', goal: 'g', agent: { name: 'sim', variant: 'careful', seed: 1 } },
      });
    } else if (j % 997 === 0) {
      // Two credentials of one rule: placeholders are numbered in canonical key order.
      out.push({
        kind: 'tool_returned',
        payload: {
          status: 'ok',
          call_id: `c${j}`,
          duration_ms: 3,
          excerpt: `key sk-proj-${'B'.repeat(24)}`,
          a: `sk-proj-${'A'.repeat(24)}`,
        },
      });
    } else if (j % 613 === 0) {
      out.push({
        kind: 'mystery_kind',
        payload: { when: new Date(Date.UTC(2026, 0, 1, 0, 0, j % 60)), gone: undefined, z: 1, a: [j] },
      });
    } else if (j % 401 === 0) {
      out.push({
        kind: 'model_responded',
        payload: { content: `late ${j}` },
        at: '2026-11-30T00:00:00.000Z',
      });
    } else {
      out.push({ kind: 'model_responded', payload: { tokens: j % 50, content: `step ${j}` } });
    }
  }
  return out;
}

describe('large appends prepared in the helper thread', () => {
  it('store the same rows, return the same events and write the same mirror as small appends', () => {
    const big = open();
    const small = open();
    const all = items(LARGE);
    const wb = big.ledger.writer('r');
    const returned = wb.appendBatch(all);
    wb.close();
    const ws = small.ledger.writer('r');
    for (let i = 0; i < LARGE; i += SMALL) ws.appendBatch(all.slice(i, i + SMALL));
    ws.close();
    const one = open(false); // all in one thread, as asked
    const wo = one.ledger.writer('r');
    wo.appendBatch(all);
    wo.close();
    expect(helperOf(big.ledger)).toBeTruthy(); // the helper did this append
    expect(helperOf(small.ledger)).toBeNull(); // and never started for the small ones
    expect(helperOf(one.ledger)).toBe(false);

    const a = big.ledger.read('r');
    const b = small.ledger.read('r');
    expect(a).toHaveLength(LARGE);
    expect(a).toEqual(b);
    expect(one.ledger.read('r')).toEqual(a);
    expect(returned).toEqual(a);
    const mirror = (dir: string) => readFileSync(path.join(dir, 'r', 'events.jsonl'), 'utf8');
    expect(mirror(big.dir)).toBe(mirror(small.dir));
    expect(mirror(one.dir)).toBe(mirror(big.dir));

    // What was redacted, and in which order, is the same on both sides.
    const redacted = a[997]!.payload;
    expect(JSON.stringify(redacted)).not.toContain('sk-proj-');
    expect(redacted.a).toMatch(/#1/);
    expect(redacted.excerpt).toMatch(/#2/);
    expect(a[613]!.payload).toEqual({ a: [613], when: '2026-01-01T00:00:13.000Z', z: 1 });
    expect(a[401]!.at).toBe('2026-11-30T00:00:00.000Z');
    expect(a[400]!.at).toBe(NOW);

    const run = big.ledger.run('r')!;
    expect(run.status).toBe('running');
    expect(run.task_id).toBe('t');
    expect(verifyEvents('r', a, { expectedHead: { seq: run.head_seq, hash: run.head_hash } }).ok).toBe(true);
  });

  it('commit nothing when one item deep inside is bad, and the next append continues the chain', () => {
    const { ledger, dir } = open();
    const w = ledger.writer('r');
    w.appendBatch(items(10));
    const before = readFileSync(path.join(dir, 'r', 'events.jsonl'), 'utf8');

    // Refused in the helper (the schema check) and in this thread (no canonical JSON for NaN).
    const schemaBad = items(LARGE, 10);
    schemaBad[4_000] = { kind: 'tool_returned', payload: { call_id: 'c1' } };
    expect(() => w.appendBatch(schemaBad)).toThrow(/payload of tool_returned: status/);
    const nanBad = items(LARGE, 10);
    nanBad[3_000] = { kind: 'model_responded', payload: { content: 'x', score: NaN } };
    expect(() => w.appendBatch(nanBad)).toThrow(/payload of model_responded: NaN is not allowed/);
    expect(ledger.run('r')!.head_seq).toBe(10);
    expect(readFileSync(path.join(dir, 'r', 'events.jsonl'), 'utf8')).toBe(before);

    // The answers still coming for the refused appends are not taken for this one's.
    const next = w.appendBatch(items(LARGE, 10));
    w.close();
    expect(next[0]!.seq).toBe(11);
    const events = ledger.read('r');
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: LARGE + 10 }, (_, i) => i + 1));
    expect(next).toEqual(events.slice(10));
    const run = ledger.run('r')!;
    expect(verifyEvents('r', events, { expectedHead: { seq: run.head_seq, hash: run.head_hash } }).ok).toBe(
      true,
    );
  });

  it('are done in this thread, once, when the helper has died', async () => {
    const { ledger } = open();
    const w = ledger.writer('r');
    w.appendBatch(items(LARGE));
    const helper = helperOf(ledger);
    expect(helper).toBeTruthy();
    await (helper as AppendHelper).stopThread();
    await new Promise((r) => setTimeout(r, 50)); // the exit event is seen between appends
    const next = w.appendBatch(items(LARGE, LARGE));
    w.close();
    expect(helperOf(ledger)).toBe(false);
    expect(next[0]!.seq).toBe(LARGE + 1);
    const events = ledger.read('r');
    expect(events).toHaveLength(2 * LARGE);
    const run = ledger.run('r')!;
    expect(verifyEvents('r', events, { expectedHead: { seq: run.head_seq, hash: run.head_hash } }).ok).toBe(
      true,
    );
  });
});
