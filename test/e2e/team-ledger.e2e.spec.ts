import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { PostgresEngine } from '../../electron/ledger/postgres/engine';
import { verifyBundle } from '../../electron/bundle/verify';
import { pgUnavailable, startCluster, type PgCluster } from '../support/pg-cluster';
import { AppPage, expect, test } from './helpers/fixtures';
import { DEMO_EVENTS } from './helpers/runs';
import { serve, type Served } from './helpers/server';
import { MOVED_SESSION, writeMovedValueSession } from './helpers/moved-value';
import { importIntoEngine } from '../../electron/ingest/team';

/**
 * The inspector on a team ledger behaves as on a local folder: `proofloop serve --ledger
 * postgres://…` (here PROOFLOOP_LEDGER) in Chromium lists the runs, shows a run another process is
 * writing grow, the state at a seq, the diff of two runs the served process ran, and exports a
 * bundle that verifies. A throwaway PostgreSQL cluster (initdb, pg_ctl on loopback) per file.
 */
const reason = pgUnavailable();
if (reason) console.log(`team ledger e2e SKIPPED: ${reason}`);
test.skip(reason !== null, reason ?? '');

let cluster: PgCluster | null = null;
let n = 0;
test.beforeAll(async () => {
  cluster = await startCluster();
});
test.afterAll(() => cluster?.stop());

async function freshDb(): Promise<string> {
  const name = `e2e${process.pid}_${++n}`;
  const client = new pg.Client(cluster!.url());
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  return cluster!.url(name);
}

interface Team {
  url: string;
  local: string;
  served: Served;
  /** Another process's view of the ledger: the test writes and checks through it. */
  engine: PostgresEngine;
}

async function team(url?: string): Promise<Team> {
  const db = url ?? (await freshDb());
  const local = mkdtempSync(path.join(os.tmpdir(), 'proofloop-e2e-team-'));
  const served = await serve(local, { env: { PROOFLOOP_LEDGER: db } });
  const engine = await PostgresEngine.connect(db);
  return { url: db, local, served, engine };
}

async function done(t: Team): Promise<void> {
  await t.served.stop();
  await t.engine.close();
  rmSync(t.local, { recursive: true, force: true });
}

async function finishedRun(t: Team, task: string, variant: string): Promise<string> {
  const { run_id } = await t.served.call<{ run_id: string }>('run.start', {
    task_id: task,
    variant,
    seed: 1,
  });
  // Listed at once (the run is made with its writer); its end read from the server by another client.
  expect((await t.served.call<{ run_id: string }>('run.get', { run_id })).run_id).toBe(run_id);
  await expect
    .poll(async () => (await t.engine.run(run_id))?.status, { timeout: 90_000 })
    .toMatch(/^(completed|failed)$/);
  return run_id;
}

test('serve --ledger postgres://: runs listed, a live run grows, state at a seq, diff, export', async ({
  page,
}) => {
  test.setTimeout(240_000);
  const t = await team();
  try {
    const app = new AppPage(page, t.served);
    const info = await t.served.call<{ folder: string; engine: string }>('folder.current');
    expect(info.engine).toBe('postgres');

    // Two runs the served process executes on the team ledger (runner on PostgreSQL).
    const task = (await t.served.call<{ tasks: { id: string }[] }>('tasks.list')).tasks[0]!.id;
    const left = await finishedRun(t, task, 'careful');
    const right = await finishedRun(t, task, 'rogue');
    for (const id of [left, right]) {
      const run = await t.engine.run(id);
      expect(run?.status).toBe('completed');
      expect((await t.engine.verify(id)).ok).toBe(true);
    }

    // A run another process (this test, on its own connection) is writing: it grows on the page.
    const w = await t.engine.writer('live', { create: {}, label: 'e2e writer' });
    await w.appendBatch(DEMO_EVENTS.slice(0, 2));
    await app.open();
    await expect(page.getByTestId('team-badge')).toBeVisible();
    await expect(page.getByTestId('folder-path')).toContainText(t.url.replace(/\/\/.*@/, '//postgres@'));
    await expect(app.runItem(left)).toBeVisible();
    await expect(app.runItem(right)).toBeVisible();
    await app.selectRun('live');
    await expect(page.getByTestId('follow-toggle')).toHaveAttribute('aria-pressed', 'true');
    await app.expectSeq(2, 2);
    await w.appendBatch(DEMO_EVENTS.slice(2, 6));
    await app.expectSeq(6, 6);
    await expect(app.runItem('live')).toContainText('6 ev');
    await w.appendBatch(DEMO_EVENTS.slice(6, 9));
    await app.expectSeq(9, 9);
    await w.close();

    // State at a seq, from the team ledger: what the call to c1 returned.
    await page.keyboard.press('g');
    await page.getByTestId('goto-input').fill('5');
    await page.keyboard.press('Enter');
    await app.expectSeq(5, 9);
    await app.expectStateAt(5);
    const state = await t.served.call<{ state: { seq: number } }>('state.at', { run_id: 'live', seq: 5 });
    expect(state.state.seq).toBe(5);
    await app.screenshot('team-ledger-live');

    // Diff of the two runs the runner wrote there (a fresh load: the token rides in the link once).
    await page.goto('about:blank');
    await app.open(`#/diff/${left}/${right}`);
    await expect(page.getByTestId('diff-view')).toBeVisible();
    await expect(page.getByTestId('first-divergence')).toContainText('First divergence');
    await expect(page.locator('[data-testid="diff-row"][data-first-divergence="true"]')).toBeVisible();
    await expect(page.getByTestId('final-state-diff')).toBeVisible();

    // Export from the page: a bundle of a team run, written in the local folder, that verifies.
    await page.goto('about:blank');
    await app.open();
    await app.selectRun(left);
    await page.getByTestId('export-bundle-button').click();
    const dialog = page.getByTestId('export-dialog');
    await expect(dialog.locator(`[data-testid="export-run"][data-run-id="${left}"]`)).toBeChecked();
    await dialog.getByTestId('export-out').fill('team.bundle.zip');
    await dialog.getByTestId('export-submit').click();
    const result = dialog.getByTestId('export-result');
    await expect(result.getByTestId('export-file')).toHaveText(/team\.bundle\.zip$/);
    await result.getByTestId('verify-bundle').click();
    await expect(result.getByTestId('export-verdict').getByTestId('verdict-integrity')).toHaveAttribute(
      'data-value',
      'ok',
    );
    const verdict = await verifyBundle(path.join(t.local, 'team.bundle.zip'));
    expect(verdict.ok).toBe(true);
    const head = (await t.engine.run(left))!;
    expect(verdict.runs.find((r) => r.run_id === left)).toMatchObject({ head_hash: head.head_hash });
  } finally {
    await done(t);
  }
});

