import { test, expect } from './helpers/fixtures';
import { runTask } from './helpers/server';

/**
 * Issue 29, item 10: a failed run offers Resume where the runner can continue it from its ledger
 * (the crashy variant's model dies mid-run: run_failed model_crash), and where it cannot (the
 * rogue run ended by the judge's verdict) the button is off and says why beside it.
 */
test('Resume continues a crashed run to its end; a run ended by its verdict says why it cannot', async ({
  folder,
  app,
  page,
}) => {
  test.setTimeout(120_000);
  const crashy = await runTask(folder, 'crashy');
  const rogue = await runTask(folder, 'rogue');
  await app.open();
  await app.selectRun(crashy);
  await expect(page.getByTestId('run-outcome')).toHaveText('error');
  const resume = page.getByTestId('resume-button');
  await expect(resume).toBeEnabled();
  await expect(resume).toHaveAttribute('title', /model crash/);
  const before = Number((await page.getByTestId('seq-indicator').textContent())!.split('/')[1]);
  await resume.click();
  // The same run goes on: run_resumed after the failure, then the rest of the run to its verdict.
  await expect(page.getByTestId('run-outcome')).toHaveText('passed', { timeout: 60_000 });
  await expect(page.getByTestId('run-title')).toHaveText(crashy);
  await expect(page.locator(`[data-testid="timeline-row"][data-seq="${before + 1}"]`)).toHaveAttribute(
    'data-kind',
    'run_resumed',
  );
  await expect(page.getByTestId('resume-button')).toHaveCount(0);

  await app.selectRun(rogue);
  await expect(page.getByTestId('run-outcome')).toHaveText('failed');
  await expect(page.getByTestId('resume-button')).toBeDisabled();
  await expect(page.getByTestId('resume-why')).toHaveText('ended by its verdict: rerun instead');
  await app.screenshot('resume');
});
