import { test as base, expect, type Page } from '@playwright/test';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { serve, repoRoot, type Served } from './server';

export { expect };

/** Page helpers: what a person does, by data-testid, waiting for states (never for time). */
export class AppPage {
  constructor(
    readonly page: Page,
    readonly server: Served,
  ) {}

  async open(hash = ''): Promise<void> {
    // The token rides in the fragment after the route (the page takes it out at once).
    await this.page.goto(`${this.server.base}/${hash || '#'}${hash ? '&' : ''}token=${this.server.token}`);
    await expect(this.page.getByTestId('run-list')).toBeAttached();
  }

  runItem(runId: string) {
    return this.page.locator(`[data-testid="run-item"][data-run-id="${runId}"]`);
  }

  async selectRun(runId: string): Promise<void> {
    await this.runItem(runId).click();
    await expect(this.page.getByTestId('run-title')).toHaveText(runId);
    await expect(this.page.getByTestId('timeline-row').first()).toBeVisible();
  }

  row(seq: number) {
    return this.page.locator(`[data-testid="timeline-row"][data-seq="${seq}"]`);
  }

  async expectSeq(seq: number, head?: number): Promise<void> {
    await expect(this.page.getByTestId('seq-indicator')).toHaveText(
      head === undefined ? new RegExp(`^seq ${seq} / \\d+$`) : `seq ${seq} / ${head}`,
    );
    await expect(this.row(seq)).toHaveAttribute('aria-selected', 'true');
    await expect(this.page.getByTestId('payload-view')).toHaveAttribute('data-seq', String(seq));
  }

  /** Waits until the state panel shows the state at seq (when 'state.at' exists). */
  async expectStateAt(seq: number): Promise<void> {
    await expect(this.page.getByTestId('state-view')).toHaveAttribute('data-seq', String(seq));
    await expect(this.page.getByTestId('state-view')).toHaveAttribute('data-state', 'ready');
  }

  async press(key: string, times = 1): Promise<void> {
    for (let i = 0; i < times; i++) await this.page.keyboard.press(key);
  }

  async screenshot(name: string): Promise<void> {
    const dir = path.join(repoRoot, 'test/artifacts/screens');
    mkdirSync(dir, { recursive: true });
    await this.page.screenshot({ path: path.join(dir, `${name}.png`) });
  }
}

interface Fixtures {
  /** A fresh, empty runs folder for this test only. */
  folder: string;
  /** Starts `proofloop serve` on the test's folder (once per test; stopped after it). */
  startServer: () => Promise<Served>;
  /** The server for the folder, started on first use. */
  server: Served;
  app: AppPage;
}

export const test = base.extend<Fixtures>({
  // eslint-disable-next-line no-empty-pattern
  folder: async ({}, use) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'proofloop-e2e-'));
    await use(dir);
    rmSync(dir, { recursive: true, force: true });
  },
  startServer: async ({ folder }, use) => {
    let served: Served | null = null;
    await use(async () => {
      served ??= await serve(folder);
      return served;
    });
    await (served as Served | null)?.stop();
  },
  server: async ({ startServer }, use) => {
    await use(await startServer());
  },
  app: async ({ page, server }, use) => {
    page.on('pageerror', (e) => console.error(`page error: ${e.message}`));
    await use(new AppPage(page, server));
  },
});
