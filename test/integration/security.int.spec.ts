// The adversarial suite of issue 15: each case attacks the API as a compromised renderer (Electron
// IPC, through the same function ipc.ts registers) and as a web page (HTTP against a real
// `proofloop serve` child process), and checks the refusal, that every run still verifies, and
// that no file outside the folder changed (hashed before and after).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { METHOD_NAMES } from '../../shared/api/contract';
import { RENDERER_METHODS } from '../../shared/api/surface';
import type { Result } from '../../shared/result';
import { digestRunIdOf, Ledger, verifyEvents } from '../../electron/ledger';
import { storeArtifact } from '../../electron/ledger/artifact-store';
import { ProofloopService } from '../../electron/service/service';
import { handleIpcCall } from '../../electron/transports/ipc-call';
import { serveAppRequest } from '../../electron/shell/app-protocol';
import { freshFolder, repoRoot, runTs } from './helpers/tmp';

type Call = (method: string, args: unknown) => Promise<Result<unknown>>;

/** sha256 of every file and link under `dir` (links by their target: nothing is followed). */
function hashTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      const rel = path.relative(dir, p);
      if (e.isSymbolicLink()) out[rel] = `link:${readlinkSync(p)}`;
      else if (e.isDirectory()) walk(p);
      else out[rel] = createHash('sha256').update(readFileSync(p)).digest('hex');
    }
  };
  walk(dir);
  return out;
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const SECRET = 'outside the folder: must never be read or written\n';

/**
 * A runs folder with one run of each end (crashed, completed, open), runs whose folder, mirror,
 * artifacts or workspace are links to a folder outside, and that outside folder.
 */
function seed(folder: string, outside: string): void {
  mkdirSync(path.join(outside, 'linked-target'), { recursive: true });
  // A mirror whose last line does not parse: folder.open once truncated and rewrote it.
  writeFileSync(path.join(outside, 'linked-target', 'events.jsonl'), '{"seq":1}\n{"seq": 2, torn\n');
  writeFileSync(path.join(outside, 'secret.txt'), SECRET);
  writeFileSync(path.join(outside, 'mirror.jsonl'), "someone else's file\n");
  writeFileSync(path.join(outside, 'victim.zip'), 'not a zip, but named like one\n');
  mkdirSync(path.join(outside, 'artifacts'));
  writeFileSync(path.join(outside, 'artifacts', sha256(SECRET)), SECRET);
  mkdirSync(path.join(outside, 'wsdir'));
  writeFileSync(path.join(outside, 'wsdir', 'keep.py'), 'print("mine")\n');

  const ledger = Ledger.open(folder);
  const started = { task_id: 't', goal: 'g', agent: { name: 'sim' } };
  const write = (
    runId: string,
    events: [string, Record<string, unknown>][],
    meta?: Record<string, unknown>,
  ) => {
    const w = ledger.writer(runId, meta ? { create: { source: 'executed', meta } } : {});
    for (const [k, p] of events) w.append(k, p);
    w.close();
  };
  write('crashed', [
    ['run_started', started],
    ['model_proposed', { call_id: 'c1', tool: 'read_file', args: { path: 'a.py' } }],
    ['run_failed', { reason: 'model process exited', error_type: 'model_crash' }],
  ]);
  write('done', [
    ['run_started', started],
    ['run_completed', { outcome: 'passed' }],
  ]);
  write('open', [['run_started', started]]);
  for (const id of ['linked', 'mirrorlink', 'arts', 'arts2', 'arts3']) write(id, [['run_started', started]]);
  // Died before run_started (resume starts it over: a fresh workspace), its workspace a link.
  write('ws', [], { task_id: 'fix-discount', variant: 'careful', seed: 1, mode: 'live' });
  write('wsrun', [], { task_id: 'fix-discount', variant: 'careful', seed: 1, mode: 'live' });
  ledger.close();

  const at = (...p: string[]) => path.join(folder, ...p);
  // The run folder is a link (a shared or unpacked runs folder).
  rmSync(at('linked'), { recursive: true, force: true });
  symlinkSync(path.join(outside, 'linked-target'), at('linked'));
  rmSync(at('wsrun'), { recursive: true, force: true });
  symlinkSync(path.join(outside, 'wsdir'), at('wsrun'));
  // The mirror file is a link.
  rmSync(at('mirrorlink', 'events.jsonl'));
  symlinkSync(path.join(outside, 'mirror.jsonl'), at('mirrorlink', 'events.jsonl'));
  // A real artifact, and artifacts reached through links.
  storeArtifact(at('arts'), 'a real artifact\n');
  mkdirSync(at('arts2'), { recursive: true });
  symlinkSync(path.join(outside, 'artifacts'), at('arts2', 'artifacts'));
  mkdirSync(at('arts3', 'artifacts'), { recursive: true });
  symlinkSync(path.join(outside, 'artifacts', sha256(SECRET)), at('arts3', 'artifacts', sha256(SECRET)));
  mkdirSync(at('ws'), { recursive: true });
  symlinkSync(path.join(outside, 'wsdir'), at('ws', 'workspace'));
  // Bundle outputs: a folder link, a file link, and an inside file that is not a bundle.
  symlinkSync(outside, at('out-link'));
  symlinkSync(path.join(outside, 'victim.zip'), at('x.zip'));
  writeFileSync(at('notes.zip'), 'my notes, not a bundle\n');
}

