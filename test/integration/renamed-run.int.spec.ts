import { cpSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { homeForFile } from './helpers/tmp';
import { Ledger, digestRunIdOf, verifyEvents } from '../../electron/ledger';
import { ingestFolder } from '../../electron/ingest';

/**
 * Two sessions of one name in one folder (the same session copied to two projects): the second is
 * stored as `<name>:2`. Its events are digested over the source's id (issue 24's one rule for
 * stored ids), which its meta names as source_run_id: it verifies with that id.
 */
const FIX = path.join(__dirname, '../fixtures');
const tmpOf = homeForFile('pl-renamed-');
let l: Ledger;

beforeAll(async () => {
  const folder = path.join(tmpOf(), 'runs');
  for (const d of ['a', 'b']) {
    mkdirSync(path.join(folder, d), { recursive: true });
    cpSync(
      path.join(FIX, 'claude-code/projects/-home-marco-projects-spotter/tool_heavy.jsonl'),
      path.join(folder, d, 'tool_heavy.jsonl'),
    );
  }
  l = Ledger.open(folder);
  await ingestFolder(l);
});
afterAll(() => l.close());

it('an unchained run imported under a new id verifies, and names its source’s id', () => {
  const runs = l.runs();
  expect(runs.map((r) => r.run_id).sort()).toEqual(['tool_heavy', 'tool_heavy:2']);
  for (const r of runs) {
    const report = verifyEvents(r.run_id, l.iterate(r.run_id), {
      expectedHead: { seq: r.head_seq, hash: r.head_hash },
      digestRunId: digestRunIdOf(r),
    });
    expect(report.findings, r.run_id).toEqual([]);
  }
  expect(l.run('tool_heavy:2')!.meta).toMatchObject({ source_run_id: 'tool_heavy' });
});
