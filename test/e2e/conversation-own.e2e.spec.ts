import { test, expect } from './helpers/fixtures';
import { appendRun, DEMO_EVENTS } from './helpers/runs';

test("the conversation view draws each of ProofLoop's own calls once, and a denied call says denied", async ({
  app,
  server,
  page,
}) => {
  await appendRun(server, 'demo', DEMO_EVENTS);
  await app.open();
  await app.selectRun('demo');
  await page.getByTestId('tab-conversation').click();
  // Four calls (proposal and invocation are one call): c1 read, c2 write, c3 denied, c4 pytest.
  const calls = page.getByTestId('conv-call');
  await expect(calls).toHaveCount(4);
  await expect(page.locator('[data-testid="conv-call"][data-call-id="c1"]')).toHaveCount(1);
  // The denied call: its decision, not a result it will never have.
  const denied = page.getByTestId('conv-denied');
  await expect(denied).toHaveCount(1);
  const row = page.locator('.conv-callrow').filter({ has: page.locator('[data-call-id="c3"]') });
  await expect(row.getByTestId('conv-denied')).toBeVisible();
  await expect(row).toContainText('net:deny');
  await expect(row).toContainText('network access is not allowed');
  await expect(page.getByText('no result yet')).toHaveCount(0);
  await app.screenshot('conversation-1440');
  await page.setViewportSize({ width: 1024, height: 700 });
  await app.screenshot('conversation-1024');
});