/** Every run of the folder verifies (chain, seqs, head), read by a second connection. */
function expectLedgerVerifies(folder: string): void {
  const ledger = Ledger.open(folder, { appendHelper: false });
  try {
    for (const run of ledger.runs()) {
      const report = verifyEvents(run.run_id, ledger.iterate(run.run_id), {
        expectedHead: { seq: run.head_seq, hash: run.head_hash },
        digestRunId: digestRunIdOf(run),
      });
      expect(report.findings, `run ${run.run_id}`).toEqual([]);
    }
  } finally {
    ledger.close();
  }
}

const refused = (r: Result<unknown>, code: string, message?: RegExp) => {
  expect(r.ok, JSON.stringify(r)).toBe(false);
  if (r.ok) return;
  expect(r.error.code).toBe(code);
  if (message) expect(r.error.message).toMatch(message);
};

interface Surface {
  name: string;
  folder: string;
  outside: string;
  /** A call as the renderer makes it (IPC from the window, or HTTP from the page). */
  call: Call;
  /** The mirror's hash of runs whose files must not change. */
  close(): Promise<void>;
}

async function ipcSurface(): Promise<Surface> {
  const f = freshFolder();
  const o = freshFolder();
  seed(f.dir, o.dir);
  const service = new ProofloopService();
  await service.openFolder(f.dir);
  return {
    name: 'IPC',
    folder: f.dir,
    outside: o.dir,
    call: (method, args) => handleIpcCall(service, () => true, method, {}, args),
    close: async () => {
      service.closeFolder();
      f.cleanup();
      o.cleanup();
    },
  };
}

interface Served {
  port: number;
  token: string;
  /** What serve says of its OTLP receiver: its endpoint, or why it did not start. */
  otlp: unknown;
  child: ReturnType<typeof runTs>['child'];
  done: ReturnType<typeof runTs>['done'];
}

