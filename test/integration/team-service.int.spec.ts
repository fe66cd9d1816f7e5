import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Ledger } from '../../electron/ledger';
import { PostgresEngine } from '../../electron/ledger/postgres/engine';
import { pushRuns } from '../../electron/ledger/push';
import { SqliteEngine } from '../../electron/ledger/sqlite-engine';
import { startOtlpReceiver } from '../../electron/otlp';
import { ProofloopService } from '../../electron/service/service';
import { clusterForFile } from './helpers/pg-cluster';
import { homeForFile, perTest, repoRoot } from './helpers/tmp';

/**
 * The service on a team ledger lists runs as on the folder they came from: an OTLP run's glance
 * (its title from its service and prompt, its model) was read only from a runs folder's ledger, so
 * on PostgreSQL such runs were listed untitled.
 */
const pgc = clusterForFile();
const test = pgc.reason ? it.skip : it;
const { folder, later } = perTest();
homeForFile('pl-team-service-');

describe('the service on a team ledger', { timeout: 120_000 }, () => {
  test('an OTLP run pushed there is listed with the title and model it has in its folder', async () => {
    const dir = folder();
    const local = Ledger.open(dir);
    later(() => local.close());
    const rx = await startOtlpReceiver({ ledger: () => local, port: 0 });
    const res = await fetch(`http://127.0.0.1:${rx.port}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: readFileSync(path.join(repoRoot, 'test/fixtures/otlp/openllmetry-openai-0.62.3.json')),
    });
    expect(res.status).toBe(200);
    await rx.close();
    const ids = local.runs().map((r) => r.run_id);
    expect(ids.length).toBeGreaterThan(0);

    const here = new ProofloopService();
    later(() => void here.closeFolder());
    await here.openFolder(dir);
    const mine = new Map((await here.invoke('runs.list', {})).map((r) => [r.run_id, r.glance]));
    const titled = [...mine.values()].filter((g) => g?.title);
    expect(titled.length).toBeGreaterThan(0);

    const url = await pgc.db();
    const e = await PostgresEngine.connect(url);
    await pushRuns(new SqliteEngine(local), e, ids);
    await e.close();
    const team = new ProofloopService();
    later(() => void team.closeFolder());
    await team.openTeam(url, { folder: folder() });
    for (const r of await team.invoke('runs.list', {})) {
      const g = mine.get(r.run_id);
      expect(r.glance, r.run_id).toMatchObject({ title: g?.title, model: g?.model, format: 'otlp' });
    }
  });
});
