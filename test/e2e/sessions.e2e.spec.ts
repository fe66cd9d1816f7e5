import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from '@playwright/test';
import { test, expect, AppPage } from './helpers/fixtures';
import { repoRoot, serve, type Served } from './helpers/server';

const CC = path.join(repoRoot, 'test/fixtures/claude-code/projects');
const SPOTTER = '-home-marco-projects-spotter-worktrees-spotter-4te';
const SESSION = 'ae4a77f8-aedd-4bc1-888f-c94edc91af04';

type Obj = Record<string, unknown>;
const lines = (file: string): Obj[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Obj);
const blocks = (l: Obj): Obj[] => {
  const c = (l.message as Obj | undefined)?.content;
  return Array.isArray(c) ? (c as Obj[]) : [];
};
const resultText = (b: Obj): string =>
  typeof b.content === 'string'
    ? b.content
    : ((b.content as Obj[]) ?? []).map((x) => (typeof x.text === 'string' ? x.text : '')).join('\n');

/** Another program's folder: its ledger goes to PROOFLOOP_HOME, a temp dir of the test's own. */
async function serveForeign(folder: string): Promise<{ served: Served; home: string }> {
  const home = mkdtempSync(path.join(os.tmpdir(), 'proofloop-home-'));
  const served = await serve(folder, { env: { PROOFLOOP_HOME: home } });
  return { served, home };
}

const selected = (page: Page) => page.locator('[data-testid="conv-item"][aria-selected="true"]');

async function seqNow(page: Page): Promise<number> {
  const t = (await page.getByTestId('seq-indicator').textContent()) ?? '';
  return Number(/seq (\d+)/.exec(t)?.[1] ?? 0);
}

/** ArrowRight, then waits until the selection moved (the step is async when it reads a page). */
async function stepRight(page: Page): Promise<number> {
  const before = await seqNow(page);
  await page.keyboard.press('ArrowRight');
  await expect.poll(() => seqNow(page)).not.toBe(before);
  await expect(page.getByTestId('payload-view')).toHaveAttribute('data-seq', String(await seqNow(page)));
  return seqNow(page);
}

