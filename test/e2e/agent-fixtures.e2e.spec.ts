import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test, expect, AppPage } from './helpers/fixtures';
import { repoRoot, serve } from './helpers/server';
import { claudeCode } from '../../electron/ingest/formats/claude-code';
import type { MappedEvent } from '../../electron/ingest/formats/types';

/**
 * Issue 28 in the browser: a Claude Code 2.1.328 session (test/fixtures/otlp/agents/manifest.json)
 * whose Agent call runs in the background. The parent's timeline marks the call's immediate result
 * as a launch and the `<task-notification>` as where the subagent ended, linking to its run; the
 * hook's denial is a decision row of its own.
 */
const FIX = path.join(repoRoot, 'test/fixtures');
const manifest = JSON.parse(readFileSync(path.join(FIX, 'otlp/agents/manifest.json'), 'utf8')) as {
  sessions: Record<string, { session: string; subagents: string[] }>;
};

test('a background subagent is marked where it was launched and where its notification ended it', async ({
  page,
  folder,
}) => {
  const s = manifest.sessions['claude-code-proto']!;
  const project = path.dirname(s.session);
  cpSync(path.join(FIX, project), path.join(folder, path.basename(project)), { recursive: true });
  const session = path.basename(s.session, '.jsonl');
  // Each line's events in file order are the run's seqs.
  const events: MappedEvent[] = readFileSync(path.join(FIX, s.session), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .flatMap((l) => claudeCode.map(JSON.parse(l) as Record<string, unknown>) as MappedEvent[]);
  const seqOf = (kind: string, id: string) =>
    events.findIndex((e) => e.kind === kind && e.source?.ids?.tool_use_id === id) + 1;
  const launched = seqOf('tool_returned', 'toolu_fx_agent');
  const ended = seqOf('subagent_ended', 'toolu_fx_agent');
  const denied = seqOf('action_denied', 'toolu_fx_rm');
  expect(Math.min(launched, ended, denied)).toBeGreaterThan(0);
  const agent = /agent-([0-9a-f]+)\.jsonl$/.exec(s.subagents.find((f) => f.endsWith('.jsonl'))!)![1]!;

  const home = mkdtempSync(path.join(os.tmpdir(), 'proofloop-home-'));
  const served = await serve(folder, { env: { PROOFLOOP_HOME: home } });
  try {
    const app = new AppPage(page, served);
    await app.open();
    await app.runItem(session).click();
    await expect(page.getByTestId('run-title')).toHaveText(session);
    await page.getByTestId('tab-timeline').click();
    await expect(page.getByTestId('timeline')).toBeVisible();

    const goto = async (seq: number) => {
      await page.keyboard.press('g');
      await page.getByTestId('goto-input').fill(String(seq));
      await page.getByTestId('goto-input').press('Enter');
      await expect(app.row(seq)).toHaveAttribute('aria-selected', 'true');
    };
    await goto(denied);
    await expect(app.row(denied)).toContainText('action_denied');
    await expect(app.row(denied)).toContainText('claude_code.hook');

    await goto(launched);
    await expect(app.row(launched).getByTestId('subagent-launched')).toBeVisible();
    await expect(app.row(launched).getByTestId('subagent-end')).toHaveCount(0);

    await goto(ended);
    await expect(app.row(ended)).toContainText('subagent_ended');
    await expect(app.row(ended).getByTestId('subagent-link')).toHaveAttribute(
      'data-run-id',
      `${session}:agent-${agent}`,
    );
    await app.screenshot('timeline-background-subagent');
  } finally {
    await served.stop();
    rmSync(home, { recursive: true, force: true });
  }
});