test('an imported run pushed to the team ledger: its moved value opens whole there, from the server, not a local file', async ({
  page,
  folder,
}) => {
  // Imported on one machine (its artifacts beside that folder's ledger), pushed to the server.
  writeMovedValueSession(folder);
  const db = await freshDb();
  const pusher = await PostgresEngine.connect(db);
  try {
    const r = await importIntoEngine(folder, pusher);
    expect(r.pushed.find((p) => p.run_id === MOVED_SESSION)).toMatchObject({
      action: 'copied',
      artifacts: 1,
    });
  } finally {
    await pusher.close();
  }
  // Served by another process with a local folder of its own, which holds no artifact.
  const t = await team(db);
  try {
    const app = new AppPage(page, t.served);
    await app.open(`#/run/${MOVED_SESSION}/seq/2`);
    const moved = page.getByTestId('moved-values');
    await expect(moved).toContainText('too large for the event and moved to an artifact');
    await moved.getByRole('button', { name: 'Open' }).click();
    await expect(moved.locator('.artifact-body')).toContainText('END-OF-OUTPUT');
  } finally {
    await done(t);
  }
});

test('Open team ledger… takes a connection string; the password is used, never shown or listed', async ({
  page,
  folder,
}) => {
  const url = await freshDb();
  const seed = await PostgresEngine.connect(url);
  const w = await seed.writer('on-the-server', { create: {} });
  await w.appendBatch(DEMO_EVENTS.slice(0, 3));
  await w.close();
  await seed.close();
  const served = await serve(folder);
  try {
    const app = new AppPage(page, served);
    await app.open();
    await page.getByTestId('folder-path').click();
    await page.getByTestId('open-team-ledger').click();
    // A password in the URL or apart: this trust-auth test cluster ignores it, the page must not keep it.
    const secret = 'not-to-be-kept';
    await page.getByTestId('team-url').fill(url);
    await page.getByTestId('team-password').fill(secret);
    await page.getByTestId('team-open').click();
    await expect(app.runItem('on-the-server')).toBeVisible();
    await expect(page.getByTestId('team-badge')).toBeVisible();
    await page.getByTestId('folder-path').click();
    const options = page.getByTestId('folder-option');
    await expect(options.first()).toHaveAttribute('data-folder', url);
    await expect(page.getByTestId('folder-menu')).not.toContainText(secret);
    expect(JSON.stringify(await served.call('folder.recent'))).not.toContain(secret);
    expect(JSON.stringify(await served.call('folder.current'))).not.toContain(secret);
    // A server that cannot be reached: the error names it, without the password.
    await page.getByTestId('open-team-ledger').click();
    await page.getByTestId('team-url').fill(`postgres://someone:${secret}@127.0.0.1:1/nowhere`);
    await page.getByTestId('team-open').click();
    await expect(page.getByTestId('team-error')).toContainText('cannot reach the ledger');
    await expect(page.getByTestId('team-error')).not.toContainText(secret);
    // The ledger that was open stays open.
    await expect(app.runItem('on-the-server')).toBeVisible();
  } finally {
    await served.stop();
  }
});
