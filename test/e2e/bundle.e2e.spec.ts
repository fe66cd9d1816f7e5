import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import yazl from 'yazl';
import { extractBundle, removeExtracted } from '../../electron/bundle/zip-read';
import { AppPage, test, expect } from './helpers/fixtures';
import { appendRun, DEMO_EVENTS, type EventSpec } from './helpers/runs';

/** Built at run time so no scanner flags this file: an AWS key id the ledger redacts on append. */
const AWS_KEY = 'AKIA' + 'ABCDEFGHIJKLMNOP';
const EMAIL = 'ana@example.com';
const LEAK_SEQ = 5;
const LONG_SEQ = 6;

/** A short run whose tool result leaks a key and an e-mail address, and whose model wrote a long text. */
const LEAKY: EventSpec[] = [
  ...DEMO_EVENTS.slice(0, 4),
  /* 5 */ {
    kind: 'tool_returned',
    payload: {
      call_id: 'c1',
      status: 'ok',
      duration_ms: 12,
      excerpt: `AWS_KEY=${AWS_KEY} # owner ${EMAIL}`,
    },
  },
  /* 6 */ {
    kind: 'model_responded',
    payload: { content: 'The fix is in add(). '.repeat(30), tokens: 120 },
  },
  /* 7 */ { kind: 'run_completed', payload: { outcome: 'passed' } },
];