/** `proofloop serve <folder> --json` in a child process, once it printed where it listens. */
async function startServe(
  folder: string,
  opts: { detached?: boolean; args?: string[] } = {},
): Promise<Served> {
  let out = '';
  let info: { port: number; token: string; otlp: unknown } | null = null;
  // Any free OTLP port unless a test names one: 4318 may be another program's (or another test's).
  const args = opts.args ?? ['--otlp-port', '0'];
  const { child, done } = runTs('electron/cli/main.ts', ['serve', folder, '--json', ...args], {
    env: { PROOFLOOP_CLI_ENTRY: '1' },
    detached: opts.detached,
    onLine: (line) => {
      out += line + '\n';
      try {
        info = JSON.parse(out) as { port: number; token: string; otlp: unknown };
      } catch {
        // not the whole document yet
      }
    },
  });
  const t0 = Date.now();
  while (!info) {
    if (child.exitCode !== null) throw new Error(`serve exited: ${(await done).stderr}`);
    if (Date.now() - t0 > 30_000) throw new Error(`serve printed no URL: ${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const { port, token, otlp } = info as { port: number; token: string; otlp: unknown };
  return { port, token, otlp, child, done };
}

interface Raw {
  status: number;
  text: string;
  json: Result<unknown> | null;
}

/** One HTTP request as a browser (or an attacker) would send it: every header under test control. */
function raw(
  port: number,
  opts: { path: string; method?: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path: opts.path, method: opts.method ?? 'POST', headers: opts.headers },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => {
          let json: Result<unknown> | null = null;
          try {
            json = JSON.parse(text) as Result<unknown>;
          } catch {
            // an event stream or a page
          }
          resolve({ status: res.statusCode ?? 0, text, json });
        });
        if ((res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
          resolve({ status: res.statusCode ?? 0, text: '', json: null });
          res.destroy();
        }
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

async function httpSurface(): Promise<Surface & { port: number; token: string }> {
  const f = freshFolder();
  const o = freshFolder();
  seed(f.dir, o.dir);
  const s = await startServe(f.dir);
  const headers = () => ({
    host: `127.0.0.1:${s.port}`,
    'content-type': 'application/json',
    'x-proofloop-token': s.token,
  });
  return {
    name: 'HTTP (proofloop serve)',
    folder: f.dir,
    outside: o.dir,
    port: s.port,
    token: s.token,
    call: async (method, args) =>
      (await raw(s.port, { path: `/api/${method}`, headers: headers(), body: JSON.stringify(args) })).json!,
    close: async () => {
      s.child.kill('SIGTERM');
      await s.done;
      f.cleanup();
      o.cleanup();
    },
  };
}

const surfaces: [string, () => Promise<Surface>][] = [
  ['IPC', ipcSurface],
  ['HTTP (proofloop serve)', httpSurface],
];

describe.each(surfaces)('the renderer surface over %s', (_name, make) => {
  let s: Surface;
  let before: Record<string, string>;
  beforeAll(async () => {
    s = await make();
    before = hashTree(s.outside);
  }, 60_000);
  afterAll(async () => s.close());
  afterEach(() => {
    expect(hashTree(s.outside)).toEqual(before);
    expectLedgerVerifies(s.folder);
  });

  describe("1. bundle.export cannot replace the ledger or a run's files", () => {
    it('force over .proofloop/ledger.db is refused, and the ledger still answers', async () => {
      refused(
        await s.call('bundle.export', { run_ids: ['done'], out: '.proofloop/ledger.db', force: true }),
        'bad_args',
        /\.zip/,
      );
      refused(
        await s.call('bundle.export', { run_ids: ['done'], out: '.proofloop/audit.zip', force: true }),
        'forbidden_path',
        /never written into \.proofloop/,
      );
      expect((await s.call('runs.list', {})).ok).toBe(true);
    });
    it("into a run's folder, over its mirror or a new zip there, is refused", async () => {
      refused(
        await s.call('bundle.export', { run_ids: ['done'], out: 'done/events.jsonl', force: true }),
        'bad_args',
      );
      refused(
        await s.call('bundle.export', { run_ids: ['done'], out: 'done/audit.zip' }),
        'forbidden_path',
        /run's folder/,
      );
    });
    it('force over a file that is not an earlier bundle is refused', async () => {
      const notes = readFileSync(path.join(s.folder, 'notes.zip'), 'utf8');
      refused(
        await s.call('bundle.export', { run_ids: ['done'], out: 'notes.zip', force: true }),
        'forbidden_path',
        /not an audit bundle/,
      );
      expect(readFileSync(path.join(s.folder, 'notes.zip'), 'utf8')).toBe(notes);
    });
    it('through a link to a folder outside, or over a link to a file outside, is refused', async () => {
      refused(
        await s.call('bundle.export', { run_ids: ['done'], out: 'out-link/audit.zip' }),
        'forbidden_path',
        /symbolic link/,
      );
      refused(
        await s.call('bundle.export', { run_ids: ['done'], out: 'x.zip', force: true }),
        'forbidden_path',
      );
      refused(
        await s.call('bundle.export', { run_ids: ['done'], out: path.join(s.outside, 'a.zip') }),
        'forbidden_path',
        /outside/,
      );
    });
    it('a new .zip, and force over that earlier bundle, are written', async () => {
      const first = await s.call('bundle.export', { run_ids: ['done'], out: 'audit.zip' });
      expect(first.ok, JSON.stringify(first)).toBe(true);
      refused(await s.call('bundle.export', { run_ids: ['done'], out: 'audit.zip' }), 'conflict');
      const again = await s.call('bundle.export', {
        run_ids: ['done', 'crashed'],
        out: 'audit.zip',
        force: true,
      });
      expect(again.ok, JSON.stringify(again)).toBe(true);
    });
  });

  describe('2. the renderer cannot rewrite a run', () => {
    it('appending a verdict and run_completed to a crashed run is refused', async () => {
      for (const [kind, payload] of [
        ['judge_verdict', { passed: true }],
        ['run_completed', { outcome: 'passed' }],
      ] as const) {
        refused(
          await s.call('events.append', { run_id: 'crashed', kind, payload }),
          'forbidden',
          /event_annotated/,
        );
      }
    });
    it('no host-only kind is appended to an open run either, nor a new run created', async () => {
      for (const kind of ['run_started', 'model_proposed', 'tool_returned', 'run_resumed', 'run_failed']) {
        refused(await s.call('events.append', { run_id: 'open', kind, payload: {} }), 'forbidden');
      }
      refused(
        await s.call('events.append', {
          run_id: 'brand-new',
          kind: 'event_annotated',
          payload: { target_seq: 1, note: 'x' },
        }),
        'not_found',
      );
      const open = (await s.call('run.get', { run_id: 'open' })) as { ok: true; value: { head_seq: number } };
      expect(open.value.head_seq).toBe(1);
    });
    it('an annotation is how a person adds to a run, also after its end', async () => {
      const r = await s.call('events.append', {
        run_id: 'crashed',
        kind: 'event_annotated',
        payload: { target_seq: 3, note: 'the model crashed here' },
      });
      expect(r.ok, JSON.stringify(r)).toBe(true);
      const run = (await s.call('run.get', { run_id: 'crashed' })) as { ok: true; value: { status: string } };
      expect(run.value.status).toBe('failed');
    });
    it('methods off the renderer surface are refused', async () => {
      const off = METHOD_NAMES.filter((m) => !(RENDERER_METHODS as readonly string[]).includes(m));
      // folder.recent is on the surface: the Open folder menu lists the folders the user chose (the
      // app's recent ones, the folders named to `serve`); folder.open still refuses any other.
      expect(off).toEqual(expect.arrayContaining(['run.wait', 'run.verify']));
      for (const m of off)
        refused(await s.call(m, { run_id: 'crashed' }), 'forbidden', /not available to the window/);
    });
    it('run.resume (the header’s Resume) is refused for a run the runner did not execute', async () => {
      // On the surface since issue 29; the runner continues only its own stopped simulated runs.
      const r = (await s.call('run.resume', { run_id: 'crashed' })) as { ok: boolean };
      expect(r.ok, JSON.stringify(r)).toBe(false);
      const run = (await s.call('run.get', { run_id: 'crashed' })) as { ok: true; value: { status: string } };
      expect(run.value.status).toBe('failed');
    });
    it('a run started from the window cannot name a configuration folder (its hooks are commands)', async () => {
      const before = await s.call('runs.list', {});
      refused(
        await s.call('run.start', { task_id: 'fix-slugify', agent: 'claude-code', config_dir: s.outside }),
        'forbidden',
        /configuration folder/,
      );
      // Refused before anything ran: no run was created.
      const after = await s.call('runs.list', {});
      expect(after.ok && (after.value as unknown[]).length).toBe(
        before.ok && (before.value as unknown[]).length,
      );
    });
  });

  describe('3. writes do not follow links out of the folder', () => {
    it('an annotation to a run whose folder is a link is refused', async () => {
      refused(
        await s.call('events.append', {
          run_id: 'linked',
          kind: 'event_annotated',
          payload: { target_seq: 1, note: 'n' },
        }),
        'forbidden_path',
        /symbolic link/,
      );
    });
    it('an annotation to a run whose mirror is a link is refused', async () => {
      refused(
        await s.call('events.append', {
          run_id: 'mirrorlink',
          kind: 'event_annotated',
          payload: { target_seq: 1, note: 'n' },
        }),
        'forbidden_path',
        /mirror/,
      );
    });
    it('reopening the folder repairs no mirror through a link', async () => {
      const r = (await s.call('folder.open', { folder: s.folder })) as {
        ok: true;
        value: { mirrors_repaired: string[] };
      };
      expect(r.ok).toBe(true);
      expect(r.value.mirrors_repaired).not.toContain('linked');
      expect(r.value.mirrors_repaired).not.toContain('mirrorlink');
    });
  });

  describe('4. artifact.read does not follow links', () => {
    it('reads a real artifact', async () => {
      const r = await s.call('artifact.read', { run_id: 'arts', digest: sha256('a real artifact\n') });
      expect(r).toMatchObject({ ok: true, value: { text: 'a real artifact\n' } });
    });
    it('refuses <run>/artifacts as a link, an artifact file as a link, and <run> as a link', async () => {
      for (const run_id of ['arts2', 'arts3', 'linked']) {
        refused(
          await s.call('artifact.read', { run_id, digest: sha256(SECRET) }),
          'forbidden_path',
          /symbolic link/,
        );
      }
    });
  });

  describe('8. unknown fields, long strings and large events', () => {
    it('an unknown field is bad_args naming it, on every method of the surface', async () => {
      for (const m of RENDERER_METHODS) {
        const r = await s.call(m, { run_id: 'done', zz_probe: 1 });
        refused(r, 'bad_args', /zz_probe/);
      }
    });
    it('a 3 MB folder path is refused without being echoed back', async () => {
      const r = await s.call('folder.open', { folder: '/tmp/' + 'a'.repeat(3_000_000) });
      refused(r, 'bad_args');
      expect(JSON.stringify(r).length).toBeLessThan(1000);
    });
    it('an event over 1 MiB is refused, pointing at artifacts', async () => {
      const r = await s.call('events.append', {
        run_id: 'done',
        kind: 'event_annotated',
        payload: { target_seq: 1, note: 'x'.repeat(1_100_000) },
      });
      refused(r, 'too_large', /artifact/);
    });
  });
});

describe('the ledger itself: terminal events end a run (the CLI has the whole append)', () => {
  const f = freshFolder();
  const o = freshFolder();
  let service: ProofloopService;
  const local: Call = (m, a) => service.call(m, a, 'local');
  beforeAll(async () => {
    seed(f.dir, o.dir);
    service = new ProofloopService();
    await service.openFolder(f.dir);
  });
  afterAll(() => {
    service.closeFolder();
    f.cleanup();
    o.cleanup();
  });
  afterEach(() => expectLedgerVerifies(f.dir));

  it('after run_failed: a verdict, run_completed and a plain run_resumed are refused', async () => {
    for (const [kind, payload] of [
      ['judge_verdict', { passed: true }],
      ['run_completed', { outcome: 'passed' }],
      ['run_resumed', { from_seq: 3 }],
      ['model_proposed', { call_id: 'c9', tool: 'read_file', args: {} }],
    ] as const) {
      refused(await local('events.append', { run_id: 'crashed', kind, payload }), 'run_ended', /has failed/);
    }
  });
  it('after run_completed: anything but an annotation is refused', async () => {
    refused(
      await local('events.append', { run_id: 'done', kind: 'run_failed', payload: { reason: 'x' } }),
      'run_ended',
    );
    refused(
      await local('events.append', { run_id: 'done', kind: 'run_resumed', payload: { from_seq: 2 } }),
      'run_ended',
    );
    const note = await local('events.append', {
      run_id: 'done',
      kind: 'event_annotated',
      payload: { target_seq: 2, note: 'ok' },
    });
    expect(note.ok).toBe(true);
  });
  it('a batch that ends a run and goes on is refused whole', () => {
    const ledger = service.ctx.ledger();
    const w = ledger.writer('open');
    try {
      expect(() =>
        w.appendBatch([
          { kind: 'run_completed', payload: { outcome: 'passed' } },
          { kind: 'judge_verdict', payload: { passed: true } },
        ]),
      ).toThrow(/item 2 of the batch.*has completed/);
    } finally {
      w.close();
    }
    expect(ledger.run('open')!.head_seq).toBe(1);
  });
  it("the host's resume appends run_resumed after run_failed, and the run goes on", () => {
    const ledger = service.ctx.ledger();
    const w = ledger.writer('crashed', { create: false, resume: true });
    try {
      w.append('run_resumed', { from_seq: 3 });
      w.append('run_completed', { outcome: 'passed' });
      expect(() => w.append('run_resumed', { from_seq: 5 })).toThrow(/has completed/);
    } finally {
      w.close();
    }
    expect(ledger.run('crashed')!.status).toBe('completed');
  });
  it('an append over 1 MiB is refused from the CLI too', async () => {
    refused(
      await local('events.append', {
        run_id: 'open',
        kind: 'model_responded',
        payload: { content: 'x'.repeat(3_000_000) },
      }),
      'too_large',
      /artifact/,
    );
  });
  it('every method refuses an unknown field, naming it', async () => {
    for (const m of METHOD_NAMES) refused(await local(m, { zz_probe: 1 }), 'bad_args', /zz_probe/);
  });
});

describe('3. the folder: links at .proofloop, a run folder and its workspace', () => {
  const f = freshFolder();
  const o = freshFolder();
  let before: Record<string, string>;
  let service: ProofloopService;
  beforeAll(async () => {
    seed(f.dir, o.dir);
    before = hashTree(o.dir);
    service = new ProofloopService({ tasksDir: path.join(repoRoot, 'tasks') });
    await service.openFolder(f.dir);
  });
  afterAll(() => {
    service.closeFolder();
    f.cleanup();
    o.cleanup();
  });
  afterEach(() => {
    expect(hashTree(o.dir)).toEqual(before);
  });

  it('a CLI append to a run whose folder is a link writes nothing outside', async () => {
    refused(
      await service.call('events.append', {
        run_id: 'linked',
        kind: 'model_responded',
        payload: { content: 'x' },
      }),
      'forbidden_path',
      /symbolic link/,
    );
    expect(service.ctx.ledger().run('linked')!.head_seq).toBe(1);
    expectLedgerVerifies(f.dir);
  });
  it('resume does not prepare a workspace that is a link (the run fails, saying why)', async () => {
    const started = await service.call('run.resume', { run_id: 'ws' });
    expect(started.ok, JSON.stringify(started)).toBe(true);
    const end = (await service.call('run.wait', { run_id: 'ws' })) as { ok: true; value: { status: string } };
    expect(end.value.status).toBe('failed');
    const last = service.ctx.ledger().read('ws').at(-1)!;
    expect(last.kind).toBe('run_failed');
    expect(String(last.payload.reason)).toMatch(/workspace.*symbolic link/);
    expect(lstatSync(path.join(f.dir, 'ws', 'workspace')).isSymbolicLink()).toBe(true);
    expectLedgerVerifies(f.dir);
  });
  it('resume of a run whose folder is a link is refused before anything is written', async () => {
    refused(await service.call('run.resume', { run_id: 'wsrun' }), 'forbidden_path', /symbolic link/);
    expect(service.ctx.ledger().run('wsrun')!.head_seq).toBe(0);
  });
  it('a folder whose .proofloop is a link is not opened', () => {
    const g = freshFolder();
    try {
      mkdirSync(path.join(o.dir, 'elsewhere'));
      symlinkSync(path.join(o.dir, 'elsewhere'), path.join(g.dir, '.proofloop'));
      expect(() => Ledger.open(g.dir)).toThrow(/\.proofloop.*symbolic link/);
      expect(readdirSync(path.join(o.dir, 'elsewhere'))).toEqual([]);
    } finally {
      rmSync(path.join(o.dir, 'elsewhere'), { recursive: true });
      g.cleanup();
    }
  });
});

describe('5-6. web mode refuses cross-site calls, tokens in URLs and malformed URLs', () => {
  let s: Awaited<ReturnType<typeof httpSurface>>;
  let before: Record<string, string>;
  const host = () => `127.0.0.1:${s.port}`;
  const good = () => ({ host: host(), 'content-type': 'application/json', 'x-proofloop-token': s.token });
  beforeAll(async () => {
    s = await httpSurface();
    before = hashTree(s.outside);
  }, 60_000);
  afterAll(async () => s.close());
  afterEach(() => {
    expect(hashTree(s.outside)).toEqual(before);
    expectLedgerVerifies(s.folder);
  });

  it('a call with the token in ?token= is refused: header only', async () => {
    const r = await raw(s.port, {
      path: `/api/runs.list?token=${s.token}`,
      headers: { host: host(), 'content-type': 'application/json' },
      body: '{}',
    });
    expect(r.status).toBe(401);
    expect(r.json).toMatchObject({
      ok: false,
      error: { message: expect.stringMatching(/header, not the URL/) },
    });
  });
  it('the push stream takes ?token= (EventSource sends no headers), and nothing without it', async () => {
    const ok = await raw(s.port, {
      path: `/api/events?token=${s.token}`,
      method: 'GET',
      headers: { host: host() },
    });
    expect(ok.status).toBe(200);
    const no = await raw(s.port, { path: '/api/events', method: 'GET', headers: { host: host() } });
    expect(no.status).toBe(401);
  });
  it.each([
    ['text/plain', '{"run_ids":["done"],"out":"cs.zip"}'],
    ['application/x-www-form-urlencoded', 'run_ids=done'],
    ['multipart/form-data; boundary=x', '--x--'],
    ['', '{}'],
  ])('a POST with Content-Type "%s" (no CORS preflight) is refused with 415', async (type, body) => {
    const headers: Record<string, string> = { ...good() };
    if (type) headers['content-type'] = type;
    else delete headers['content-type'];
    const r = await raw(s.port, { path: '/api/bundle.export', headers, body });
    expect(r.status).toBe(415);
    expect(existsSync(path.join(s.folder, 'cs.zip'))).toBe(false);
  });
  it.each([['http://evil.example'], ['null'], [`http://127.0.0.1:1`], ['https://127.0.0.1']])(
    'a call with Origin %s is refused with 403',
    async (origin) => {
      const r = await raw(s.port, { path: '/api/runs.list', headers: { ...good(), origin }, body: '{}' });
      expect(r.status).toBe(403);
      expect(r.json).toMatchObject({
        ok: false,
        error: { code: 'unauthorized', message: expect.stringMatching(/Origin/) },
      });
    },
  );
  it.each([['cross-site'], ['same-site']])(
    'a call with Sec-Fetch-Site: %s is refused with 403',
    async (site) => {
      const r = await raw(s.port, {
        path: '/api/runs.list',
        headers: { ...good(), 'sec-fetch-site': site },
        body: '{}',
      });
      expect(r.status).toBe(403);
    },
  );
  it('the page itself (same origin) is answered', async () => {
    const r = await raw(s.port, {
      path: '/api/runs.list',
      headers: { ...good(), origin: `http://${host()}`, 'sec-fetch-site': 'same-origin' },
      body: '{}',
    });
    expect(r.status).toBe(200);
  });
  it.each([
    ['GET', '/%'],
    ['POST', '/api/%E0%A4%A'],
    ['GET', '/api/events%'],
    ['GET', '/assets/%C0'],
  ])('%s %s is a 400, before the token or Host check', async (method, p) => {
    for (const headers of [good(), { host: 'evil.example' }]) {
      const r = await raw(s.port, { path: p, method, headers, body: method === 'POST' ? '{}' : undefined });
      expect(r.status).toBe(400);
      expect(r.json).toMatchObject({
        ok: false,
        error: { code: 'bad_args', message: expect.stringMatching(/malformed URL/) },
      });
    }
  });
  it('a body over the limit is a 413 from Content-Length, before it is read', async () => {
    const r = await raw(s.port, {
      path: '/api/runs.list',
      headers: { ...good(), 'content-length': String(200 << 20) },
    });
    expect(r.status).toBe(413);
  });
  it('a chunked body over the limit is a 413 once it passes it', async () => {
    const r = await raw(s.port, {
      path: '/api/events.append',
      headers: { ...good(), 'transfer-encoding': 'chunked' },
      body: Buffer.alloc(5 << 20, 0x20),
    });
    expect(r.status).toBe(413);
  });
  it('a 3 MB event under the body limit is refused as too large, with 413', async () => {
    const body = JSON.stringify({
      run_id: 'open',
      kind: 'event_annotated',
      payload: { target_seq: 1, note: 'y'.repeat(3_000_000) },
    });
    const r = await raw(s.port, { path: '/api/events.append', headers: good(), body });
    expect(r.status).toBe(413);
    expect(r.json).toMatchObject({ ok: false, error: { code: 'too_large' } });
  });
  it('200 concurrent calls are all answered', async () => {
    const rs = await Promise.all(
      Array.from({ length: 200 }, () => raw(s.port, { path: '/api/runs.list', headers: good(), body: '{}' })),
    );
    expect(rs.every((r) => r.status === 200)).toBe(true);
  });
});