test('a Claude Code folder opens, and the keyboard steps through a session in the conversation view', async ({
  page,
  folder,
}) => {
  // Up to ~80 key steps, each waited for: on a shared 2-core machine this needs more than 60 s.
  test.setTimeout(120_000);
  cpSync(CC, folder, { recursive: true });
  const { served, home } = await serveForeign(folder);
  try {
    // What the session file says, to compare with what the view shows.
    const file = lines(path.join(CC, SPOTTER, `${SESSION}.jsonl`));
    // The first prompt a person wrote: a user line that is not meta, with text (not tool results).
    const textOfUser = (l: Obj): string => {
      const c = (l.message as Obj).content;
      if (typeof c === 'string') return c;
      return blocks(l)
        .filter((b) => b.type === 'text')
        .map((b) => String(b.text))
        .join('\n');
    };
    const prompt = file.find((l) => l.type === 'user' && l.isMeta !== true && textOfUser(l).trim())!;
    const promptText = textOfUser(prompt);
    const firstCall = file.flatMap(blocks).find((b) => b.type === 'tool_use')!;
    const firstResult = file
      .flatMap(blocks)
      .find((b) => b.type === 'tool_result' && b.tool_use_id === firstCall.id)!;
    const text = file
      .filter((l) => l.type === 'assistant')
      .flatMap(blocks)
      .find((b) => b.type === 'text' && String(b.text).trim())!;

    const app = new AppPage(page, served);
    await app.open();
    await app.runItem(SESSION).click();
    await expect(page.getByTestId('run-title')).toHaveText(SESSION);
    // A session opens in the conversation view.
    await expect(page.getByTestId('conversation-view')).toBeVisible();
    await expect(page.getByTestId('tab-conversation')).toHaveAttribute('aria-selected', 'true');
    await expect(app.runItem(SESSION).getByTestId('run-item-title')).toContainText(promptText.slice(0, 40));
    await expect(app.runItem(SESSION).getByTestId('run-item-format')).toHaveText('Claude Code');

    // → the user's prompt, as the file has it.
    await stepRight(page);
    await expect(selected(page)).toHaveAttribute('data-type', 'prompt');
    await expect(selected(page)).toContainText(promptText.slice(0, 60));
    await expect(page.getByTestId('payload-kind')).toHaveText('user_prompted');

    // Step on to the first tool call: the model's text and thinking come on the way.
    const kinds: string[] = [];
    for (let i = 0; i < 20; i++) {
      await stepRight(page);
      const type = (await selected(page).getAttribute('data-type')) ?? '';
      kinds.push(type);
      if (type === 'call') break;
    }
    expect(kinds.at(-1)).toBe('call');
    const call = selected(page);
    await expect(call.getByTestId('conv-call')).toHaveAttribute('data-call-id', String(firstCall.id));
    await expect(call.getByTestId('conv-call')).toContainText(String(firstCall.name));
    await expect(page.getByTestId('payload-kind')).toHaveText('model_proposed');
    // The call's result is beside it, in the same item.
    await expect(call.getByTestId('conv-result')).toBeVisible();
    await expect(call).toContainText(resultText(firstResult).trim().split('\n')[0]!.slice(0, 40));
    // The next step selects the result, in the same item; the inspector follows.
    const callSeq = await call.getAttribute('data-seq');
    await stepRight(page);
    await expect(page.getByTestId('payload-kind')).toHaveText('tool_returned');
    await expect(selected(page)).toHaveAttribute('data-seq', callSeq!);
    await app.expectStateAt(await seqNow(page));
    // ← goes back to the call.
    await page.keyboard.press('ArrowLeft');
    await expect(page.getByTestId('payload-kind')).toHaveText('model_proposed');
    await app.screenshot('conversation-call-result');

    // The model's text is shown somewhere in the session.
    expect(String(text.text).length).toBeGreaterThan(0);

    // Step on to the Task call: its subagent is linked, and the link opens the subagent's run.
    let link = page.getByTestId('subagent-link');
    for (let i = 0; i < 80 && (await selected(page).getByTestId('subagent-link').count()) === 0; i++)
      await stepRight(page);
    link = selected(page).getByTestId('subagent-link');
    await expect(link).toBeVisible();
    const taskSeq = await selected(page).getAttribute('data-seq');
    await app.screenshot('conversation-subagent');
    const sub = `${SESSION}:agent-aac57f5`;
    await expect(link).toHaveAttribute('data-run-id', sub);
    await link.click();
    await expect(page.getByTestId('run-title')).toHaveText(sub);
    await expect(page.getByTestId('parent-session-link')).toHaveText(SESSION);
    // In the runs list the subagent is named by its agent id (its run id cut at the end reads as
    // its parent's), and says what it is.
    const subItem = page.locator(`[data-testid="run-item"][data-run-id="${sub}"]`);
    await expect(subItem.getByTestId('run-item-subagent')).toHaveText('↳ agent-aac57f5');
    await expect(subItem.getByTestId('run-item-subagent')).toHaveAttribute(
      'title',
      `${sub}: a subagent of ${SESSION}`,
    );
    const subFirst = lines(path.join(CC, SPOTTER, SESSION, 'subagents/agent-aac57f5.jsonl'))[0]!;
    await expect(page.locator('[data-testid="conv-item"][data-type="prompt"]').first()).toContainText(
      String((subFirst.message as Obj).content).slice(0, 40),
    );
    await page.getByTestId('parent-session-link').click();
    await expect(page.getByTestId('run-title')).toHaveText(SESSION);

    // The timeline tab shows the same seq.
    await page.getByTestId('tab-timeline').click();
    await expect(page.getByTestId('timeline')).toBeVisible();
    // The parent's timeline marks where the subagent began (its Task call) and where it ended (the
    // call's result, which names the agent and links to its run).
    await page.keyboard.press('g');
    await page.getByTestId('goto-input').fill(taskSeq!);
    await page.getByTestId('goto-input').press('Enter');
    const begin = page.getByTestId('subagent-begin').first();
    await expect(begin).toBeVisible();
    // The call's result, where the subagent ended: the inspector links the call to it.
    await page.getByTestId('related-link').filter({ hasText: 'tool_returned' }).click();
    const end = page.getByTestId('subagent-end').first();
    await expect(end.getByTestId('subagent-link')).toHaveAttribute('data-run-id', sub);
    const row = end.locator('xpath=ancestor::*[@data-testid="timeline-row"]');
    expect(Number(await row.getAttribute('data-seq'))).toBeGreaterThan(Number(taskSeq));
    await app.screenshot('timeline-subagent');
  } finally {
    await served.stop();
    rmSync(home, { recursive: true, force: true });
  }
});

test('a step that changes many paths lists the first twelve changes, and the rest on demand', async ({
  page,
  folder,
}) => {
  cpSync(CC, folder, { recursive: true });
  const { served, home } = await serveForeign(folder);
  try {
    const app = new AppPage(page, served);
    await app.open();
    // serve imports in the background: the run is listed once it is in the ledger.
    await expect(app.runItem(SESSION)).toBeVisible();
    const head = (await served.call<{ head_seq: number }>('run.get', { run_id: SESSION })).head_seq;
    // The first seq whose state differs from the one before in more than twelve paths.
    let at = 0;
    let total = 0;
    for (let seq = 1; seq <= head && at === 0; seq++) {
      const r = await served.call<{ changes: unknown[] }>('state.changes', { run_id: SESSION, seq });
      if (r.changes.length > 12) [at, total] = [seq, r.changes.length];
    }
    expect(at, 'a seq of the session that changes more than 12 paths').toBeGreaterThan(0);
    await page.evaluate(
      (h) => ((globalThis as unknown as { location: { hash: string } }).location.hash = h),
      `#/run/${SESSION}/seq/${at}`,
    );
    const list = page.getByTestId('state-changes');
    await expect(page.getByTestId('state-view')).toHaveAttribute('data-seq', String(at));
    await expect(list).toHaveAttribute('data-count', String(total));
    await expect(list.getByTestId('state-change')).toHaveCount(12);
    await expect(list).toContainText(`… ${total - 12} more`);
    await app.screenshot('state-changes-capped');
    await list.getByRole('button', { name: 'show them' }).click();
    await expect(list.getByTestId('state-change')).toHaveCount(Math.min(total, 100));
  } finally {
    await served.stop();
    rmSync(home, { recursive: true, force: true });
  }
});