test('export a redacted bundle with a preview, verify it, open it as a read-only bundle run', async ({
  app,
  server,
  page,
}) => {
  await appendRun(server, 'leaky', LEAKY);
  await app.open();
  await app.selectRun('leaky');

  // The live ledger already replaced the key on append; the e-mail is still there.
  await page.keyboard.press('g');
  await page.getByTestId('goto-input').fill(String(LEAK_SEQ));
  await page.keyboard.press('Enter');
  await app.expectSeq(LEAK_SEQ);
  const tree = page.getByTestId('payload-tree');
  await expect(tree.getByTestId('redacted')).toHaveText(/^\[REDACTED:aws_access_key_id#\d+\]$/);
  await expect(tree).toContainText(EMAIL);
  await expect(tree).not.toContainText(AWS_KEY);

  // Export dialog: the selected run preselected, the share profile by default, a preview first.
  await page.getByTestId('export-bundle-button').click();
  const dialog = page.getByTestId('export-dialog');
  await expect(dialog).toBeVisible();
  await expect(dialog.locator('[data-testid="export-run"][data-run-id="leaky"]')).toBeChecked();
  await expect(dialog.getByTestId('profile-share')).toBeChecked();
  await expect(dialog.getByTestId('export-out')).toHaveValue('leaky.bundle.zip');
  const preview = dialog.getByTestId('export-preview');
  await expect(preview.locator('[data-testid="preview-rule"][data-rule="email"]')).toContainText('email 1');
  await expect(preview.locator('[data-testid="preview-rule"][data-rule="full_text"]')).toContainText(
    'full_text 1',
  );
  await expect(preview).not.toContainText(EMAIL);
  const seqLinks = preview.locator('[data-testid="preview-seq"][data-run-id="leaky"]');
  await expect(seqLinks).toHaveText([String(LEAK_SEQ), String(LONG_SEQ)]);
  await app.screenshot('bundle-export-preview');

  // The credentials profile leaves the e-mail alone.
  await dialog.getByTestId('profile-credentials').check();
  await expect(preview.locator('[data-testid="preview-rule"][data-rule="email"]')).toHaveCount(0);
  await dialog.getByTestId('profile-share').check();
  await expect(preview.locator('[data-testid="preview-rule"][data-rule="email"]')).toContainText('email 1');

  // A seq of the preview jumps to it in the timeline; the dialog comes back as it was.
  await preview.locator(`[data-testid="preview-seq"][data-seq="${LONG_SEQ}"]`).click();
  await expect(dialog).toBeHidden();
  await app.expectSeq(LONG_SEQ);
  await page
    .getByTestId('export-resume')
    .getByRole('button', { name: /Back to export/ })
    .click();
  await expect(dialog.getByTestId('export-out')).toHaveValue('leaky.bundle.zip');

  // A path outside the folder is refused by the service, and the error is shown.
  await dialog.getByTestId('export-out').fill('../outside.bundle.zip');
  await dialog.getByTestId('export-submit').click();
  await expect(dialog.getByTestId('error')).toContainText('outside');
  await dialog.getByTestId('export-out').fill('leaky.bundle.zip');

  await dialog.getByTestId('export-submit').click();
  const result = dialog.getByTestId('export-result');
  await expect(result.getByTestId('export-file')).toHaveText(/leaky\.bundle\.zip$/);
  await expect(result.getByTestId('export-sha256')).toHaveText(/^[0-9a-f]{64}$/);
  await expect(result.getByTestId('export-size')).toHaveText(/\d/);
  await expect(result.getByTestId('export-signed')).toHaveText('no');

  await result.getByTestId('verify-bundle').click();
  const verdict = result.getByTestId('export-verdict');
  await expect(verdict.getByTestId('verdict-integrity')).toHaveAttribute('data-value', 'ok');
  await expect(verdict.getByTestId('verdict-completeness')).toHaveAttribute('data-value', 'unknown');
  await expect(verdict.getByTestId('verdict-signature')).toHaveAttribute('data-value', 'absent');
  await app.screenshot('bundle-export-verified');

  // Open the bundle: its run joins the list as a read-only bundle run with the verdict on top.
  await result.getByTestId('open-exported').click();
  const openDialog = page.getByTestId('open-bundle-dialog');
  await expect(openDialog.getByTestId('open-bundle-path')).toHaveValue('leaky.bundle.zip');
  await openDialog.getByTestId('open-bundle-submit').click();
  await expect(openDialog).toBeHidden();

  const bundleItem = page.locator('[data-testid="run-item"][data-run-id^="leaky:bundle-"]');
  await expect(bundleItem).toHaveCount(1);
  await expect(bundleItem).toContainText('bundle');
  await expect(bundleItem).toHaveAttribute('aria-selected', 'true');
  const banner = page.getByTestId('bundle-banner');
  await expect(banner).toHaveAttribute('data-tone', 'warn');
  await expect(banner.getByTestId('verdict-integrity')).toHaveAttribute('data-value', 'ok');
  await expect(banner).toContainText('unsigned bundles cannot prove nothing was cut off');
  await expect(banner.getByTestId('verdict-signature')).toHaveAttribute('data-value', 'absent');
  await expect(page.getByTestId('read-only')).toBeVisible();
  await expect(page.getByTestId('rerun-button')).toHaveCount(0);
  await expect(page.getByTestId('replay-button')).toHaveCount(0);

  await page.keyboard.press('g');
  await page.getByTestId('goto-input').fill(String(LEAK_SEQ));
  await page.keyboard.press('Enter');
  await app.expectSeq(LEAK_SEQ);
  const pills = page.getByTestId('payload-tree').getByTestId('redacted');
  await expect(pills).toHaveText([/^\[REDACTED:aws_access_key_id#\d+\]$/, '[REDACTED:email#1]']);
  await expect(page.getByTestId('payload-tree')).not.toContainText(EMAIL);
  await expect(page.getByTestId('envelope')).toContainText('original digest kept');

  await app.press('ArrowRight');
  await app.expectSeq(LONG_SEQ);
  await expect(page.getByTestId('payload-tree').getByTestId('redacted')).toHaveText(
    /^\[REDACTED:full_text\] [\d,]+ chars$/,
  );
  await app.screenshot('bundle-run-banner');

  // Exporting the bundle run again: nothing new to redact, and the preview says its events were
  // redacted already instead of "nothing matches" beside a count of redacted events.
  await page.getByTestId('export-bundle-button').click();
  await expect(dialog.getByTestId('preview-nothing')).toContainText(
    /already redacted and go out as they are/,
  );
  await page.keyboard.press('Escape');
});

test('opening something that is not a bundle shows why', async ({ app, server, page }) => {
  await appendRun(server, 'demo', DEMO_EVENTS.slice(0, 3));
  await app.open();
  await page.getByTestId('open-bundle').click();
  const dialog = page.getByTestId('open-bundle-dialog');
  await dialog.getByTestId('open-bundle-path').fill('missing.bundle.zip');
  await dialog.getByTestId('open-bundle-submit').click();
  await expect(dialog.getByTestId('error')).toBeVisible();
  await dialog.getByTestId('open-bundle-path').fill('../../etc/passwd');
  await dialog.getByTestId('open-bundle-submit').click();
  await expect(dialog.getByTestId('error')).toContainText('outside');
  await app.screenshot('bundle-open-error');
});

test('the File menu\'s "export-bundle" command opens the export dialog on the selected run', async ({
  app,
  server,
  page,
}) => {
  await appendRun(server, 'demo', DEMO_EVENTS.slice(0, 3));
  // Stand in for the Electron menu: the push channel delivers one ui.command (and no reconnect soon).
  let sent = false;
  await page.route('**/api/events?*', (route) => {
    if (sent) return route.abort();
    sent = true;
    return route.fulfill({
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
      body: 'retry: 600000\n\nevent: ui.command\ndata: {"command":"export-bundle","run_id":"demo"}\n\n',
    });
  });
  await app.open();
  const dialog = page.getByTestId('export-dialog');
  await expect(dialog).toBeVisible();
  await expect(dialog.locator('[data-testid="export-run"][data-run-id="demo"]')).toBeChecked();
  await expect(dialog.getByTestId('export-out')).toHaveValue('demo.bundle.zip');
  await expect(dialog.getByTestId('preview-nothing')).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
});

/** A copy of a bundle with one event's payload changed and nothing else: what a forger would do. */
async function tamper(folder: string, from: string, to: string): Promise<void> {
  const b = await extractBundle(path.join(folder, from));
  try {
    const zip = new yazl.ZipFile();
    for (const e of b.entries.values()) {
      let data = readFileSync(e.file!);
      if (e.name.endsWith('events.jsonl'))
        data = Buffer.from(data.toString('utf8').replace('"outcome":"passed"', '"outcome":"failed"'));
      zip.addBuffer(data, e.name);
    }
    zip.end();
    await new Promise<void>((resolve, reject) => {
      const out = createWriteStream(path.join(folder, to));
      out.on('close', resolve).on('error', reject);
      zip.outputStream.pipe(out);
    });
  } finally {
    removeExtracted(b);
  }
}

test('a signed bundle opens green; the same bundle altered opens red at the altered seq', async ({
  startServer,
  page,
}) => {
  // The signing key is made in a home of this test's own, never the user's.
  const home = mkdtempSync(path.join(os.tmpdir(), 'proofloop-home-'));
  const before = process.env.PROOFLOOP_HOME;
  process.env.PROOFLOOP_HOME = home;
  try {
    const server = await startServer();
    const app = new AppPage(page, server);
    await appendRun(server, 'signed', LEAKY);
    await app.open();
    await page.locator('[data-testid="run-item"][data-run-id="signed"]').click();
    await page.getByTestId('export-bundle-button').click();
    const dialog = page.getByTestId('export-dialog');
    await dialog.getByTestId('export-sign').check();
    await expect(dialog.getByTestId('export-preview')).toBeVisible();
    await dialog.getByTestId('export-submit').click();
    await expect(dialog.getByTestId('export-signed')).toHaveText(/^yes, key sha256:[0-9a-f]{64}$/);
    await dialog.getByTestId('verify-bundle').click();
    await expect(dialog.getByTestId('verdict-signature')).toHaveAttribute('data-value', 'valid');
    await expect(dialog.getByTestId('verdict-completeness')).toHaveAttribute('data-value', 'ok');
    await page.keyboard.press('Escape');
    await expect(dialog).toBeHidden();

    await tamper(server.folder, 'signed.bundle.zip', 'tampered.bundle.zip');

    for (const [file, tone] of [
      ['signed.bundle.zip', 'ok'],
      ['tampered.bundle.zip', 'bad'],
    ] as const) {
      await page.getByTestId('open-bundle').click();
      await page.getByTestId('open-bundle-path').fill(file);
      await page.getByTestId('open-bundle-submit').click();
      await expect(page.getByTestId('open-bundle-dialog')).toBeHidden();
      const banner = page.getByTestId('bundle-banner');
      await expect(banner).toHaveAttribute('data-tone', tone);
      await expect(banner).toContainText(file);
      if (tone === 'ok') {
        await expect(banner.getByTestId('verdict-signature')).toHaveAttribute('data-value', 'valid');
        await app.screenshot('bundle-run-signed');
      } else {
        await expect(banner.getByTestId('verdict-integrity')).toHaveAttribute('data-value', 'failed');
        await expect(banner.getByTestId('verdict-first-failure')).toContainText('seq 7');
        await banner.getByTestId('failure-seq').click();
        await expect(page.getByTestId('payload-view')).toHaveAttribute('data-seq', '7');
        await app.screenshot('bundle-run-tampered');
      }
    }
  } finally {
    if (before === undefined) delete process.env.PROOFLOOP_HOME;
    else process.env.PROOFLOOP_HOME = before;
    rmSync(home, { recursive: true, force: true });
  }
});