describe('7. proofloop serve stops on the first signal', () => {
  /** Pids of live processes in process group `pgid` (the serve child and anything it started). */
  const groupMembers = (pgid: number): number[] =>
    readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .filter((d) => {
        try {
          const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
          const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
          return Number(fields[2]) === pgid && fields[0] !== 'Z';
        } catch {
          return false;
        }
      })
      .map(Number);

  it.each([
    ['SIGTERM', 'free'],
    ['SIGINT', 'free'],
    // Another program (a collector) holds the OTLP port: serve says so and serves on, and the
    // receiver's half-started parts (its decode thread) must not keep it alive after the signal.
    ['SIGTERM', 'taken'],
  ] as const)(
    'one %s ends it within a second, leaving no process of its group (OTLP port %s)',
    async (signal, otlpPort) => {
      const f = freshFolder();
      const holder = createServer();
      try {
        const ledger = Ledger.open(f.dir);
        const w = ledger.writer('r');
        w.append('run_started', { task_id: 't', goal: 'g', agent: { name: 'sim' } });
        w.close();
        ledger.close();
        await new Promise<void>((res) => holder.listen(0, '127.0.0.1', res));
        const taken = (holder.address() as AddressInfo).port;
        const port = otlpPort === 'taken' ? String(taken) : '0';
        const s = await startServe(f.dir, { detached: true, args: ['--otlp-port', port] });
        const otlp = s.otlp;
        if (otlpPort === 'taken')
          expect(otlp).toEqual({ error: `port ${taken} is in use (--otlp-port to pick another)` });
        else expect(otlp).toMatchObject({ endpoint: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/) });
        const pid = s.child.pid!;
        // Busy first: an open event stream and a call, as a page would hold them.
        void raw(s.port, {
          path: `/api/events?token=${s.token}`,
          method: 'GET',
          headers: { host: `127.0.0.1:${s.port}` },
        });
        await raw(s.port, {
          path: '/api/runs.list',
          headers: {
            host: `127.0.0.1:${s.port}`,
            'content-type': 'application/json',
            'x-proofloop-token': s.token,
          },
          body: '{}',
        });
        const t0 = performance.now();
        process.kill(pid, signal);
        const r = await s.done;
        const ms = performance.now() - t0;
        expect(ms).toBeLessThan(1000);
        expect(r.stderr).not.toMatch(/at .*\.ts:\d+/);
        await new Promise((res) => setTimeout(res, 100));
        expect(groupMembers(pid)).toEqual([]);
        expectLedgerVerifies(f.dir);
      } finally {
        holder.close();
        f.cleanup();
      }
    },
    60_000,
  );
});

