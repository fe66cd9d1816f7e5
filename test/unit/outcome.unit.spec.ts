import { describe, expect, it } from 'vitest';
import { outcomeOf } from '../../shared/outcome';

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
