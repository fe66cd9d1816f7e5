import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeClaudeSession } from '../../bench/gen-claude';
import { ProofloopService } from '../../electron/service/service';
import { startWebServer, type WebServer } from '../../electron/transports/http';
import { PUSH_NAMES } from '../../shared/api/contract';

/**
 * A page asks for its runs as soon as it is parsed (renderer/api/early.ts), often while the
 * folder's opening import is still under way. A list asked then waits for the import's end, for a
 * bounded time from its start (ProofloopService.readable): a small folder's first list is whole,
 * not a few runs drawn and the rest a moment later; and the answer's push count is taken after
 * that wait, so the page's stream, connecting after it, does not count the import's pushes as
 * missed and the page does not read everything again for them.
 */
const SESSIONS = 6;
/** FIRST_LIST_WAIT_MS in service.ts: the longest a list may wait. */
const WAIT_BOUND_MS = 150;

let root: string;
let folder: string;
let home: string | undefined;
let service: ProofloopService;
let server: WebServer | null = null;

beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'pl-first-list-'));
  folder = path.join(root, 'projects');
  for (let i = 0; i < SESSIONS; i++) {
    const sid = `0000000${i}-aaaa-4bbb-8ccc-dddddddddddd`;
    writeClaudeSession(path.join(folder, `-home-dev-p${i % 3}`, `${sid}.jsonl`), {
      sessionId: sid,
      cwd: `/home/dev/p${i % 3}`,
      turns: 6,
      seed: i + 1,
    });
  }
  home = process.env.PROOFLOOP_HOME;
  process.env.PROOFLOOP_HOME = path.join(root, 'home');
  service = new ProofloopService({ watch: true });
});
afterEach(async () => {
  await server?.close();
  server = null;
  await service.closeFolder();
  if (home === undefined) delete process.env.PROOFLOOP_HOME;
  else process.env.PROOFLOOP_HOME = home;
  rmSync(root, { recursive: true, force: true });
});

describe('the first list of a folder being opened', () => {
  it('waits for a small import to end and lists every run, within its bound', async () => {
    await service.openFolder(folder, { background: true });
    const t0 = performance.now();
    const r = await service.call('runs.list', {}, 'renderer');
    const waited = performance.now() - t0;
    expect(r.ok).toBe(true);
    const runs = (r as { value: unknown[] }).value;
    // On a machine slow enough that the import outlasts the bound, the list may be partial: then
    // it waited the whole bound, no less.
    if (runs.length < SESSIONS)
      expect(waited, `${runs.length} runs listed`).toBeGreaterThanOrEqual(WAIT_BOUND_MS - 5);
    else expect(runs).toHaveLength(SESSIONS);
    expect(waited, 'no longer than its bound (and a turn)').toBeLessThan(WAIT_BOUND_MS + 500);
    await service.opening;
    // Once the import is over, a list does not wait.
    const t1 = performance.now();
    const again = await service.call('runs.list', {}, 'renderer');
    expect((again as { value: unknown[] }).value).toHaveLength(SESSIONS);
    expect(performance.now() - t1).toBeLessThan(WAIT_BOUND_MS);
  });

  it('answers over HTTP with the push count taken after the wait: every push of the import counted', async () => {
    await service.openFolder(folder, { background: true });
    server = await startWebServer(service, { staticDir: null });
    // The pushes the server counts (after its own counter, registered by startWebServer), and how
    // many had gone out when the import ended (its last push, runs.changed, is made just before).
    let pushed = 0;
    const off = service.onPush((channel) => {
      if (PUSH_NAMES.includes(channel)) pushed += 1;
    });
    let atEnd = -1;
    void service.opening.then(() => (atEnd = pushed));
    // As the page asks at start (renderer/api/early.ts): all at once, while the import runs.
    const ask = (method: string) =>
      fetch(`http://127.0.0.1:${server!.port}/api/${method}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-proofloop-token': server!.token },
        body: '{}',
      });
    const [folderRes, listRes] = await Promise.all([ask('folder.current'), ask('runs.list')]);
    off();
    expect(((await listRes.json()) as { value: unknown[] }).value).toHaveLength(SESSIONS);
    const answered = [folderRes, listRes].map((r) =>
      Number(/\.(\d+)$/.exec(r.headers.get('x-proofloop-pushes') ?? '')?.[1]),
    );
    expect(atEnd, 'the import pushed').toBeGreaterThan(0);
    // A later push (the snapshots the import's end starts) may follow: the page reads again for it.
    for (const n of answered)
      expect(n, `answers ${answered.join(', ')}, import's pushes ${atEnd}`).toBeGreaterThanOrEqual(atEnd);
  });
});
