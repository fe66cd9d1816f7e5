import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test, expect } from './helpers/fixtures';
import { appendWithCli, serve } from './helpers/server';
import { DEMO_EVENTS } from './helpers/runs';

test('web mode opens a second folder from the page, without a restart; a folder it was not given is refused', async ({
  page,
  folder,
}) => {
  const second = mkdtempSync(path.join(os.tmpdir(), 'proofloop-e2e-second-'));
  try {
    await appendWithCli(folder, 'run-in-first', DEMO_EVENTS);
    await appendWithCli(second, 'run-in-second', DEMO_EVENTS);
    const served = await serve(folder, { args: [second] });
    try {
      await page.goto(`${served.base}/#token=${served.token}`);
      await expect(page.locator('[data-testid="run-item"][data-run-id="run-in-first"]')).toBeVisible();
      // The menu is a menu: Escape closes it, and so does a click anywhere else.
      await page.getByTestId('folder-path').click();
      await expect(page.getByTestId('folder-menu')).toBeVisible();
      await page.keyboard.press('Escape');
      await expect(page.getByTestId('folder-menu')).toHaveCount(0);
      await page.getByTestId('folder-path').click();
      await expect(page.getByTestId('folder-menu')).toBeVisible();
      // A click beside the menu (the bottom right of the window, away from the popover).
      const size = page.viewportSize()!;
      await page.mouse.click(size.width - 40, size.height - 40);
      await expect(page.getByTestId('folder-menu')).toHaveCount(0);
      await page.locator('[data-testid="run-item"][data-run-id="run-in-first"]').click();
      // `?` lists every key the README names, PageUp/PageDown included.
      await page.keyboard.press('?');
      await expect(page.getByTestId('help-box')).toContainText('PageUp / PageDown');
      await page.keyboard.press('Escape');
      await expect(page.getByTestId('help-box')).toHaveCount(0);
      await page.getByTestId('folder-path').click();
      const options = page.getByTestId('folder-option');
      await expect(options).toHaveCount(2);
      await page.locator(`[data-testid="folder-option"][data-folder="${second}"]`).click();
      await expect(page.locator('[data-testid="run-item"][data-run-id="run-in-second"]')).toBeVisible();
      await expect(page.locator('[data-testid="run-item"][data-run-id="run-in-first"]')).toHaveCount(0);
      await expect(page.getByTestId('folder-path')).toContainText(second);
      await page.screenshot({ path: path.join('test/artifacts/screens', 'open-folder-1440.png') });
      // And back.
      await page.getByTestId('folder-path').click();
      await page.locator(`[data-testid="folder-option"][data-folder="${folder}"]`).click();
      await expect(page.locator('[data-testid="run-item"][data-run-id="run-in-first"]')).toBeVisible();
      // A path the command line did not name stays closed to the page.
      const r = await page.evaluate(
        async ([base, token]) => {
          const res = await fetch(`${base}/api/folder.open`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-proofloop-token': token! },
            body: JSON.stringify({ folder: '/tmp' }),
          });
          return (await res.json()) as { ok: boolean; error?: { code: string } };
        },
        [served.base, served.token],
      );
      expect(r.ok).toBe(false);
      expect(r.error?.code).toBe('forbidden_path');
    } finally {
      await served.stop();
    }
  } finally {
    rmSync(second, { recursive: true, force: true });
  }
});
