/* eslint-disable @typescript-eslint/no-explicit-any -- the recorded API JSON is read loosely in assertions */
/**
 * Real Claude Code (the pinned CLI, node_modules/@anthropic-ai/claude-code, 2.1.328) refereed by
 * the runner: headless, no API key, against the run's gateway with the sim source (and, for the
 * upstream test, a stand-in API server on 127.0.0.1). Each run takes seconds of the CLI's own time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { appendFileSync, cpSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Ledger, type StoredEvent } from '../../electron/ledger';
import { RunHost } from '../../electron/runner/host';
import type { RealRunMeta } from '../../electron/runner/real-run';
import { exportBundle } from '../../electron/bundle';
import { anthropic, contentText } from '../../electron/runner/gateway/anthropic';
import { simSource } from '../../electron/runner/gateway/sim-source';
import { claudeCode } from '../../electron/runner/agents/claude-code';
import { Gateway } from '../../electron/runner/gateway/server';
import { loadTask } from '../../electron/runner/catalog';
import { freshFolder, repoRoot } from './helpers/tmp';

const cleanups: (() => void)[] = [];
afterAll(() => cleanups.forEach((c) => c()));
function folder(): string {
  const f = freshFolder();
  cleanups.push(f.cleanup);
  return f.dir;
}

let tasks: string;
let ledger: Ledger;
let host: RunHost;
beforeAll(() => {
  // A copy of the catalog: the divergence tests change a task's workspace between run and replay.
  tasks = path.join(folder(), 'tasks');
  cpSync(path.join(repoRoot, 'tasks'), tasks, { recursive: true });
  // The CLI's own start and a hook process per call take seconds on a loaded machine: a wall-time
  // budget of minutes, not the catalog's one for the simulated agent.
  for (const t of ['fix-slugify', 'fix-median']) {
    const f = path.join(tasks, t, 'tools.json');
    const policy = JSON.parse(readFileSync(f, 'utf8'));
    policy.budget.wall_ms = 600_000;
    writeFileSync(f, JSON.stringify(policy, null, 2));
  }
  ledger = Ledger.open(folder());
  host = new RunHost(ledger, { tasksDir: tasks });
});
afterAll(() => ledger?.close());

const meta = (
  task_id: string,
  variant: RealRunMeta['variant'],
  extra: Partial<RealRunMeta> = {},
): RealRunMeta => ({
  task_id,
  agent: 'claude-code',
  model_from: 'sim',
  variant,
  seed: 1,
  mode: 'live',
  ...extra,
});

async function run(m: RealRunMeta) {
  const { run_id, done } = host.startReal(m);
  const result = await done;
  return { run_id, result, events: ledger.read(run_id) };
}

const of = (events: StoredEvent[], kind: string) => events.filter((e) => e.kind === kind);
const p = (e: StoredEvent | undefined) => (e?.payload ?? {}) as Record<string, any>;

/** A recorded request, rebuilt from its manifest of content-addressed parts. */
function request(runId: string, digest: string): Record<string, any> {
  const art = (d: string) => readFileSync(path.join(ledger.folder, runId, 'artifacts', d), 'utf8');
  const m = JSON.parse(art(digest)) as Record<string, any>;
  for (const [k, v] of Object.entries(m)) {
    if (Array.isArray(v)) m[k] = v.map((x) => (x?.$artifact ? JSON.parse(art(x.$artifact)) : x));
    else if (v?.$artifact) m[k] = JSON.parse(art(v.$artifact));
  }
  return m;
}

