import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test, expect, AppPage } from './helpers/fixtures';
import { repoRoot, serve } from './helpers/server';

/**
 * Issue 28 in the browser: a folder holding two Claude Code 2.1.328 sessions (their transcripts)
 * whose telemetry arrives at the served receiver. One session's telemetry is sent as the CLI wrote
 * it: transcript and telemetry agree, no finding. The other's is an edited copy that allows the
 * call the PreToolUse hook denied: the transcript's run shows one decision_conflict naming both
 * runs, and its seq leads to the denial.
 */
const FIX = path.join(repoRoot, 'test/fixtures');
type Session = { session: string; otlp: string[] };
const manifest = JSON.parse(readFileSync(path.join(FIX, 'otlp/agents/manifest.json'), 'utf8')) as {
  sessions: Record<string, Session>;
};

/** The body of `f`; for the edited session, toolu_fx_rm's tool_decision made a config allow. */
function body(f: string, edit: boolean): Buffer | string {
  if (!edit || !f.endsWith('04-logs.json')) return readFileSync(path.join(FIX, f));
  const text = readFileSync(path.join(FIX, f), 'utf8');
  // The decision and source that follow the call's id in that record (the file is compact JSON).
  const edited = text.replace(
    /("key":"decision","value":\{"stringValue":")reject("\}\},\{"key":"source","value":\{"stringValue":")hook(")/,
    '$1accept$2config$3',
  );
  expect(edited).not.toBe(text);
  return edited;
}

test('a transcript and its telemetry that disagree on a call show a decision_conflict; agreeing ones none', async ({
  folder,
  page,
}) => {
  // A server to start and 22 bodies to receive and commit before the page opens: on a loaded
  // two-core machine that alone has taken most of the default minute.
  test.setTimeout(180_000);
  const agree = manifest.sessions['claude-code-proto']!;
  const disagree = manifest.sessions['claude-code-json']!;
  for (const s of [agree, disagree]) {
    const project = path.dirname(s.session);
    cpSync(path.join(FIX, project), path.join(folder, path.basename(project)), { recursive: true });
  }
  const home = mkdtempSync(path.join(os.tmpdir(), 'proofloop-home-'));
  const served = await serve(folder, { env: { PROOFLOOP_HOME: home } });
  try {
    const app = new AppPage(page, served);
    expect(served.otlp).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    for (const [s, edit] of [
      [agree, false],
      [disagree, true],
    ] as const)
      for (const f of s.otlp) {
        const res = await fetch(`${served.otlp}/v1/${/-(logs|traces|metrics)\./.exec(f)![1]}`, {
          method: 'POST',
          headers: { 'content-type': /\.json/.test(f) ? 'application/json' : 'application/x-protobuf' },
          body: body(f, edit),
        });
        expect(res.status, f).toBe(200);
      }

    await app.open();
    const bad = path.basename(disagree.session, '.jsonl');
    const good = path.basename(agree.session, '.jsonl');
    await expect(app.runItem(`otlp-${bad}`)).toBeVisible();

    await app.runItem(good).click();
    await expect(page.getByTestId('run-title')).toHaveText(good);
    await page.getByTestId('tab-timeline').click();
    await expect(app.row(1)).toBeVisible();
    await expect(page.getByTestId('findings-toggle')).toHaveCount(0);

    await app.runItem(bad).click();
    await expect(page.getByTestId('run-title')).toHaveText(bad);
    await expect(page.getByTestId('findings-toggle')).toHaveText(/^1 finding/);
    await page.getByTestId('findings-toggle').click();
    const finding = page.getByTestId('finding');
    await expect(finding).toHaveCount(1);
    await expect(finding).toHaveAttribute('data-code', 'decision_conflict');
    await expect(finding).toContainText(
      `call toolu_fx_rm denied by claude_code.hook (hook) in ${bad} (claude_code transcript)`,
    );
    await expect(finding).toContainText(`allowed by claude_code.config (config) in otlp-${bad} (telemetry)`);
    // Its seq is the transcript's denial.
    await finding.getByRole('button', { name: /^seq \d+$/ }).click();
    const seq = Number((await finding.getByRole('button').textContent())!.replace('seq ', ''));
    await page.getByTestId('tab-timeline').click();
    await app.expectSeq(seq);
    await expect(app.row(seq)).toHaveAttribute('data-kind', 'action_denied');
    await app.screenshot('decision-conflict');
  } finally {
    await served.stop();
    rmSync(home, { recursive: true, force: true });
  }
});
