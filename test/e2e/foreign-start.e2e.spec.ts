import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test, expect } from './helpers/fixtures';
import { repoRoot, serve } from './helpers/server';

const CC = path.join(repoRoot, 'test/fixtures/claude-code/projects');

/** Every file and folder under `dir` with its size and mtime: what "nothing written" is checked against. */
function tree(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      const st = statSync(p);
      out.push(`${path.relative(dir, p)} ${e.isDirectory() ? 'dir' : st.size} ${st.mtimeMs}`);
      if (e.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return out.sort();
}

test('Start task with a Claude Code folder open writes nothing under it, and the panel says where the run goes', async ({
  page,
  folder,
}) => {
  test.setTimeout(120_000);
  cpSync(CC, folder, { recursive: true });
  const home = mkdtempSync(path.join(os.tmpdir(), 'proofloop-home-'));
  const served = await serve(folder, { env: { PROOFLOOP_HOME: home } });
  try {
    await page.goto(`${served.base}/#token=${served.token}`);
    await expect(page.locator('[data-testid="run-item"][data-format="claude_code"]').first()).toBeVisible();
    const before = tree(folder);

    await page.getByTestId('open-tasks').click();
    const where = page.getByTestId('task-where');
    await expect(where).toContainText('writes nothing into it');
    const info = await served.call<{ runs_root: string }>('folder.current');
    expect(info.runs_root.startsWith(home)).toBe(true);
    await expect(where).toContainText(info.runs_root);
    await expect(page.getByTestId('variant-text')).toContainText('clean pass');
    await page.getByTestId('task-select').selectOption('fix-discount');
    await page.getByTestId('start-task').click();

    // The run is listed beside the sessions and ends as the careful run does.
    const run = page.locator('[data-testid="run-item"][data-format="proofloop"]');
    await expect(run).toHaveCount(1);
    await expect(run).toHaveAttribute('data-outcome', 'passed', { timeout: 60_000 });
    const runId = (await run.getAttribute('data-run-id'))!;

    // Its folder is in ProofLoop's directory; nothing under the Claude Code folder changed.
    expect(existsSync(path.join(info.runs_root, runId, 'workspace'))).toBe(true);
    expect(existsSync(path.join(info.runs_root, runId, 'events.jsonl'))).toBe(true);
    expect(existsSync(path.join(folder, runId))).toBe(false);
    expect(tree(folder)).toEqual(before);

    // The run reads as any other: its tool output comes from its artifacts in the runs root.
    await run.click();
    await expect(page.getByTestId('run-title')).toHaveText(runId);
    await expect(page.getByTestId('run-outcome')).toHaveText('passed');
    await expect(page.getByTestId('timeline-row').first()).toBeVisible();
  } finally {
    await served.stop();
    rmSync(home, { recursive: true, force: true });
  }
});