test('a Codex rollout shows each message once, not again as its event_msg echo', async ({ page, folder }) => {
  const src = path.join(repoRoot, 'test/fixtures/codex/sessions/2025/11/17');
  cpSync(src, path.join(folder, '2025/11/17'), { recursive: true });
  const { served, home } = await serveForeign(folder);
  try {
    const name = 'rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c';
    const file = lines(path.join(src, `${name}.jsonl`));
    const echo = file.find((l) => l.type === 'event_msg' && (l.payload as Obj).type === 'user_message')!;
    const said = String((echo.payload as Obj).message)
      .trim()
      .slice(0, 50);
    const app = new AppPage(page, served);
    await app.open();
    await app.runItem(name).click();
    await expect(page.getByTestId('conversation-view')).toBeVisible();
    const prompts = page.locator('[data-testid="conv-item"][data-type="prompt"]', { hasText: said });
    await expect(prompts).toHaveCount(1);
    await expect(app.runItem(name).getByTestId('run-item-format')).toHaveText('Codex');
    await expect(app.runItem(name).getByTestId('run-item-project')).toBeVisible();
    await app.screenshot('conversation-codex');
  } finally {
    await served.stop();
    rmSync(home, { recursive: true, force: true });
  }
});

test('a session file that grows line by line is followed live in the conversation view', async ({
  page,
  folder,
}) => {
  const src = lines(path.join(CC, '-home-marco-projects-spotter/tool_heavy.jsonl'));
  // Lines 1-5: a snapshot, hooks, the prompt, and a Bash call whose result is not written yet.
  const callLine = src.findIndex((l) => l.type === 'assistant');
  const resultLine = src.findIndex(
    (l) => l.type === 'user' && blocks(l).some((b) => b.type === 'tool_result'),
  );
  const textLine = src.findIndex(
    (l, i) => i > resultLine && l.type === 'assistant' && blocks(l)[0]?.type === 'text',
  );
  expect(callLine).toBeGreaterThan(0);
  expect(resultLine).toBeGreaterThan(callLine);
  mkdirSync(path.join(folder, 'proj'), { recursive: true });
  const file = path.join(folder, 'proj/live.jsonl');
  writeFileSync(
    file,
    src
      .slice(0, callLine + 1)
      .map((l) => JSON.stringify(l) + '\n')
      .join(''),
  );
  const { served, home } = await serveForeign(folder);
  try {
    const app = new AppPage(page, served);
    await app.open();
    await app.runItem('live').click();
    await expect(page.getByTestId('conversation-view')).toBeVisible();
    const call = page.locator('[data-testid="conv-item"][data-type="call"]');
    await expect(call).toHaveCount(1);
    await expect(call.getByTestId('conv-result')).toHaveCount(0);
    await page.getByTestId('follow-toggle').click();

    // The writer goes on, one line at a time.
    for (let i = callLine + 1; i <= textLine; i++) {
      appendFileSync(file, JSON.stringify(src[i]) + '\n');
      if (i === resultLine) await expect(call.getByTestId('conv-result')).toBeVisible();
    }
    const said = String(blocks(src[textLine]!)[0]!.text).split('\n')[0]!.slice(0, 40);
    await expect(
      page.locator('[data-testid="conv-item"][data-type="text"]', { hasText: said }),
    ).toBeVisible();
    // Following: the newest event is selected.
    const head = (await served.call<{ head_seq: number }>('run.get', { run_id: 'live' })).head_seq;
    await expect(page.getByTestId('seq-indicator')).toHaveText(`seq ${head} / ${head}`);
    await app.screenshot('conversation-live');
    // The writer has stopped, and so do the page's reads: the conversation once read the page of
    // the head again each time its own read of it arrived, for as long as the page was open.
    const reads: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/api/events.read')) reads.push(r.postData() ?? '');
    });
    await page.waitForTimeout(1500);
    expect(reads, 'events.read calls in 1.5 s after the run stopped growing').toHaveLength(0);
  } finally {
    await served.stop();
    rmSync(home, { recursive: true, force: true });
  }
});
