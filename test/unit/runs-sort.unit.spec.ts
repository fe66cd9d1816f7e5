import { describe, expect, it } from 'vitest';
import { visibleRuns } from '../../renderer/store/runsQuery';
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
