import { test, expect } from './helpers/fixtures';
import { appendRun, DEMO_EVENTS } from './helpers/runs';

const HEAD = DEMO_EVENTS.length;

test('search counts its hits, wraps at the end, marks them on the scrubber and highlights them in the payload', async ({
  app,
  server,
  page,
}) => {
  await appendRun(server, 'demo', DEMO_EVENTS);
  await app.open('#/run/demo/seq/1');
  await app.expectSeq(1, HEAD);
  await page.keyboard.press('/');
  await page.getByTestId('search-input').fill('pytest');
  const status = page.getByTestId('search-status');
  // "pytest" is in the proposal (13), the rule that allowed it (14), the invocation (15) and the verdict's command (17).
  await page.keyboard.press('Enter');
  await app.expectSeq(13, HEAD);
  await expect(status).toHaveText('1 of 4');
  await expect(page.getByTestId('scrub-hit')).toHaveCount(4);
  await expect(page.getByTestId('payload-view')).toHaveAttribute('data-hits', /^[1-9]\d*$/);
  await page.keyboard.press('Enter');
  await app.expectSeq(14, HEAD);
  await expect(status).toHaveText('2 of 4');
  await page.keyboard.press('Enter');
  await app.expectSeq(15, HEAD);
  await expect(status).toHaveText('3 of 4');
  await page.keyboard.press('Enter');
  await app.expectSeq(17, HEAD);
  await expect(status).toHaveText('4 of 4');
  await app.screenshot('search-1440');
  // Past the last hit: back to the first, and it says so.
  await page.keyboard.press('Enter');
  await app.expectSeq(13, HEAD);
  await expect(status).toHaveText('1 of 4 · wrapped');
  await page.keyboard.press('Shift+Enter');
  await app.expectSeq(17, HEAD);
  await expect(status).toHaveText('4 of 4 · wrapped');
  await page.getByTestId('search-input').fill('nothing-like-this');
  await page.keyboard.press('Enter');
  await expect(status).toHaveText('no match for "nothing-like-this"');
  await expect(page.getByTestId('scrub-hit')).toHaveCount(0);
  await page.keyboard.press('Escape');

  // One kind chosen reads as one kind.
  await page.keyboard.press('f');
  await page.locator('[data-testid="kind-filter"] input[data-kind="model_proposed"]').check();
  await page.getByTestId('kind-filter-apply').click();
  await expect(page.getByTestId('filter-button')).toContainText('Filter: 1 kind ');
  await page.setViewportSize({ width: 1024, height: 700 });
  await app.screenshot('search-1024');
});
