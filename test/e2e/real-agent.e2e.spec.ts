import { appendFileSync, cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test, expect, AppPage } from './helpers/fixtures';
import { repoRoot, serve, type Served } from './helpers/server';

/**
 * The real Claude Code CLI (the pinned package) started from the app's task panel against the
 * run's gateway with the sim source: no key, nothing leaves the machine. A run takes 30-60 s on
 * this shared machine, so the test is long; it waits for states, never for time.
 */

const pinned = (
  JSON.parse(
    readFileSync(path.join(repoRoot, 'node_modules/@anthropic-ai/claude-code/package.json'), 'utf8'),
  ) as { version: string }
).version;

const RUN_MS = 180_000;

interface Ev {
  seq: number;
  kind: string;
  payload: Record<string, unknown>;
}

/** Screenshots at the two sizes the app is checked at (1440×900, then 1024×700), back to the first. */
async function shots(app: AppPage, name: string): Promise<void> {
  await app.screenshot(`${name}-1440`);
  await app.page.setViewportSize({ width: 1024, height: 700 });
  await app.screenshot(`${name}-1024`);
  await app.page.setViewportSize({ width: 1440, height: 900 });
}

async function eventsOf(server: Served, runId: string): Promise<Ev[]> {
  return (await server.call<{ events: Ev[] }>('events.read', { run_id: runId })).events;
}

