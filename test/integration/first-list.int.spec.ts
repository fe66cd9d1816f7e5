import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeClaudeSession } from '../../bench/gen-claude';
import { ProofloopService } from '../../electron/service/service';
import { startWebServer, type WebServer } from '../../electron/transports/http';

/**
 * A page asks for its runs as soon as it is parsed (renderer/api/early.ts), often while the
 * folder's opening import is still under way. A list asked then waits for the import's end, for a
 * bounded time from its start (ProofloopService.readable): a small folder's first list is whole,
 * not a few runs drawn and the rest a moment later; and the answer's push count is taken after
 * that wait, so the page's stream, connecting after it, finds nothing missed and the page does not
 * read everything again.
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

  it('answers over HTTP with the push count after the wait: the stream that connects next missed nothing', async () => {
    await service.openFolder(folder, { background: true });
    server = await startWebServer(service, { staticDir: null });
    // As the page asks at start (renderer/api/early.ts): all at once, while the import runs.
    const ask = (method: string) =>
      fetch(`http://127.0.0.1:${server!.port}/api/${method}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-proofloop-token': server!.token },
        body: '{}',
      });
    const [folderRes, listRes] = await Promise.all([ask('folder.current'), ask('runs.list')]);
    const answered = [folderRes, listRes].map((r) => r.headers.get('x-proofloop-pushes'));
    expect(((await listRes.json()) as { value: unknown[] }).value).toHaveLength(SESSIONS);
    await service.opening;
    const stream = await fetch(
      `http://127.0.0.1:${server.port}/api/events?token=${encodeURIComponent(server.token)}`,
    );
    const reader = stream.body!.getReader();
    let text = '';
    while (!/event: hello\ndata: .*\n/.test(text)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    await reader.cancel();
    const hello = (JSON.parse(/event: hello\ndata: (.*)\n/.exec(text)![1]!) as { pushes: string }).pushes;
    const n = (count: string | null) => Number(/\.(\d+)$/.exec(count ?? '')?.[1]);
    // The import pushed (its runs, its progress) while the list waited: counted in the answer.
    expect(n(hello), 'the import pushed').toBeGreaterThan(0);
    expect(answered.map(n), `answers ${answered.join(', ')}, hello ${hello}`).toEqual([n(hello), n(hello)]);
  });
});
