import { test, expect } from './helpers/fixtures';
import type { Served } from './helpers/server';

async function finishedRun(server: Served, task: string, variant: string): Promise<string> {
  const { run_id } = await server.call<{ run_id: string }>('run.start', { task_id: task, variant, seed: 1 });
  // As the page sees a run end (run.wait is the CLI's): its status leaves "running".
  await expect
    .poll(async () => (await server.call<{ status: string }>('run.get', { run_id })).status, {
      timeout: 60_000,
    })
    .not.toBe('running');
  return run_id;
}

test('rerun a run, then diff the two with the first divergence shown', async ({ app, server, page }) => {
  const task = (await server.call<{ tasks: { id: string }[] }>('tasks.list')).tasks[0]!.id;
  const first = await finishedRun(server, task, 'careful');

  await app.open();
  await app.selectRun(first);
  await page.getByTestId('rerun-button').click();
  await expect(page.getByTestId('run-title')).not.toHaveText(first);
  const second = (await page.getByTestId('run-title').textContent())!;
  await expect(page.getByTestId('run-status')).toHaveText(/completed|failed/, { timeout: 45_000 });

  // The source run is preselected for comparison.
  await expect(page.getByTestId('compare-select')).toHaveValue(first);
  await page.getByTestId('compare-button').click();
  await expect(page.getByTestId('diff-view')).toBeVisible();
  await expect(page).toHaveURL(new RegExp(`#/diff/${first}/${second}$`));
  await expect(page.getByTestId('first-divergence')).toBeVisible();
  // A deterministic agent reruns to the same events: identical, or a divergence that is focused.
  const text = (await page.getByTestId('first-divergence').textContent())!;
  if (!/Identical/.test(text))
    await expect(page.locator('[data-testid="diff-row"][data-first-divergence="true"]')).toHaveAttribute(
      'aria-selected',
      'true',
    );
  await app.screenshot('diff-rerun');
});

test('diff of two variants focuses the first divergence and shows its payloads', async ({
  app,
  server,
  page,
}) => {
  const task = (await server.call<{ tasks: { id: string }[] }>('tasks.list')).tasks[0]!.id;
  const left = await finishedRun(server, task, 'careful');
  const right = await finishedRun(server, task, 'rogue');

  await app.open(`#/diff/${left}/${right}`);
  await expect(page.getByTestId('diff-view')).toBeVisible();
  await expect(page.getByTestId('first-divergence')).toContainText('First divergence');
  const firstRow = page.locator('[data-testid="diff-row"][data-first-divergence="true"]');
  await expect(firstRow).toBeInViewport();
  await expect(firstRow).toHaveAttribute('aria-selected', 'true');
  await expect(page.getByTestId('diff-detail')).toBeVisible();
  await expect(page.locator('[data-testid="diff-row"][data-type="same"]').first()).toBeVisible();
  await expect(page.getByTestId('final-state-diff')).toBeVisible();
  await app.screenshot('diff-variants');
});
