import { _electron as electron, expect, test } from '@playwright/test';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { appendWithCli, repoRoot } from './helpers/server';

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
  // The run is written as an agent writes one: the window may append annotations only.
  await appendWithCli(folder, 'desk', [
    { kind: 'run_started', payload: { task_id: 't', goal: 'g', agent: { name: 'sim' } } },
    { kind: 'model_proposed', payload: { call_id: 'c1', tool: 'read_file', args: {} } },
  ]);
  const app = await electron.launch({
    executablePath: bin.path!,
    args: [mainFile, `--user-data-dir=${userData}`, folder],
    cwd: repoRoot,
  });
  try {
    const page = await app.firstWindow();
    // The window talks to main only through the preload's contract surface: no host kind.
    const appended = await page.evaluate(async () => {
      type Api = { call(method: string, args: unknown): Promise<{ ok: boolean; error?: { code: string } }> };
      const api = (globalThis as unknown as { proofloop: Api }).proofloop;
      return api.call('events.append', {
        run_id: 'desk',
        kind: 'run_completed',
        payload: { outcome: 'passed' },
      });
    });
    expect(appended).toMatchObject({ ok: false, error: { code: 'forbidden' } });
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

test('desktop app: a file: navigation of the window opens nothing', async () => {
  skipUnless(hasElectronBinary, `Electron binary not installed: ${bin.why}`);
  skipUnless(existsSync(mainFile), `${mainFile} is not built: run \`npm run build\``);
  const folder = mkdtempSync(path.join(os.tmpdir(), 'proofloop-electron-'));
  const userData = mkdtempSync(path.join(os.tmpdir(), 'proofloop-electron-user-'));
  // A directory the user never chose, with a file in it: it must not become a runs folder.
  const target = mkdtempSync(path.join(os.tmpdir(), 'proofloop-electron-target-'));
  mkdirSync(path.join(target, 'sub'));
  writeFileSync(path.join(target, 'sub', 'keep.txt'), 'mine');
  const app = await electron.launch({
    executablePath: bin.path!,
    args: [mainFile, `--user-data-dir=${userData}`, folder],
    cwd: repoRoot,
  });
  try {
    const page = await app.firstWindow();
    await expect(page.getByTestId('run-list')).toBeAttached();
    const before = page.url();
    expect(before).toMatch(/^app:\/\/proofloop\//);
    // A compromised renderer sets location to a file: directory (and a form, and a link).
    // (The page's DOM, typed here: the test tsconfig has no DOM library.)
    type Doc = {
      location: { href: string };
      document: {
        createElement(t: 'a'): { href: string; click(): void };
        body: { append(e: unknown): void };
      };
    };
    await page.evaluate((url) => {
      (globalThis as unknown as Doc).location.href = url;
    }, `file://${target}`);
    await page.evaluate((url) => {
      const doc = (globalThis as unknown as Doc).document;
      const a = doc.createElement('a');
      a.href = url;
      doc.body.append(a);
      a.click();
    }, `file://${target}/sub`);
    await page.waitForTimeout(1500);
    expect(page.url()).toBe(before);
    // Nothing was opened or written there: no ledger, the folder as it was.
    expect(readdirSync(target).sort()).toEqual(['sub']);
    expect(existsSync(path.join(target, '.proofloop'))).toBe(false);
    const current = await page.evaluate(async () => {
      type Api = {
        call(method: string, args: unknown): Promise<{ ok: boolean; value?: { folder: string } }>;
      };
      return (globalThis as unknown as { proofloop: Api }).proofloop.call('folder.current', {});
    });
    expect(current.value?.folder).toBe(folder);
  } finally {
    await app.close();
    for (const d of [folder, userData, target]) rmSync(d, { recursive: true, force: true });
  }
});
