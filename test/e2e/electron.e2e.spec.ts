import { _electron as electron, expect, test } from '@playwright/test';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from './helpers/server';

const require = createRequire(import.meta.url);

function electronBinary(): { path: string | null; why: string } {
  try {
    const p = require('electron') as unknown as string;
    return existsSync(p) ? { path: p, why: '' } : { path: null, why: `${p} does not exist` };
  } catch (e) {
    return { path: null, why: (e as Error).message };
  }
}

const bin = electronBinary();
const hasElectronBinary = bin.path !== null;
const mainFile = path.join(repoRoot, 'dist/electron/main.js');

/** Skips the test when `ok` is false, printing why (the list reporter shows only that it skipped). */
function skipUnless(ok: boolean, why: string): void {
  if (!ok) console.log(`skipping the Electron e2e: ${why}`);
  test.skip(!ok, why);
}

test('desktop app: open a folder, select a run, step through it', async () => {
  skipUnless(hasElectronBinary, `Electron binary not installed: ${bin.why}`);
  skipUnless(existsSync(mainFile), `${mainFile} is not built: run \`npm run build\``);
  const folder = mkdtempSync(path.join(os.tmpdir(), 'proofloop-electron-'));
  const userData = mkdtempSync(path.join(os.tmpdir(), 'proofloop-electron-user-'));
  const app = await electron.launch({
    executablePath: bin.path!,
    args: [mainFile, `--user-data-dir=${userData}`, folder],
    cwd: repoRoot,
  });
  try {
    const page = await app.firstWindow();
    // The window talks to main only through the preload's contract surface.
    const appended = await page.evaluate(async () => {
      type Api = { call(method: string, args: unknown): Promise<{ ok: boolean }> };
      const api = (globalThis as unknown as { proofloop: Api }).proofloop;
      await api.call('events.append', {
        run_id: 'desk',
        kind: 'run_started',
        payload: { task_id: 't', goal: 'g', agent: { name: 'sim' } },
      });
      return api.call('events.append', {
        run_id: 'desk',
        kind: 'model_proposed',
        payload: { call_id: 'c1', tool: 'read_file', args: {} },
      });
    });
    expect(appended.ok).toBe(true);
    const item = page.locator('[data-testid="run-item"][data-run-id="desk"]');
    await expect(item).toBeVisible();
    await item.click();
    await expect(page.getByTestId('seq-indicator')).toHaveText('seq 1 / 2');
    await page.keyboard.press('ArrowRight');
    await expect(page.getByTestId('seq-indicator')).toHaveText('seq 2 / 2');
    await expect(page.getByTestId('payload-kind')).toHaveText('model_proposed');
  } finally {
    await app.close();
    rmSync(folder, { recursive: true, force: true });
    rmSync(userData, { recursive: true, force: true });
  }
});
