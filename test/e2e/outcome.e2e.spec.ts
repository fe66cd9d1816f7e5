import { copyFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { test, expect } from './helpers/fixtures';
import { cli, runTask } from './helpers/server';
import { extractBundle, removeExtracted } from '../../electron/bundle/zip-read';

/**
 * A run's outcome comes first, apart from its status and its chain: the rogue run (the judge
 * failed it) and the looping run (its budget ran out) both "completed" with an intact chain, and
 * must read as failed in the list, the header and the bundle's report.html.
 */
test('the rogue and looping runs read as failed in the list, the header and report.html', async ({
  folder,
  startServer,
  page,
  browser,
}) => {
  test.setTimeout(120_000);
  const careful = await runTask(folder, 'careful');
  const rogue = await runTask(folder, 'rogue');
  const looping = await runTask(folder, 'looping');
  const server = await startServer();
  await page.goto(`${server.base}/#token=${server.token}`);
  const item = (id: string) => page.locator(`[data-testid="run-item"][data-run-id="${id}"]`);
  await expect(item(rogue)).toBeVisible();

  // The list: each row's first word is its outcome; all three "completed" with a verified chain.
  for (const id of [careful, rogue, looping]) {
    await expect(item(id)).toHaveAttribute('data-status', 'completed');
    await expect(item(id).getByTestId('integrity')).toHaveText('verified');
  }
  await expect(item(careful).getByTestId('run-item-outcome')).toHaveText('passed');
  await expect(item(rogue).getByTestId('run-item-outcome')).toHaveText('failed');
  await expect(item(looping).getByTestId('run-item-outcome')).toHaveText('budget');
  await expect(item(rogue).getByTestId('run-item-outcome')).toHaveClass(/o-failing/);
  await expect(item(looping).getByTestId('run-item-outcome')).toHaveClass(/o-failing/);
  await expect(item(careful).getByTestId('run-item-outcome')).not.toHaveClass(/o-failing/);

  // Filterable: "not passed" keeps the two failures; one outcome keeps its runs only.
  await page.getByTestId('run-outcome-filter').selectOption('failing');
  await expect(page.getByTestId('run-item')).toHaveCount(2);
  await expect(item(careful)).toHaveCount(0);
  await page.getByTestId('run-outcome-filter').selectOption('budget');
  await expect(page.getByTestId('run-item')).toHaveCount(1);
  await expect(item(looping)).toBeVisible();
  await page.getByTestId('run-outcome-filter').selectOption('');
  await expect(page.getByTestId('run-item')).toHaveCount(3);

  // Sortable: failures first, the pass last, whatever the order of time.
  await page.getByTestId('run-sort').selectOption('outcome');
  await expect(page.getByTestId('run-item-outcome')).toHaveText(['failed', 'budget', 'passed']);

  // The header.
  await item(rogue).click();
  await expect(page.getByTestId('run-title')).toHaveText(rogue);
  await expect(page.getByTestId('run-outcome')).toHaveText('failed');
  await expect(page.getByTestId('run-outcome')).toHaveClass(/o-failing/);
  await item(looping).click();
  await expect(page.getByTestId('run-title')).toHaveText(looping);
  await expect(page.getByTestId('run-outcome')).toHaveText('budget');
  await item(careful).click();
  await expect(page.getByTestId('run-outcome')).toHaveText('passed');

  await page.setViewportSize({ width: 1440, height: 900 });
  await page.screenshot({ path: path.join('test/artifacts/screens', 'outcome-1440.png') });
  await page.setViewportSize({ width: 1024, height: 700 });
  await page.screenshot({ path: path.join('test/artifacts/screens', 'outcome-1024.png') });

  // report.html of a bundle of the three.
  const zip = path.join(folder, 'audit.zip');
  const ex = await cli(['--folder', folder, 'export', careful, rogue, looping, '--out', zip]);
  expect(ex.code, ex.stderr).toBe(0);
  const b = await extractBundle(zip);
  try {
    const html = b.entries.get('report.html')!.file!.replace(/\.bin$/, '.html');
    copyFileSync(b.entries.get('report.html')!.file!, html);
    const report = await browser.newPage();
    await report.goto(pathToFileURL(html).href);
    const rows = report.getByTestId('run-item');
    await expect(rows).toHaveCount(3);
    const word = async (id: string) => rows.filter({ hasText: id }).getByTestId('run-outcome').textContent();
    expect(await word(careful)).toBe('passed');
    expect(await word(rogue)).toBe('failed');
    expect(await word(looping)).toBe('budget');
    await rows.filter({ hasText: rogue }).click();
    await expect(report.getByTestId('run-heading')).toContainText(rogue);
    await expect(report.getByTestId('run-heading').getByTestId('run-outcome')).toHaveText('failed');
    await report.close();
  } finally {
    removeExtracted(b);
  }
});