describe('9. the desktop shell', () => {
  it('electron-builder.yml sets the fuses', () => {
    // The block's `  key: true|false` lines (a flat map; no YAML library is a dependency here).
    const text = readFileSync(path.join(repoRoot, 'electron-builder.yml'), 'utf8');
    const block = /^electronFuses:\n((?: {2}\w+: (?:true|false)\n)+)/m.exec(text)?.[1] ?? '';
    const fuses = Object.fromEntries(
      block
        .trim()
        .split('\n')
        .map((l) => [l.trim().split(': ')[0], l.trim().endsWith('true')]),
    );
    expect(fuses).toMatchObject({
      grantFileProtocolExtraPrivileges: false,
      runAsNode: false,
      enableNodeCliInspectArguments: false,
      onlyLoadAppFromAsar: true,
      enableCookieEncryption: true,
    });
  });

  describe('app:// serves the built renderer and nothing else', () => {
    const f = freshFolder();
    const o = freshFolder();
    beforeAll(() => {
      mkdirSync(path.join(f.dir, 'assets'));
      writeFileSync(path.join(f.dir, 'index.html'), '<!doctype html><title>p</title>');
      writeFileSync(path.join(f.dir, 'assets', 'a.js'), 'export {}');
      writeFileSync(path.join(o.dir, 'secret.txt'), SECRET);
      symlinkSync(path.join(o.dir, 'secret.txt'), path.join(f.dir, 'assets', 'leak.js'));
    });
    afterAll(() => {
      f.cleanup();
      o.cleanup();
    });

    it('answers index.html and assets with the CSP', async () => {
      const r = serveAppRequest(f.dir, 'app://proofloop/');
      expect(r.status).toBe(200);
      expect(r.headers.get('content-security-policy')).toMatch(/form-action 'none'/);
      expect(r.headers.get('content-security-policy')).not.toMatch(/unsafe-inline/);
      expect(await serveAppRequest(f.dir, 'app://proofloop/assets/a.js').text()).toBe('export {}');
    });
    it.each([
      ['app://proofloop/../../../etc/passwd', 404],
      ['app://proofloop/%2e%2e/%2e%2e/etc/passwd', 404],
      ['app://proofloop/assets/leak.js', 404],
      ['app://other/index.html', 404],
      ['app://proofloop/%E0%A4%A', 400],
    ])('%s is %d', async (url, status) => {
      const r = serveAppRequest(f.dir, url);
      expect(r.status).toBe(status);
      expect(await r.text()).not.toContain('outside the folder');
    });
  });
});