test('Claude Code from the task panel: live events, a passing verdict, replay, and the diff with its verdict', async ({
  page,
  folder,
}) => {
  test.setTimeout(600_000);
  // A catalog of its own, so that the test can change a task's workspace between runs.
  const tasks = mkdtempSync(path.join(os.tmpdir(), 'proofloop-e2e-tasks-'));
  cpSync(path.join(repoRoot, 'tasks'), tasks, { recursive: true });
  // No key in ProofLoop's environment: upstream is shown, with why it is not offered.
  const server = await serve(folder, {
    args: ['--tasks', tasks],
    env: { ANTHROPIC_API_KEY: '', ANTHROPIC_AUTH_TOKEN: '' },
  });
  try {
    const app = new AppPage(page, server);
    await app.open();
    await page.getByTestId('open-tasks').click();
    const panel = page.getByTestId('task-panel');

    // Every agent is listed; an installed one with the version its CLI reports.
    const agent = (name: string) => panel.locator(`[data-testid="agent-option"][data-agent="${name}"]`);
    await expect(agent('sim')).toHaveAttribute('data-installed', 'true');
    await expect(agent('claude-code')).toHaveAttribute('data-installed', 'true');
    await expect(agent('claude-code')).toContainText(pinned);
    await expect(agent('codex')).toBeVisible();
    const codexInstalled = (await agent('codex').getAttribute('data-installed')) === 'true';
    await expect(agent('codex').getByRole('radio')).toBeEnabled({ enabled: codexInstalled });
    if (!codexInstalled) await expect(agent('codex')).toContainText('not installed');

    await page.getByTestId('task-select').selectOption('fix-slugify');
    // The simulated agent has no model source to choose.
    await expect(page.getByTestId('source-choice')).toHaveCount(0);
    await agent('claude-code').getByRole('radio').check();
    await expect(page.getByTestId('source-sim').getByRole('radio')).toBeChecked();
    // Nothing recorded yet to replay; upstream says whose key it would use.
    await expect(page.getByTestId('source-replay').getByRole('radio')).toBeDisabled();
    await expect(page.getByTestId('source-replay')).toContainText(
      'no finished run of Claude Code on fix-slugify',
    );
    await expect(page.getByTestId('upstream-note')).toContainText('ANTHROPIC_API_KEY');
    await expect(page.getByTestId('upstream-note')).toContainText('not set');
    await expect(page.getByTestId('source-upstream').getByRole('radio')).toBeDisabled();
    await page.getByTestId('variant-select').selectOption('careful');
    await expect(page.getByTestId('variant-text')).toContainText('clean pass');
    await shots(app, 'real-agent-task-panel');

    await page.getByTestId('start-task').click();
    await expect(panel).toBeHidden();
    const title = page.getByTestId('run-title');
    await expect(title).toHaveText(/^fix-slugify-claude-code-/);
    const source = (await title.textContent())!;
    await expect(page.getByTestId('run-agent')).toHaveText('claude-code · model sim');

    // Live: the agent's calls arrive while it still runs (no verdict yet, the replay not offered).
    const row = (kind: string) => page.locator(`[data-testid="timeline-row"][data-kind="${kind}"]`);
    await expect(row('action_allowed').first()).toBeVisible({ timeout: RUN_MS });
    await expect(page.getByTestId('run-status')).toHaveText('running');
    await expect(row('judge_verdict')).toHaveCount(0);
    await expect(page.getByTestId('replay-button')).toBeDisabled();
    await expect(page.getByTestId('follow-toggle')).toHaveAttribute('aria-pressed', 'true');
    const headWhileRunning = Number(
      /\/ (\d+)$/.exec((await page.getByTestId('seq-indicator').textContent())!)![1],
    );
    await shots(app, 'real-agent-running');

    // The judge's verdict ends it: passed.
    await expect(page.getByTestId('run-status')).toHaveText('completed', { timeout: RUN_MS });
    await expect(page.getByTestId('run-outcome')).toHaveAttribute('data-outcome', 'passed');
    await expect(row('judge_verdict')).toContainText('PASS');
    // The subagent's calls say whose they are, with a link to its transcript (imported once the
    // agent exited); no call of the run is taken for a subagent's end.
    await expect(page.getByTestId('subagent-call').first()).toHaveAttribute(
      'data-run-id',
      /:agent-[0-9a-f]+$/,
    );
    await expect(page.getByTestId('subagent-end')).toHaveCount(0);
    const recorded = await eventsOf(server, source);
    expect(recorded.length).toBeGreaterThan(headWhileRunning);
    await expect(page.getByTestId('seq-indicator')).toHaveText(`seq ${recorded.length} / ${recorded.length}`);

    // Replay from the run's header: a new run, followed live, the model frozen.
    await page.getByTestId('replay-button').click();
    await expect(title).not.toHaveText(source);
    const replay = (await title.textContent())!;
    await expect(page.getByTestId('replay-banner')).toContainText(`Replay of ${source}`);
    await expect(page.getByTestId('run-agent')).toHaveText('claude-code · model replay');
    await expect(page.getByTestId('run-status')).toHaveText(/completed|failed/, { timeout: RUN_MS });
    const verdict = page.getByTestId('replay-banner').getByTestId('replay-verdict');
    await expect(verdict).toHaveAttribute('data-divergence', 'none');
    await expect(page.getByTestId('run-outcome')).toHaveAttribute('data-outcome', 'passed');
    await shots(app, 'real-agent-replayed');

    // The diff of the two says so; the rows that differ by nature (ids, digests) are no divergence.
    await page.getByTestId('replay-diff').click();
    await expect(page.getByTestId('diff-view')).toBeVisible();
    await expect(page).toHaveURL(new RegExp(`#/diff/${source}/${replay}$`));
    const diffVerdict = page.getByTestId('diff-replay').getByTestId('replay-verdict');
    await expect(diffVerdict).toHaveAttribute('data-divergence', 'none');
    await expect(diffVerdict).toContainText('No divergence');
    await expect(page.locator('[data-testid="diff-row"][data-first-divergence="true"]')).toHaveCount(0);
    await shots(app, 'real-agent-diff-same');

    // The task panel now offers the finished runs of Claude Code on this task as a replay source.
    await page.getByTestId('open-tasks').click();
    await page.getByTestId('task-select').selectOption('fix-slugify');
    await agent('claude-code').getByRole('radio').check();
    await page.getByTestId('source-replay').getByRole('radio').check();
    const sources = page.getByTestId('replay-source-select');
    await expect(sources.locator('option')).toHaveCount(2);
    await expect(sources.locator(`option[value="${source}"]`)).toHaveCount(1);
    await expect(sources.locator(`option[value="${replay}"]`)).toHaveCount(1);
    // Recorded answers decide: no variant to pick.
    await expect(page.getByTestId('variant-select')).toBeDisabled();
    await shots(app, 'real-agent-task-panel-replay');
    await page.keyboard.press('Escape');
    await expect(panel).toBeHidden();

    // The test's output changes (the task's test file prints one line more): a replay of the same
    // recording now parts at the source's result of the test run, and names it environment.
    appendFileSync(
      path.join(tasks, 'fix-slugify', 'workspace', 'test.js'),
      "\nconsole.log('# one more line of output');\n",
    );
    const bash = recorded.find((e) => e.kind === 'model_proposed' && e.payload.tool === 'Bash')!;
    const testResult = recorded.find(
      (e) => e.kind === 'tool_returned' && e.payload.call_id === bash.payload.call_id,
    )!;
    await app.selectRun(source);
    await page.getByTestId('replay-button').click();
    await expect(title).not.toHaveText(source);
    await expect(title).not.toHaveText(replay);
    const second = (await title.textContent())!;
    await expect(page.getByTestId('run-status')).toHaveText('failed', { timeout: RUN_MS });
    const parted = page.getByTestId('replay-banner').getByTestId('replay-verdict');
    await expect(parted).toHaveAttribute('data-divergence', 'environment');
    await expect(parted).toHaveAttribute('data-seq', String(testResult.seq));
    await page.getByTestId('replay-diff').click();
    await expect(page).toHaveURL(new RegExp(`#/diff/${source}/${second}$`));
    await expect(page.getByTestId('diff-replay').getByTestId('replay-verdict-cause')).toHaveText(
      'environment',
    );
    // The row of the source's seq where they part is the one focused.
    const first = page.locator('[data-testid="diff-row"][data-first-divergence="true"]');
    await expect(first).toHaveAttribute('aria-selected', 'true');
    await expect(first.locator('.d-seq').first()).toHaveText(String(testResult.seq));
    await expect(first).toBeInViewport();
    await shots(app, 'real-agent-diff-environment');
  } finally {
    await server.stop();
    rmSync(tasks, { recursive: true, force: true });
  }
});
