import { describe, expect, it } from 'vitest';
import { detailsWithGlances, visibleRuns, type RunDetails } from '../../renderer/store/runsQuery';
import type { RunSummary } from '../../renderer/api/types';

const run = (run_id: string, format: string, created_at: string, last_at: string | null): RunSummary => ({
  run_id,
  source: 'imported',
  format,
  chained: false,
  origin: null,
  created_at,
  head_seq: 1,
  head_hash: '',
  first_at: last_at,
  last_at,
  status: 'running',
  outcome: null,
  task_id: null,
  variant: null,
  event_count: 1,
  findings: 0,
  writer: null,
  meta: {},
});

describe('visibleRuns', () => {
  it('lists an OTLP run by its arrival, not by its spans’ old times', () => {
    const runs = [
      run('session', 'claude_code', '2026-12-03T10:00:00Z', '2026-12-02T09:00:00Z'),
      run('otlp-old-trace', 'otlp', '2026-12-03T11:00:00Z', '2019-01-01T00:00:00Z'),
    ];
    expect(visibleRuns(runs, '', 'recent').map((r) => r.run_id)).toEqual(['otlp-old-trace', 'session']);
  });
  it('sorts by outcome, failures first, and filters the ones not passed', () => {
    const a = { ...run('a', 'proofloop', '2026-12-03T10:00:00Z', null), outcome: 'passed' as const };
    const b = { ...run('b', 'proofloop', '2026-12-03T10:00:00Z', null), outcome: 'budget' as const };
    const c = { ...run('c', 'proofloop', '2026-12-03T10:00:00Z', null), outcome: 'error' as const };
    expect(visibleRuns([a, b, c], '', 'outcome').map((r) => r.run_id)).toEqual(['c', 'b', 'a']);
    expect(visibleRuns([a, b, c], '', 'id', { outcome: 'failing' }).map((r) => r.run_id)).toEqual(['b', 'c']);
  });
});

describe('detailsWithGlances', () => {
  const glance = (head_seq: number, counts?: { calls: number; errors: number }) => ({
    run_id: 'r',
    head_seq,
    format: 'proofloop',
    project: null,
    model: null,
    title: `at ${head_seq}`,
    tokens: null,
    ...counts,
  });
  const listed = (g: ReturnType<typeof glance>) => [
    { ...run('r', 'proofloop', '2026-12-03T10:00:00Z', null), glance: g },
  ];
  const had = (head_seq: number, calls: number | null): Record<string, RunDetails> => ({
    r: { head_seq, project: null, model: null, title: `had ${head_seq}`, tokens: null, calls, errors: calls },
  });

  it('takes a glance’s counts when it carries them, and leaves them null for runs.details when not', () => {
    expect(detailsWithGlances({}, listed(glance(5, { calls: 2, errors: 1 }))).r).toMatchObject({
      calls: 2,
      errors: 1,
    });
    expect(detailsWithGlances({}, listed(glance(5))).r).toMatchObject({
      title: 'at 5',
      calls: null,
      errors: null,
    });
  });

  it('keeps what a row has from a later head, or from the same head with its counts', () => {
    const later = had(9, 4);
    expect(detailsWithGlances(later, listed(glance(5, { calls: 2, errors: 1 })))).toBe(later);
    const same = had(5, 4);
    expect(detailsWithGlances(same, listed(glance(5)))).toBe(same);
    expect(detailsWithGlances(same, listed(glance(5, { calls: 4, errors: 4 })))).toBe(same);
    // A row at the same head without counts takes them from a list that carries them.
    expect(detailsWithGlances(had(5, null), listed(glance(5, { calls: 2, errors: 1 }))).r).toMatchObject({
      title: 'at 5',
      calls: 2,
    });
    // An older row takes the newer glance, counts or not.
    expect(detailsWithGlances(had(3, 1), listed(glance(5))).r).toMatchObject({ title: 'at 5', calls: null });
  });
});
