import { cpSync } from 'node:fs';
import path from 'node:path';
import { test, expect, AppPage } from './helpers/fixtures';
import { repoRoot } from './helpers/server';

/**
 * Issue 27 in the browser: a folder holding Inspect AI eval logs and a SWE-agent trajectory opens
 * with each sample and the trajectory as runs; the keyboard steps through a sample's approvals
 * (escalated, denied, allowed: each in the decision lane) to its limit; a trajectory's steps are
 * calls with their results; two samples of one eval diff like any two runs.
 */
const FIX = path.join(repoRoot, 'test/fixtures');
/** Of inspect/log_read_sample.approvals.json (see test/fixtures/README.md). */
const APPROVALS_SAMPLE = 'hj8C8q8gxzHhwyCT67xh4L:1_epoch_1';
/** Two samples of inspect/2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval. */
const SAMPLE_A = 'mj7khqpMM4GBCfVQozKgzB:1_epoch_1';
const SAMPLE_B = 'mj7khqpMM4GBCfVQozKgzB:2_epoch_1';
const TRAJ = '6e44b9__sweagenttestrepo-1c2844';

test('a folder of eval logs and a SWE-agent trajectory: step through approvals, see the steps, diff two samples', async ({
  page,
  folder,
  startServer,
}) => {
  test.setTimeout(150_000);
  cpSync(path.join(FIX, 'inspect/log_read_sample.approvals.json'), path.join(folder, 'evals/approvals.json'));
  cpSync(
    path.join(FIX, 'inspect/2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval'),
    path.join(folder, 'evals/popularity.eval'),
  );
  cpSync(path.join(FIX, `swe-agent/new/${TRAJ}.traj`), path.join(folder, `trajectories/${TRAJ}.traj`));
  // The folder holds the files before it is opened (the `app` fixture would serve it at once).
  const app = new AppPage(page, await startServer());
  await app.open();
  for (const id of [APPROVALS_SAMPLE, SAMPLE_A, SAMPLE_B, TRAJ])
    await expect(app.runItem(id)).toBeVisible({ timeout: 60_000 });

  // The sample with approvals: where its first decision is, from the API; then by keyboard.
  const events = await app.server.call<{ events: { seq: number; kind: string }[] }>('events.read', {
    run_id: APPROVALS_SAMPLE,
    limit: 1000,
  });
  const decisions = events.events.filter((e) => /^action_/.test(e.kind));
  expect(decisions.map((e) => e.kind)).toContain('action_denied');
  const first = decisions[0]!.seq;
  await app.selectRun(APPROVALS_SAMPLE);
  await app.row(first - 1).click();
  await app.expectSeq(first - 1);
  // Each decision in turn, one key step at a time, with its kind in the payload view.
  let at = first - 1;
  for (const d of decisions.slice(0, 3)) {
    await app.press('ArrowRight', d.seq - at);
    at = d.seq;
    await app.expectSeq(d.seq);
    await expect(page.getByTestId('payload-view')).toHaveAttribute('data-kind', d.kind);
  }
  const limit = events.events.find((e) => e.kind === 'budget_exhausted');
  expect(limit).toBeTruthy();
  await app.screenshot('inspect-approvals');

  // The SWE-agent trajectory: each step a call paired with its result, the run completed.
  await app.runItem(TRAJ).click();
  await expect(page.getByTestId('run-title')).toHaveText(TRAJ);
  await page.getByTestId('tab-timeline').click();
  await expect(app.row(2)).toHaveAttribute('data-kind', 'model_proposed');
  await expect(app.row(3)).toHaveAttribute('data-kind', 'tool_returned');
  await app.row(2).click();
  await app.expectSeq(2);
  await app.press('ArrowRight');
  await app.expectSeq(3);
  await app.press('End');
  await expect(page.getByTestId('payload-view')).toHaveAttribute('data-kind', 'run_completed');
  await app.screenshot('swe-agent-trajectory');

  // Two samples of one eval, diffed.
  // A new page load: a change of the hash alone keeps the page (and would keep the token in it).
  await page.goto('about:blank');
  await app.open(`#/diff/${encodeURIComponent(SAMPLE_A)}/${encodeURIComponent(SAMPLE_B)}`);
  await expect(page.getByTestId('diff-view')).toBeVisible();
  await expect(page.getByTestId('first-divergence')).toContainText('First divergence');
  await expect(page.locator('[data-testid="diff-row"][data-first-divergence="true"]')).toHaveAttribute(
    'aria-selected',
    'true',
  );
  await app.screenshot('inspect-diff-samples');
});
