import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, test } from '@playwright/test';
import { Ledger } from '../../electron/ledger';
import { exportBundle } from '../../electron/bundle';
import { extractBundle, removeExtracted } from '../../electron/bundle/zip-read';

/** A bundle's report.html, taken out of the zip into a fresh folder. */
async function reportOfBundle(): Promise<{ file: string; cleanup: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), 'pl-'));
  const ledger = Ledger.open(join(dir, 'runs'));
  try {
    const w = ledger.writer('report-demo');
    w.append('run_started', {
      task_id: 'calc-bug',
      goal: 'fix add()',
      agent: { name: 'sim', variant: 'careful' },
    });
    w.append('model_proposed', {
      call_id: 'c1',
      tool: 'read_file',
      args: { path: 'src/add.ts' },
      tokens: 12,
    });
    w.append('model_responded', {
      content: 'I will ask frank@example.com </script><script>alert(1)</script>',
      tokens: 9,
    });
    w.append('run_completed', { outcome: 'passed' });
    w.close();
    const out = join(dir, 'bundle.zip');
    await exportBundle(ledger, { runIds: ['report-demo'], out });
    const b = await extractBundle(out);
    const entry = b.entries.get('report.html')!;
    return { file: entry.file!, cleanup: () => removeExtracted(b) };
  } finally {
    ledger.close();
  }
}

test('report.html shows the timeline and a payload offline, with no request beyond the file', async ({
  browser,
}) => {
  const { file, cleanup } = await reportOfBundle();
  // The extracted entry is named `<n>.bin`; give the browser an .html name next to it.
  const html = file.replace(/\.bin$/, '.html');
  copyFileSync(file, html);
  const context = await browser.newContext();
  try {
    await context.setOffline(true);
    const requests: string[] = [];
    await context.route('**/*', (route) =>
      route.request().url().startsWith('file:') ? route.continue() : route.abort('blockedbyclient'),
    );
    const page = await context.newPage();
    page.on('request', (r) => {
      if (!r.url().startsWith('file:')) requests.push(r.url());
    });
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await page.goto(pathToFileURL(html).href);

    await expect(page.getByTestId('run-item')).toHaveCount(1);
    await expect(page.getByTestId('run-item')).toContainText('report-demo');
    const items = page.getByTestId('timeline-item');
    await expect(items).toHaveCount(4);
    await expect(items.nth(0)).toContainText('run_started');
    await expect(items.nth(2)).toContainText('redacted');

    await items.nth(2).click();
    const payload = page.getByTestId('payload');
    await expect(payload).toContainText('model_responded');
    await expect(payload).toContainText('[REDACTED:email#1]');
    await expect(payload.locator('mark.ph')).toHaveText('[REDACTED:email#1]');
    await expect(payload).toContainText('</script><script>alert(1)</script>');
    await expect(payload).not.toContainText('frank@example.com');

    await items.nth(1).click();
    await expect(payload).toContainText('src/add.ts');
    await expect(page.getByTestId('state')).toContainText('"status": "completed"');
    await expect(page.getByTestId('rules')).toContainText('email');

    expect(requests).toEqual([]);
    expect(dialogs).toEqual([]);
  } finally {
    await context.close();
    cleanup();
  }
});
