import { cpSync } from 'node:fs';
import path from 'node:path';
import { test, expect, AppPage } from './helpers/fixtures';
import { repoRoot, runTask, serve } from './helpers/server';
import { sender } from '../integration/helpers/otel-sender';

/**
 * The README's jobs as a new user meets them, at 1440×900 and 1024×700 (issue 29): the inspector
 * on a run, a diff of two runs, a Claude Code session's conversation, an OTLP run's span tree and
 * the export dialog. Screenshots go to test/artifacts/screens/readme-<job>-<width>.png; the ones
 * the README shows are copied to docs/images/ by hand after looking at them. Each shot also checks
 * that the job's view is there, so a broken view fails here rather than in a picture.
 */
test('README jobs at 1440×900 and 1024×700', async ({ page, folder }) => {
  test.setTimeout(240_000);
  const careful = await runTask(folder, 'careful');
  const hasty = await runTask(folder, 'hasty');
  cpSync(path.join(repoRoot, 'test/fixtures/claude-code/projects'), path.join(folder, 'sessions'), {
    recursive: true,
  });
  const server = await serve(folder);
  const app = new AppPage(page, server);
  const snd = sender(server.otlp!, 'proto');
  try {
    const c = { 'gen_ai.conversation.id': 'readme' };
    const root = snd.span('invoke_agent coder', { ...c, 'gen_ai.operation.name': 'invoke_agent' });
    const chat = snd.span(
      'chat gpt-4.1',
      {
        ...c,
        'gen_ai.operation.name': 'chat',
        'gen_ai.input.messages': JSON.stringify([
          { role: 'user', parts: [{ type: 'text', content: 'Make the discount tests pass' }] },
        ]),
      },
      root,
    );
    await snd.end(chat);
    const tool = snd.span('execute_tool run_tests', { ...c, 'gen_ai.operation.name': 'execute_tool' }, root);
    await new Promise((r) => setTimeout(r, 40));
    await snd.end(tool);
    await snd.end(root);

    for (const [w, h] of [
      [1440, 900],
      [1024, 700],
    ] as const) {
      await page.setViewportSize({ width: w, height: h });
      const shot = (job: string) => app.screenshot(`readme-${job}-${w}`);
      await app.open();
      await page
        .getByTestId('run-sort')
        .selectOption('id')
        .catch(() => undefined);

      // Scrub a run: its timeline, the payload and the state at a seq.
      await app.selectRun(hasty);
      await page.getByTestId('tab-timeline').click();
      await app.row(12).click();
      await app.expectSeq(12);
      await shot('inspector');

      // Rerun and diff: two runs aligned, the first divergence.
      await page.getByTestId('compare-select').selectOption(careful);
      await page.getByTestId('compare-button').click();
      await expect(page.getByTestId('diff-view')).toBeVisible();
      await shot('diff');

      // Export a redacted bundle.
      await app.open(`#/run/${hasty}`);
      await page.getByTestId('export-bundle-button').click();
      await expect(page.getByTestId('export-dialog')).toBeVisible();
      await shot('export');
      await page.keyboard.press('Escape');

      // A Claude Code session, in its conversation.
      await page.locator('[data-testid="run-item"][data-format="claude_code"]').first().click();
      await page.getByTestId('tab-conversation').click();
      await expect(page.getByTestId('conv-item').first()).toBeVisible();
      await shot('conversation');

      // An OTLP run's span tree.
      await app.runItem('otlp-readme').click();
      await page.getByTestId('tab-spans').click();
      await expect(page.getByTestId('span-row')).toHaveCount(3);
      await shot('spans');
    }
  } finally {
    await snd.shutdown();
    await server.stop();
  }
});
