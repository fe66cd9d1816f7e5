import { writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { test, expect } from './helpers/fixtures';
import { writeJsonl } from './helpers/server';

const at = (i: number) => `2026-11-29T08:00:${String(i).padStart(2, '0')}.000Z`;

test('a folder with a line nested 100,000 deep beside a valid run opens, shows the run and the bad file with its text', async ({
  app,
  folder,
  startServer,
  page,
}) => {
  writeJsonl(folder, 'good/events.jsonl', [
    { seq: 1, run_id: 'good', kind: 'run_started', at: at(0), payload: { goal: 'stay up' } },
    { seq: 2, run_id: 'good', kind: 'model_responded', at: at(1), payload: { content: 'still here' } },
  ]);
  const depth = 100_000;
  const deep = `{"seq":1,"run_id":"deep","kind":"run_started","at":"${at(0)}","payload":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`;
  mkdirSync(path.join(folder, 'deep'), { recursive: true });
  writeFileSync(path.join(folder, 'deep/events.jsonl'), deep + '\n');
  await startServer();

  await app.open();
  await app.selectRun('good');
  await expect(page.getByTestId('timeline-row')).toHaveCount(2);
  await expect(app.row(2)).toContainText('still here');

  // The deep file made no run: its finding is listed with the folder, with the line as written.
  await expect(app.runItem('deep')).toHaveCount(0);
  await page.getByTestId('folder-findings-toggle').click();
  const finding = page.getByTestId('folder-findings').getByTestId('finding');
  await expect(finding).toHaveCount(1);
  await expect(finding).toHaveAttribute('data-code', 'invalid_event');
  await expect(finding).toContainText('deep/events.jsonl:1');
  await expect(finding).toContainText('deeper than');
  const excerpt = await finding.getByTestId('finding-excerpt').textContent();
  // The excerpt is the line's own text (bounded): its start as the file has it.
  expect(excerpt?.startsWith(deep.slice(0, 60))).toBe(true);
  expect(excerpt!.length).toBeLessThan(deep.length);
  await app.screenshot('folder-findings-deep');
});

test('an event whose payload fails its schema is stored, marked in the timeline, and shown as written', async ({
  app,
  folder,
  startServer,
  page,
}) => {
  // action_allowed without `rule`, and model_responded with `text` instead of `content`.
  writeJsonl(folder, 'other/events.jsonl', [
    { seq: 1, run_id: 'other', kind: 'run_started', at: at(0), payload: { goal: 'g' } },
    {
      seq: 2,
      run_id: 'other',
      kind: 'model_proposed',
      at: at(1),
      payload: { call_id: 'c1', tool: 'read_file', args: {} },
    },
    {
      seq: 3,
      run_id: 'other',
      kind: 'action_allowed',
      at: at(2),
      payload: { call_id: 'c1', why: 'no rule here' },
    },
    { seq: 4, run_id: 'other', kind: 'model_responded', at: at(3), payload: { text: 'said as text' } },
    { seq: 5, run_id: 'other', kind: 'run_completed', at: at(4), payload: { outcome: 'done' } },
  ]);
  await startServer();
  await app.open();
  await app.selectRun('other');

  // Every line is an event: no seq is missing.
  await expect(page.getByTestId('timeline-row')).toHaveCount(5);
  const mark = app.row(3).getByTestId('warning-mark');
  await expect(mark).toBeVisible();
  await expect(mark).toHaveAttribute('data-code', 'invalid_event');
  await expect(mark).toHaveAttribute('title', /invalid_event: .*rule/);
  await expect(app.row(4).getByTestId('warning-mark')).toBeVisible();
  await expect(app.row(2).getByTestId('warning-mark')).toHaveCount(0);
  await expect(app.row(5).getByTestId('warning-mark')).toHaveCount(0);

  await app.row(3).click();
  await app.expectSeq(3);
  await expect(page.getByTestId('payload-findings')).toContainText('invalid_event');
  await expect(page.getByTestId('payload-findings')).toContainText('rule');
  // The payload as the file wrote it: its own field, and no `rule` made up for it.
  const tree = page.getByTestId('payload-tree');
  await expect(tree).toContainText('no rule here');
  await expect(tree).not.toContainText('rule:');
  await expect(page.getByTestId('provenance-line')).toHaveText('3');
  await expect(page.getByTestId('provenance-file')).toHaveText('other/events.jsonl');
  await app.screenshot('invalid-event-marked');

  // No seq_gap for the stored events; the findings are the two invalid ones.
  await page.getByTestId('findings-toggle').click();
  const codes = await page
    .getByTestId('findings')
    .getByTestId('finding')
    .evaluateAll((els) => els.map((e) => e.getAttribute('data-code')));
  expect(codes).not.toContain('seq_gap');
  expect(codes.filter((c) => c === 'invalid_event')).toHaveLength(2);
});

test('a seed-000 run_started reads as v1 on screen, naming the fields the view inferred', async ({
  app,
  folder,
  startServer,
  page,
}) => {
  writeJsonl(folder, 'seed/events.jsonl', [
    { seq: 1, run_id: 'seed', kind: 'run_started', at: at(0), payload: { goal: 'fix the bug' } },
    { seq: 2, run_id: 'seed', kind: 'run_completed', at: at(1), payload: { outcome: 'passed' } },
  ]);
  await startServer();
  await app.open();
  await app.selectRun('seed');
  await app.expectSeq(1);
  const v1 = page.getByTestId('read-as-v1');
  await expect(v1).toBeVisible();
  await expect(v1.locator('[data-field="goal"]')).toHaveAttribute('data-inferred', 'false');
  await expect(v1.locator('[data-field="task_id"]')).toHaveAttribute('data-inferred', 'true');
  await expect(v1.locator('[data-field="agent"]')).toHaveAttribute('data-inferred', 'true');
  await expect(v1.locator('[data-field="task_id"]')).toContainText('"seed"');
  // The stored payload stays what the file says.
  await expect(page.getByTestId('payload-tree')).toContainText('fix the bug');
  await expect(page.getByTestId('payload-tree')).not.toContainText('unknown');
  await app.screenshot('seed000-read-as-v1');
});
