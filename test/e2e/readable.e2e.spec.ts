import { test, expect } from './helpers/fixtures';
import { appendRun } from './helpers/runs';

const ANSWER = [
  '# Plan',
  '',
  'The bug is in `applyDiscount`:',
  '',
  '1. read price.js',
  '2. fix the sign',
  '',
  '<script>alert(1)</script> stays text.',
].join('\n');
const RESULT = JSON.stringify({ files: ['price.js', 'test.js'], total: 2 });

test('a payload is shown for reading: lines, Markdown, a command, JSON in a string, the raw form a click away', async ({
  app,
  page,
  server,
}) => {
  const missing: string[] = [];
  page.on('response', (r) => {
    if (r.status() === 404) missing.push(r.url());
  });
  const dialogs: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  await appendRun(server, 'read-1', [
    { kind: 'run_started', payload: { task_id: 't', goal: 'g', agent: { name: 'sim' } } },
    {
      kind: 'tool_invoked',
      payload: { call_id: 'c1', tool: 'run_command', args: { command: 'node test.js --reporter spec' } },
    },
    {
      kind: 'tool_returned',
      payload: {
        call_id: 'c1',
        status: 'ok',
        duration_ms: 5,
        excerpt: 'line one\nline two\nline three',
        result: RESULT,
      },
    },
    { kind: 'model_responded', payload: { content: ANSWER, tokens: 40 } },
  ]);
  await app.open();
  await app.selectRun('read-1');

  // The command as a command, not as JSON.
  await app.row(2).click();
  await expect(page.getByTestId('readable-tool')).toHaveText('run_command');
  await expect(page.getByTestId('readable-command')).toHaveText('$ node test.js --reporter spec');

  // A multi-line excerpt with its lines; a JSON string as text first, as JSON on request.
  await app.row(3).click();
  const excerpt = page.locator('[data-testid="readable-block"][data-path="excerpt"]');
  await expect(excerpt.getByTestId('readable-text')).toHaveText('line one\nline two\nline three');
  const lines = await excerpt.getByTestId('readable-text').evaluate((el) => el.textContent ?? '');
  expect(lines.split('\n')).toEqual(['line one', 'line two', 'line three']);
  const result = page.locator('[data-testid="readable-block"][data-path="result"]');
  await expect(result).toHaveAttribute('data-kind', 'json');
  await result.getByTestId('readable-mode-json').click();
  await expect(result.getByTestId('readable-json')).toContainText('price.js');
  await expect(result.getByTestId('readable-json')).toContainText('total');
  await result.getByTestId('readable-mode-raw').click();
  await expect(result.getByTestId('readable-raw')).toHaveText(JSON.stringify(RESULT));

  // Markdown rendered as elements; HTML in it stays text.
  await app.row(4).click();
  const md = page.getByTestId('readable-markdown');
  await expect(md.locator('h1')).toHaveText('Plan');
  await expect(md.locator('ol > li')).toHaveText(['read price.js', 'fix the sign']);
  await expect(md.locator('code')).toHaveText('applyDiscount');
  await expect(md.locator('script')).toHaveCount(0);
  await expect(md).toContainText('<script>alert(1)</script> stays text.');
  await page.getByTestId('readable-mode-text').click();
  await expect(page.getByTestId('readable-text')).toContainText('# Plan');
  // The raw tree is still there below.
  await expect(page.getByTestId('payload-tree')).toContainText('content');
  expect(dialogs).toEqual([]);
  // The page names its icon inline: no browser asks for /favicon.ico and gets a 404.
  await expect(page.locator('link[rel="icon"]')).toHaveAttribute('href', /^data:image\/svg\+xml,/);
  expect(missing).toEqual([]);
  await app.row(4).click();
  await page.getByTestId('readable-mode-markdown').click();
  await app.screenshot('readable-1440');
  await page.setViewportSize({ width: 1024, height: 700 });
  await app.screenshot('readable-1024');
});
