import { describe, expect, it } from 'vitest';
import { outcomeOf } from '../../shared/outcome';
import { resumability } from '../../shared/resume';

const ev = (kind: string, payload: Record<string, unknown> = {}) => ({ kind, payload });

describe('outcomeOf', () => {
  it('reads the judge, not the lifecycle: a completed run the judge failed has failed', () => {
    expect(
      outcomeOf([
        ev('run_started'),
        ev('judge_verdict', { passed: false }),
        ev('run_completed', { outcome: 'failed' }),
      ]),
    ).toBe('failed');
    // A run_completed that says passed after a failing verdict is not a pass.
    expect(
      outcomeOf([
        ev('run_started'),
        ev('judge_verdict', { passed: false }),
        ev('run_completed', { outcome: 'passed' }),
      ]),
    ).toBe('failed');
    expect(
      outcomeOf([
        ev('run_started'),
        ev('judge_verdict', { passed: true }),
        ev('run_completed', { outcome: 'passed' }),
      ]),
    ).toBe('passed');
  });
  it('names a spent budget, an error, a run still going, and a run with no verdict', () => {
    expect(
      outcomeOf([
        ev('run_started'),
        ev('budget_exhausted'),
        ev('run_completed', { outcome: 'budget_exhausted' }),
      ]),
    ).toBe('budget');
    expect(outcomeOf([ev('run_started'), ev('run_failed', { error_type: 'model_crash' })])).toBe('error');
    expect(outcomeOf([ev('run_started'), ev('judge_verdict', { passed: false })])).toBe('running');
    expect(outcomeOf([ev('run_started'), ev('run_failed'), ev('run_resumed')])).toBe('running');
    expect(outcomeOf([ev('run_started'), ev('run_completed')])).toBe('ended');
    expect(outcomeOf([])).toBeNull();
  });
});

describe('resumability (what the Resume button offers)', () => {
  const base = { source: 'executed', status: 'failed', writing: false, agent: 'sim', end: null };
  it('a model crash, a model error, a host error, or a writer that died: resumable', () => {
    for (const t of ['model_crash', 'model_error', 'host_error'])
      expect(resumability({ ...base, end: { kind: 'run_failed', payload: { error_type: t } } }).ok).toBe(
        true,
      );
    expect(resumability({ ...base, status: 'running' }).ok).toBe(true);
  });
  it('a verdict, a budget, a tool’s failure, a real agent, an import: not resumable, and says why', () => {
    const done = resumability({ ...base, status: 'completed', end: { kind: 'run_completed', payload: {} } });
    expect(done).toMatchObject({ ok: false, why: expect.stringContaining('verdict') });
    const judge = resumability({
      ...base,
      end: { kind: 'run_failed', payload: { error_type: 'judge_error' } },
    });
    expect(judge).toMatchObject({ ok: false, why: expect.stringContaining('judge_error') });
    expect(resumability({ ...base, agent: 'claude-code' })).toMatchObject({ ok: false });
    expect(resumability({ ...base, source: 'imported' })).toMatchObject({ ok: false });
    expect(resumability({ ...base, status: 'running', writing: true })).toMatchObject({ ok: false });
  });
});
