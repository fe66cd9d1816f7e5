import { defineConfig } from '@playwright/test';
import { CHROMIUM_LAUNCH } from './test/e2e/helpers/chromium';

// Browser tests run the renderer in Debian's Chromium against `proofloop serve` (web mode).
export default defineConfig({
  testDir: 'test/e2e',
  testMatch: '*.e2e.spec.ts',
  globalSetup: './test/e2e/helpers/global-setup.ts',
  outputDir: 'test/artifacts/results',
  timeout: 60_000,
  expect: { timeout: 10_000 },
  fullyParallel: false,
  workers: 2,
  reporter: [['list']],
  use: {
    viewport: { width: 1440, height: 900 },
    screenshot: 'only-on-failure',
    trace: 'retain-on-failure',
    launchOptions: CHROMIUM_LAUNCH,
  },
});