describe('Claude Code, sim source', { timeout: 300_000 }, () => {
  let careful: Awaited<ReturnType<typeof run>>;

  it('careful passes the judge; the run tells one story: agent, version, config, exchanges, decisions, results', async () => {
    careful = await run(meta('fix-slugify', 'careful'));
    const { events, result } = careful;
    expect(result).toMatchObject({ status: 'completed', outcome: 'passed', passed: true });
    const started = p(events[0]);
    expect(events[0]!.kind).toBe('run_started');
    expect(started.agent).toMatchObject({ name: 'claude-code', version: '2.1.328', model_from: 'sim' });
    expect(started.config_digest).toMatch(/^[0-9a-f]{64}$/);
    expect(Object.keys(started.config)).toContain('<home>/.claude/settings.json');
    // Every call the model proposed was decided before it ran, and its result came back.
    for (const prop of of(events, 'model_proposed')) {
      const id = p(prop).call_id;
      const decided = events.findIndex((e) => e.kind === 'action_allowed' && p(e).call_id === id);
      const invoked = events.findIndex((e) => e.kind === 'tool_invoked' && p(e).call_id === id);
      const returned = events.findIndex((e) => e.kind === 'tool_returned' && p(e).call_id === id);
      expect(decided, `${id} decided`).toBeGreaterThan(events.indexOf(prop));
      expect(invoked).toBeGreaterThan(decided);
      expect(returned).toBeGreaterThan(invoked);
    }
    // The subagent's conversation is its own lane; its Read passed the hook with the subagent's id.
    const lanes = new Set(of(events, 'model_responded').map((e) => p(e).lane));
    expect([...lanes].some((l) => String(l).startsWith('sub:'))).toBe(true);
    expect(of(events, 'action_allowed').some((e) => p(e).agent_id)).toBe(true);
    const change = of(events, 'file_changed')[0];
    expect(p(change)).toMatchObject({ path: 'slug.js' });
    expect(p(change).patch).toContain("+  .replace(/\\s+/g, '-');".trim().slice(1));
    expect(events.at(-2)!.kind).toBe('judge_verdict');
    expect(events.at(-1)!.kind).toBe('run_completed');
  });

  it("the agent's transcript, and its subagent's, are imported and linked", () => {
    const links = of(careful.events, 'transcript_linked');
    expect(links.length).toBe(2);
    const [main, sub] = links.map(p);
    expect(main!.subagent).toBeNull();
    expect(sub!.subagent).toMatch(/^[0-9a-f]+$/);
    for (const l of [main!, sub!]) {
      expect(l.events).toBeGreaterThan(0);
      const imported = ledger.read(l.run_id);
      expect(imported.length).toBe(l.events);
    }
    // The imported main session holds the Agent call that started the subagent.
    const mainEvents = ledger.read(main!.run_id);
    expect(
      mainEvents.some((e) => e.kind === 'model_proposed' && JSON.stringify(e.payload).includes('"Agent"')),
    ).toBe(true);
    expect(sub!.run_id.startsWith(`${main!.run_id}:agent-`)).toBe(true);
  });

  it('replay of the recorded run reproduces with no divergence', async () => {
    const r = await host.replay(careful.run_id);
    expect(r.first_divergence).toBeNull();
    expect(r.ok).toBe(true);
    expect(r.result).toMatchObject({ outcome: 'passed' });
    const replayed = ledger.read(r.run_id);
    expect(p(replayed[0]).agent.model_from).toBe(`replay:${careful.run_id}`);
    expect(of(replayed, 'model_responded').length).toBe(of(careful.events, 'model_responded').length);
  });

  it('replay after a test file of the workspace changed: first divergence is environment, at the test run', async () => {
    const testFile = path.join(tasks, 'fix-slugify', 'workspace', 'test.js');
    const before = readFileSync(testFile, 'utf8');
    appendFileSync(testFile, "\nconsole.log('# one more line of output');\n");
    try {
      const r = await host.replay(careful.run_id);
      expect(r.ok).toBe(false);
      expect(r.first_divergence?.cause).toBe('environment');
      // The source's result of the Bash call that ran the tests.
      const bash = of(careful.events, 'model_proposed').find((e) => p(e).tool === 'Bash')!;
      const result = careful.events.find(
        (e) => e.kind === 'tool_returned' && p(e).call_id === p(bash).call_id,
      )!;
      expect(r.first_divergence?.seq).toBe(result.seq);
      const replayed = ledger.read(r.run_id);
      expect(replayed.at(-1)).toMatchObject({
        kind: 'run_failed',
        payload: { error_type: 'replay_diverged' },
      });
    } finally {
      writeFileSync(testFile, before);
    }
  });

  it('replay after the instructions file (CLAUDE.md) changed: a request divergence at the first exchange', async () => {
    const md = path.join(tasks, 'fix-slugify', 'workspace', 'CLAUDE.md');
    writeFileSync(md, 'Always explain each change in one sentence.\n');
    try {
      const r = await host.replay(careful.run_id);
      expect(r.first_divergence?.cause).toBe('request');
      const first = of(careful.events, 'model_responded')[0]!;
      expect(r.first_divergence?.seq).toBe(first.seq);
      const replayed = ledger.read(r.run_id);
      // The new instructions configure the agent: run_started's digest says so.
      expect(p(replayed[0]).config_digest).not.toBe(p(careful.events[0]).config_digest);
      const div = of(replayed, 'replay_diverged')[0]!;
      expect(p(div).part).toMatch(/^messages\[/);
      const asked = request(r.run_id, p(div).request.digest);
      expect(JSON.stringify(asked.messages)).toContain('Always explain each change');
    } finally {
      rmSync(md);
    }
  });

  it("rogue: the forbidden command is denied through the hook before it runs, and the agent's next request carries the denial", async () => {
    const rogue = await run(meta('fix-slugify', 'rogue'));
    const { events } = rogue;
    const bash = of(events, 'model_proposed').find((e) => p(e).tool === 'Bash')!;
    const id = p(bash).call_id;
    const denied = events.find((e) => e.kind === 'action_denied' && p(e).call_id === id)!;
    expect(p(denied)).toMatchObject({ rule: 'commands', tool: 'Bash' });
    expect(events.some((e) => e.kind === 'tool_invoked' && p(e).call_id === id)).toBe(false);
    // The next main-lane request: the tool result of that call is the policy's denial.
    const next = of(events, 'model_responded').find((e) => p(e).lane === 'main' && p(e).index === 1)!;
    expect(next.seq).toBeGreaterThan(denied.seq);
    const body = request(rogue.run_id, p(next).request.digest);
    const last = body.messages.at(-1);
    const result = last.content.find((b: any) => b.type === 'tool_result' && b.tool_use_id === id);
    expect(result.is_error).toBe(true);
    expect(JSON.stringify(result.content)).toContain('ProofLoop policy (commands)');
    // The write outside the workspace was denied too; the judge still runs on the untouched workspace.
    expect(of(events, 'action_denied').map((e) => p(e).rule)).toEqual(['commands', 'workspace']);
    expect(of(events, 'file_changed')).toHaveLength(0);
    expect(rogue.result).toMatchObject({ status: 'completed', outcome: 'failed' });
  });

  it('careful passes a second catalog task', async () => {
    const r = await run(meta('fix-median', 'careful'));
    expect(r.result).toMatchObject({ outcome: 'passed', passed: true });
    expect(of(r.events, 'file_changed').map((e) => p(e).path)).toEqual(['stats.js']);
  });
});

describe('Claude Code, upstream source against a stand-in API', { timeout: 300_000 }, () => {
  const PLANTED_KEY = 'sk-ant-api03-PLANTEDplantedPLANTED0123456789abcdefABCDEF-xyzXYZ_AA';
  const CREDENTIALS = ['AKIAPROOFLOOPTEST001', 'ghp_ProofLoopFakeToken0123456789abcdefgh'];
  let server: http.Server;
  const seenKeys: string[] = [];
  const saved = { key: process.env.ANTHROPIC_API_KEY, base: process.env.PROOFLOOP_ANTHROPIC_UPSTREAM };

  beforeAll(async () => {
    const loaded = loadTask(tasks, 'fix-slugify');
    // The stand-in answers as the leaky variant would (each message its own id: the CLI merges
    // answers that share one): it reads .env first, then fixes the task.
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seenKeys.push(String(req.headers['x-api-key']));
        if (req.headers['x-api-key'] !== PLANTED_KEY) {
          res.writeHead(401).end(anthropic.error('authentication_error', 'bad key'));
          return;
        }
        const raw = Buffer.concat(chunks);
        const body = JSON.parse(raw.toString('utf8'));
        const ws = /Primary working directory: (\S+)/.exec(contentText(body.messages[0]?.content))?.[1] ?? '';
        const src = simSource({
          variant: 'leaky',
          seed: 1,
          taskId: loaded.task.id,
          goal: loaded.task.goal,
          judgeCommand: loaded.task.judge.command,
          hints: loaded.task.sim ?? null,
          workspace: ws,
          tools: claudeCode.sim,
        });
        const parsed = anthropic.parse(body, req.headers, loaded.task.goal);
        void src
          .answer({
            parsed,
            body,
            rawBody: raw,
            canonical: { head: null, messages: [] },
            index: 0,
            headers: req.headers,
            path: req.url ?? '/',
          })
          .then((a) => {
            if (a.type !== 'answer') throw new Error('stand-in: no answer');
            const r = anthropic.render(a.answer, `msg_standin${seenKeys.length}`, parsed.stream);
            res.writeHead(200, { 'content-type': r.contentType }).end(r.body);
          });
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    process.env.ANTHROPIC_API_KEY = PLANTED_KEY;
    process.env.PROOFLOOP_ANTHROPIC_UPSTREAM = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server?.close();
    for (const [k, v] of [
      ['ANTHROPIC_API_KEY', saved.key],
      ['PROOFLOOP_ANTHROPIC_UPSTREAM', saved.base],
    ] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });

  it('the planted key and the credentials in a tool output are in no ledger file, artifact or bundle', async () => {
    const r = await run(meta('fix-slugify', 'careful', { model_from: 'upstream' }));
    if (process.env.PL_DEBUG_UPSTREAM)
      writeFileSync(
        process.env.PL_DEBUG_UPSTREAM,
        r.events.map((e) => `${e.seq} ${e.kind} ${JSON.stringify(e.payload).slice(0, 300)}`).join('\n'),
      );
    expect(r.result, JSON.stringify(r.events.slice(-3).map((e) => [e.kind, e.payload]))).toMatchObject({
      outcome: 'passed',
    });
    // The stand-in got the user's key; the agent held only the run's token.
    expect(seenKeys.length).toBeGreaterThan(3);
    expect(new Set(seenKeys)).toEqual(new Set([PLANTED_KEY]));
    const env = of(r.events, 'tool_returned').find((e) => String(p(e).excerpt).includes('REGION'))!;
    expect(p(env).artifact.redacted).toBe(true);
    const out = path.join(folder(), 'bundle.zip');
    await exportBundle(ledger, {
      runIds: [r.run_id, ...of(r.events, 'transcript_linked').map((e) => p(e).run_id)],
      out,
    });
    // Every file under the runs folder: the ledger (and its WAL), mirrors, artifacts, each run's
    // workspace (its .env redacted in place after the judge) and the agent's home (only its
    // transcripts kept, redacted before import); and the bundle.
    const files: string[] = [out];
    const walk = (d: string) => {
      for (const n of readdirSync(d)) {
        const f = path.join(d, n);
        if (statSync(f).isDirectory()) walk(f);
        else files.push(f);
      }
    };
    walk(ledger.folder);
    expect(files.some((f) => f.includes(`${r.run_id}/workspace/.env`))).toBe(true);
    expect(files.some((f) => f.includes(`${r.run_id}/home/.claude/projects/`))).toBe(true);
    expect(files.some((f) => f.endsWith('ledger.db'))).toBe(true);
    expect(files.filter((f) => f.includes(`${r.run_id}/artifacts/`)).length).toBeGreaterThan(10);
    for (const f of files) {
      const bytes = readFileSync(f);
      for (const secret of [PLANTED_KEY, ...CREDENTIALS]) {
        expect(bytes.includes(secret), `${secret.slice(0, 8)}… in ${path.relative(ledger.folder, f)}`).toBe(
          false,
        );
      }
    }
  });
});

describe('the gateway', () => {
  it("listens on 127.0.0.1 only and answers 401 without the run's token, on the model and the hook routes", async () => {
    const calls: string[] = [];
    const gw = new Gateway({
      dialect: anthropic,
      source: { kind: 'sim', answer: () => Promise.resolve({ type: 'none', reason: 'test' }) },
      token: 'run-token-123',
      prompt: 'goal',
      workspace: '/w',
      home: '/h',
      host: {
        admit: () => null,
        record: () => calls.push('record'),
        noAnswer: () => calls.push('noAnswer'),
        hook: () => Promise.resolve({ ok: true }),
        badRequest: () => calls.push('bad'),
      },
    });
    const url = await gw.listen();
    try {
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const post = (p: string, headers: Record<string, string>) =>
        fetch(url + p, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: '{"messages":[]}',
        });
      expect((await post('/v1/messages', {})).status).toBe(401);
      expect((await post('/v1/messages', { 'x-api-key': 'run-token-12' })).status).toBe(401);
      expect((await post('/proofloop/hook', { 'x-proofloop-token': 'nope' })).status).toBe(401);
      expect(calls).toEqual([]);
      expect((await post('/proofloop/hook', { 'x-proofloop-token': 'run-token-123' })).status).toBe(200);
      // With the token: the source has no answer, which is an event and a 400, never a made-up answer.
      const r = await post('/v1/messages', { authorization: 'Bearer run-token-123' });
      expect(r.status).toBe(400);
      expect(calls).toEqual(['noAnswer']);
    } finally {
      await gw.close();
    }
  });
});
