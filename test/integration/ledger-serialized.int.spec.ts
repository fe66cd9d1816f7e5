import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { NewEvent } from '../../shared/protocol';
import { Ledger, verifyEvents, type SerializedItems } from '../../electron/ledger';
import { canonicalPayload, prepareItem } from '../../electron/ledger/prepare';
import { perTest } from './helpers/tmp';

// RunWriter.appendSerialized takes payloads serialised by their producer (the OTLP receiver's
// decode thread): the ledger must store, chain, redact and refuse exactly as appendBatch does.
const NOW = '2026-12-01T12:00:00.000Z';
const { folder, later } = perTest();
function open(): { ledger: Ledger; dir: string } {
  const dir = folder();
  const ledger = Ledger.open(dir, { now: () => NOW });
  later(() => ledger.close());
  return { ledger, dir };
}

function items(n: number): NewEvent[] {
  return Array.from({ length: n }, (_, j): NewEvent => {
    if (j === 0) return { kind: 'run_started', payload: { task_id: 't', goal: 'g', agent: { name: 'a' } } };
    if (j % 7 === 0)
      return {
        kind: 'tool_returned',
        payload: { status: 'ok', call_id: `c${j}`, duration_ms: 1, excerpt: `sk-proj-${'A'.repeat(24)}` },
      };
    if (j % 5 === 0)
      return { kind: 'otel_span', payload: { z: [j], a: { y: 1, b: 'x' } }, at: '2026-01-01T00:00:00.000Z' };
    return { kind: 'model_responded', payload: { content: `step ${j}` } };
  });
}

function serialized(all: readonly NewEvent[]): SerializedItems {
  return {
    kinds: all.map((e) => e.kind),
    vs: all.map((e) => e.v ?? 1),
    ats: all.map((e) => e.at ?? null),
    jsons: all.map((e) => canonicalPayload(e)),
  };
}

describe('appendSerialized', () => {
  for (const n of [40, 3_000]) {
    it(`stores, chains and redacts as appendBatch (${n} items${n >= 2048 ? ', helper thread' : ''})`, () => {
      const a = open();
      const b = open();
      const all = items(n);
      const wa = a.ledger.writer('r');
      const returnedA = wa.appendBatch(all);
      wa.close();
      const wb = b.ledger.writer('r');
      const s = serialized(all);
      const jsons = [...s.jsons];
      const returnedB = wb.appendSerialized(s);
      wb.close();
      expect(s.jsons).toEqual(jsons); // the caller's texts are not replaced by their redacted forms
      const ea = a.ledger.read('r');
      const eb = b.ledger.read('r');
      expect(eb).toHaveLength(n);
      expect(eb).toEqual(ea);
      expect(returnedB).toEqual(returnedA);
      expect(eb[7]!.payload.excerpt).toMatch(/^\[REDACTED:/);
      expect(eb[1]!.at).toBe(NOW);
      expect(eb[5]!.at).toBe('2026-01-01T00:00:00.000Z');
      const mirror = (dir: string) => readFileSync(path.join(dir, 'r', 'events.jsonl'), 'utf8');
      expect(mirror(b.dir)).toBe(mirror(a.dir));
      const run = b.ledger.run('r')!;
      expect(run.task_id).toBe('t');
      expect(verifyEvents('r', eb, { expectedHead: { seq: run.head_seq, hash: run.head_hash } }).ok).toBe(
        true,
      );
    });
  }

  it('takes finished texts (prepareItem) as they are, and returns nothing unread unless a listener reads it', () => {
    const a = open();
    const b = open();
    const all = items(40);
    const wa = a.ledger.writer('r');
    wa.appendBatch(all);
    wa.close();
    const wb = b.ledger.writer('r');
    const finished = { ...serialized(all), jsons: all.map((e) => prepareItem(e)), finished: true };
    expect(finished.jsons[7]).toMatch(/REDACTED/);
    expect(wb.appendSerialized(finished, { unread: true })).toEqual([]);
    const heard: number[] = [];
    b.ledger.onAppend((_run, events) => heard.push(...events.map((e) => e.seq)));
    const more = wb.appendSerialized(finished, { unread: true });
    wb.close();
    expect(more.map((e) => e.seq)).toEqual(heard);
    expect(heard).toEqual(all.map((_, i) => 41 + i));
    expect(more[0]!.payload).toEqual(b.ledger.event('r', 41)!.payload);
    expect(b.ledger.read('r', { limit: 40 })).toEqual(a.ledger.read('r'));
    const run = b.ledger.run('r')!;
    expect(run.task_id).toBe('t');
    expect(run.event_count).toBe(80);
  });

  it('refuses what appendBatch refuses, and appends nothing', () => {
    const { ledger } = open();
    const w = ledger.writer('r');
    const ok = serialized(items(3));
    const bad = (patch: (s: SerializedItems) => void) => {
      const s = serialized(items(3));
      patch(s);
      return () => w.appendSerialized(s);
    };
    expect(bad((s) => (s.kinds[1] = 'Not-Snake'))).toThrow(/must be a snake_case name/);
    expect(bad((s) => (s.jsons[2] = '[1]'))).toThrow(/must be a JSON object/);
    expect(bad((s) => (s.jsons[1] = '{"content":1}'))).toThrow(/payload of model_responded/);
    expect(bad((s) => s.ats.pop())).toThrow(/differ in length/);
    expect(ledger.run('r')!.head_seq).toBe(0);
    w.appendSerialized(ok);
    expect(ledger.run('r')!.head_seq).toBe(3);
  });
});
