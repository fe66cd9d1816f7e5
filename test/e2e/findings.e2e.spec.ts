import { test, expect } from './helpers/fixtures';
import { writeJsonl } from './helpers/server';

test('a folder with a corrupt JSONL file shows its findings on the run', async ({
  app,
  folder,
  startServer,
  page,
}) => {
  // The seed's first format, written by another agent, with a broken line in the middle.
  const at = (i: number) => `2026-11-29T08:00:0${i}.000Z`;
  writeJsonl(folder, 'agent-x/events.jsonl', [
    {
      seq: 1,
      run_id: 'agent-x',
      kind: 'run_started',
      at: at(0),
      payload: { task_id: 't', goal: 'g', agent: { name: 'other' } },
    },
    {
      seq: 2,
      run_id: 'agent-x',
      kind: 'model_proposed',
      at: at(1),
      payload: { call_id: 'c1', tool: 'read_file', args: {} },
    },
    '{"seq":3,"run_id":"agent-x","kind":"action_allowed","at":"2026-11-29T08:00:02.000Z","payl',
    {
      seq: 4,
      run_id: 'agent-x',
      kind: 'tool_invoked',
      at: at(3),
      payload: { call_id: 'c1', tool: 'read_file', args: {} },
    },
  ]);
  await startServer();

  await app.open();
  const item = app.runItem('agent-x');
  await expect(item.getByTestId('integrity')).toHaveText(/\d+ findings?/);
  await item.click();
  await expect(page.getByTestId('findings-toggle')).toBeVisible();
  await page.getByTestId('findings-toggle').click();
  await expect(page.getByTestId('finding').first()).toBeVisible();
  await app.screenshot('findings');
});
