import { test, expect } from './helpers/fixtures';
import { appendRun, type EventSpec } from './helpers/runs';

const start: EventSpec = {
  kind: 'run_started',
  payload: { task_id: 'fix-discount', goal: 'fix it', agent: { name: 'sim', variant: 'careful' } },
};
const call = (id: string, tool: string, args: Record<string, unknown>): EventSpec[] => [
  { kind: 'model_proposed', payload: { call_id: id, tool, args, tokens: 10 } },
  { kind: 'action_allowed', payload: { call_id: id, rule: 'tools' } },
];

test('a changed diff row names the differing tool and argument; the final states are grouped; state changes lead with what matters', async ({
  app,
  server,
  page,
}) => {
  await appendRun(server, 'left', [
    start,
    ...call('c1', 'search', { query: 'percent' }),
    { kind: 'judge_verdict', payload: { passed: true, tests_passed: 3, tests_failed: 0 } },
    { kind: 'run_completed', payload: { outcome: 'passed' } },
  ]);
  await appendRun(server, 'right', [
    start,
    ...call('c1', 'list_files', { path: '.' }),
    { kind: 'judge_verdict', payload: { passed: false, tests_passed: 1, tests_failed: 2 } },
    { kind: 'run_completed', payload: { outcome: 'failed' } },
  ]);
  await app.open('#/diff/left/right');
  await expect(page.getByTestId('diff-view')).toBeVisible();
  const changed = page.locator('[data-testid="diff-row"][data-type="changed"]').first();
  await expect(changed).toBeVisible();
  // Not `model_proposed ≠ model_proposed`: what each side called.
  await expect(changed.getByTestId('diff-summary')).toHaveText(['search(percent)', 'list_files(.)']);
  const verdict = page.locator('[data-testid="diff-row"]').filter({ hasText: 'judge_verdict' });
  await expect(verdict.getByTestId('diff-summary')).toHaveText([/^PASS/, /^FAIL/]);

  // The final states' differences by part of the state, not one flat list.
  const groups = page.getByTestId('final-state-changes').getByTestId('change-group');
  expect(await groups.count()).toBeGreaterThan(1);
  await expect(page.locator('[data-testid="change-group"][data-group="verdicts"]')).toBeVisible();
  await app.screenshot('diff-rows-1440');
  await page.setViewportSize({ width: 1024, height: 700 });
  await app.screenshot('diff-rows-1024');

  // The state's change list: the proposal's call first, the seq and the clock after it.
  await app.selectRun('left');
  await app.row(2).click();
  await app.expectStateAt(2);
  const paths = await page
    .getByTestId('state-changes')
    .getByTestId('state-change')
    .evaluateAll((els) => els.map((e) => e.getAttribute('data-path') ?? ''));
  expect(paths[0]).not.toBe('seq');
  expect(paths[0]).not.toBe('last_at');
  expect(paths).toContain('seq');
  expect(paths.indexOf('seq')).toBeGreaterThan(paths.findIndex((p) => p.startsWith('calls')));
});
