import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test, expect, AppPage } from './helpers/fixtures';
import { serve } from './helpers/server';
import { MOVED_OUTPUT, MOVED_SESSION, writeMovedValueSession } from './helpers/moved-value';

test('a tool output too large for its event: the payload view says it was moved to an artifact and opens it whole', async ({
  page,
  folder,
}) => {
  writeMovedValueSession(folder);
  const output = MOVED_OUTPUT;
  const home = mkdtempSync(path.join(os.tmpdir(), 'proofloop-home-'));
  const served = await serve(folder, { env: { PROOFLOOP_HOME: home } });
  try {
    const app = new AppPage(page, served);
    await app.open(`#/run/${MOVED_SESSION}/seq/2`);
    await expect(page.getByTestId('payload-kind')).toHaveText('tool_returned');
    const moved = page.getByTestId('moved-values');
    await expect(moved).toContainText('too large for the event and moved to an artifact');
    await expect(moved.getByTestId('artifact')).toContainText(
      `message.content[0].content (${output.length.toLocaleString('en')} bytes)`,
    );
    await expect(page.getByTestId('envelope-redacted')).toContainText('moved to artifacts');
    // The payload itself holds the excerpt and the note, not the end of the output.
    await page
      .getByTestId('payload-tree')
      .getByRole('button', { name: /0: \{4 keys\}/ })
      .click();
    await expect(page.getByTestId('payload-tree')).toContainText('moved to artifact sha256:');
    await expect(page.getByTestId('payload-tree')).not.toContainText('END-OF-OUTPUT');
    await moved.getByRole('button', { name: 'Open' }).click();
    await expect(moved.locator('.artifact-body')).toContainText('END-OF-OUTPUT');
  } finally {
    await served.stop();
    rmSync(home, { recursive: true, force: true });
  }
});
