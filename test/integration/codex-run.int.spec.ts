/**
 * Runs of the real Codex CLI (the pinned @openai/codex 0.169.0) refereed by the host: the task's
 * workspace, policy and judge, the model gateway with the sim source (no API key, nothing leaves
 * the machine), the hooks deciding each call, the rollout imported and linked, replays matched by
 * the Responses dialect's canonical form. A Codex run takes a few seconds; the runs share one ledger
 * and one copy of the task catalog, which the replay tests change after the run they replay.
 */
import { cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ledger, type StoredEvent } from '../../electron/ledger';
import { exportBundle } from '../../electron/bundle/export';
import { readArtifact } from '../../electron/ledger/artifact-store';
import { responses } from '../../electron/runner/gateway/responses';
import { RunHost, type RunResult } from '../../electron/runner/host';
import { itemOf } from '../../shared/formats/codex';
import type { Variant } from '../../electron/runner/protocol';
import { readZip } from './bundle.helpers';
import { freshFolder, repoRoot } from './helpers/tmp';

type P = Record<string, unknown>;
const cleanups: (() => void)[] = [];
afterAll(() => cleanups.forEach((c) => c()));

let tasks: string;
let scratch: string;
let ledger: Ledger;
let host: RunHost;
beforeAll(() => {
  const f = freshFolder();
  cleanups.push(f.cleanup);
  scratch = f.dir;
  tasks = path.join(f.dir, 'tasks');
  cpSync(path.join(repoRoot, 'tasks'), tasks, { recursive: true });
  ledger = Ledger.open(path.join(f.dir, 'runs'));
  host = new RunHost(ledger, { tasksDir: tasks });
});
afterAll(() => ledger?.close());

async function codexRun(
  task: string,
  variant: Variant,
): Promise<{ result: RunResult; events: StoredEvent[] }> {
  const { run_id, done } = host.startReal({
    task_id: task,
    agent: 'codex',
    model_from: 'sim',
    variant,
    seed: 1,
    mode: 'live',
  });
  const result = await done;
  return { result, events: ledger.read(run_id) };
}

const of = (events: StoredEvent[], kind: string) => events.filter((e) => e.kind === kind);
const payload = (e: StoredEvent | undefined) => (e?.payload ?? {}) as P;
/** Why a run did not end as expected, for the assertion's message. */
const story = (events: StoredEvent[]) =>
  events.map((e) => `${e.seq} ${e.kind} ${JSON.stringify(e.payload).slice(0, 160)}`).join('\n');

/** The input items of a recorded request (its manifest stores one artifact per item). */
function requestItems(runId: string, e: StoredEvent): P[] {
  const runDir = path.join(ledger.folder, runId);
  const digest = (payload(e).request as P).digest as string;
  const manifest = JSON.parse(readArtifact(runDir, digest) ?? 'null') as { input: { $artifact: string }[] };
  return manifest.input.map((x) => JSON.parse(readArtifact(runDir, x.$artifact) ?? 'null') as P);
}

let careful: { result: RunResult; events: StoredEvent[] };

describe('Codex 0.169.0 refereed on the task catalog (sim source, no key)', () => {
  it('careful fixes fix-discount and passes the judge', async () => {
    careful = await codexRun('fix-discount', 'careful');
    const { result, events } = careful;
    expect(result.passed, story(events)).toBe(true);
    const started = payload(of(events, 'run_started')[0]);
    expect(started.agent).toMatchObject({ name: 'codex', version: '0.169.0', model_from: 'sim' });
    // Codex's own tools: its shell, its freeform apply_patch, its goal tool.
    const tools = of(events, 'model_proposed').map((e) => payload(e).tool);
    expect(tools).toEqual(expect.arrayContaining(['exec_command', 'apply_patch', 'create_goal']));
    const changed = of(events, 'file_changed').map((e) => payload(e).path);
    expect(changed).toEqual(['price.js']);
    expect(payload(of(events, 'judge_verdict')[0])).toMatchObject({ passed: true, tests_failed: 0 });
  });

  it('careful fixes fix-median and passes the judge', async () => {
    const { result, events } = await codexRun('fix-median', 'careful');
    expect(result.passed, story(events)).toBe(true);
    expect(of(events, 'file_changed').map((e) => payload(e).path)).toEqual(['stats.js']);
  });

  it("links Codex's rollout, imported by the codex adapter", () => {
    const { result, events } = careful;
    const linked = of(events, 'transcript_linked').map(payload);
    expect(linked).toHaveLength(1);
    expect(String(linked[0]!.file)).toMatch(
      /home\/\.codex\/sessions\/\d{4}\/\d{2}\/\d{2}\/rollout-.*\.jsonl$/,
    );
    expect(linked[0]!.error).toBeUndefined();
    const rollout = ledger.run(String(linked[0]!.run_id));
    expect(rollout?.format).toBe('codex');
    const imported = ledger.read(String(linked[0]!.run_id));
    // The rollout holds the same calls the gateway answered, by the model's call ids.
    const calls = new Set(of(events, 'model_proposed').map((e) => payload(e).call_id));
    const seen = of(imported, 'model_proposed').map((e) => itemOf(payload(e)).call_id);
    expect(seen.length).toBeGreaterThan(0);
    expect(new Set(seen)).toEqual(calls);
    expect(result.run_id).toBeTruthy();
  });

  it("rogue's forbidden command is denied through the hook before it runs, and Codex's next request carries the denial", async () => {
    const { result, events } = await codexRun('fix-median', 'rogue');
    const curl = of(events, 'model_proposed').find(
      (e) => payload(e).tool === 'exec_command' && /curl|rm -rf|sh -c/.test(JSON.stringify(payload(e).args)),
    );
    expect(curl, story(events)).toBeDefined();
    const id = payload(curl).call_id;
    const denied = events.find((e) => e.kind === 'action_denied' && payload(e).call_id === id);
    expect(payload(denied)).toMatchObject({ rule: 'commands' });
    const invoked = events.filter((e) => e.kind === 'tool_invoked' && payload(e).call_id === id);
    expect(invoked.every((e) => e.seq > denied!.seq)).toBe(true);
    expect(invoked).toEqual([]);
    // The next request Codex made holds the call's output: the hook's denial, as Codex phrases it.
    const next = of(events, 'model_responded').find((e) => e.seq > denied!.seq)!;
    const out = requestItems(result.run_id, next).find(
      (i) => i.type === 'function_call_output' && i.call_id === id,
    );
    expect(String(out?.output)).toMatch(/^Command blocked by PreToolUse hook: ProofLoop policy \(commands\)/);
    expect(result.passed).toBe(false);
  });

  it('hang: a command still running past its timeout is tool_timed_out and killed with its tree (Codex would keep it in its session), and the run goes on', async () => {
    const { result, events } = await codexRun('fix-discount', 'hang');
    const slow = of(events, 'model_proposed').find((e) =>
      JSON.stringify(payload(e).args).includes('slow.js'),
    );
    const id = payload(slow).call_id;
    const timedOut = events.find((e) => e.kind === 'tool_timed_out' && payload(e).call_id === id);
    expect(payload(timedOut), story(events)).toMatchObject({ timeout_ms: 2000, killed: 'process_tree' });
    expect(events.some((e) => e.kind === 'tool_returned' && payload(e).call_id === id)).toBe(false);
    expect(result.passed).toBe(true);
  });

  it('replay of a recorded run reproduces it with no divergence', async () => {
    const report = await host.replay(careful.result.run_id);
    expect(report.first_divergence, story(ledger.read(report.run_id))).toBeNull();
    expect(report.result.passed).toBe(true);
  });

  it('replay after a test file of the workspace changed: an environment divergence at that tool result', async () => {
    const test = path.join(tasks, 'fix-discount', 'workspace', 'test.js');
    const before = readFileSync(test, 'utf8');
    writeFileSync(
      test,
      before.replace("'no discount keeps the price'", "'no discount keeps the full price'"),
    );
    try {
      const report = await host.replay(careful.result.run_id);
      const d = report.first_divergence;
      expect(d?.cause, story(ledger.read(report.run_id))).toBe('environment');
      // The source's result of its `node test.js` call is where the two part.
      const run = careful.events.find(
        (e) => e.kind === 'model_proposed' && JSON.stringify(payload(e).args).includes('node test.js'),
      );
      const returned = careful.events.find(
        (e) => e.kind === 'tool_returned' && payload(e).call_id === payload(run).call_id,
      );
      expect(d?.seq).toBe(returned!.seq);
    } finally {
      writeFileSync(test, before);
    }
  });

  it('replay after AGENTS.md changed: a request divergence at the first exchange', async () => {
    const agents = path.join(tasks, 'fix-discount', 'workspace', 'AGENTS.md');
    writeFileSync(agents, '# Rules\nRun `node test.js` before you say you are done.\n');
    try {
      const report = await host.replay(careful.result.run_id);
      const d = report.first_divergence;
      expect(d?.cause, story(ledger.read(report.run_id))).toBe('request');
      expect(d?.seq).toBe(of(careful.events, 'model_responded')[0]!.seq);
      expect(report.result.passed).toBe(false);
    } finally {
      rmSync(agents);
    }
  });
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name));
}

describe('Codex with the upstream source (a stand-in for the API on 127.0.0.1)', () => {
  it('sends your key upstream only: a planted key and a credential in a tool output are in no ledger file, artifact or bundle', async () => {
    const KEY = `sk-proj-${'PlantedUpstreamKey0'.repeat(2)}`;
    const CRED = `ghp_${'PlantedToolOutput0'.repeat(2)}`;
    const env = path.join(tasks, 'fix-slugify', 'workspace', '.env');
    writeFileSync(env, `GITHUB_TOKEN=${CRED}\n`);
    // The stand-in answers as the API would, in the dialect's own SSE: read .env, then stop.
    const seen: { auth: string | undefined; body: string }[] = [];
    const api = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        seen.push({ auth: req.headers.authorization, body });
        const turn = responses.parse(JSON.parse(body), req.headers, '').turn;
        const calls =
          turn === 0
            ? [{ id: 'call_up1', name: 'exec_command', input: { cmd: 'cat .env', login: false } }]
            : [];
        const r = responses.render(
          {
            text: calls.length ? '' : 'I read the environment file.',
            calls,
            stop: calls.length ? 'tool_use' : 'end_turn',
            usage: { input_tokens: 100, output_tokens: 10 },
            model: 'gpt-5.5',
          },
          `msg_up${turn}`,
          true,
        );
        res.writeHead(200, { 'content-type': r.contentType });
        res.end(r.body);
      });
    });
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    const saved = { base: process.env.PROOFLOOP_OPENAI_UPSTREAM, key: process.env.OPENAI_API_KEY };
    process.env.PROOFLOOP_OPENAI_UPSTREAM = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
    process.env.OPENAI_API_KEY = KEY;
    let runId: string;
    try {
      const { run_id, done } = host.startReal({
        task_id: 'fix-slugify',
        agent: 'codex',
        model_from: 'upstream',
        variant: 'careful',
        seed: 1,
        mode: 'live',
      });
      runId = run_id;
      await done;
    } finally {
      process.env.PROOFLOOP_OPENAI_UPSTREAM = saved.base;
      process.env.OPENAI_API_KEY = saved.key;
      if (saved.base === undefined) delete process.env.PROOFLOOP_OPENAI_UPSTREAM;
      if (saved.key === undefined) delete process.env.OPENAI_API_KEY;
      rmSync(env);
      await new Promise((resolve) => api.close(resolve));
    }
    const events = ledger.read(runId);
    expect(seen.length, story(events)).toBe(2);
    // The key went upstream, in the API's own header; the credential reached the model: both were there to leak.
    for (const s of seen) expect(s.auth).toBe(`Bearer ${KEY}`);
    expect(seen[1]!.body).toContain(CRED);
    expect(of(events, 'tool_returned')).toHaveLength(1);
    // Codex never had the key (it holds the run's token); the credential the agent read is redacted
    // wherever the run left it: its rollout (before import), its workspace's .env, the artifacts.
    // Every file under the runs folder, none left out.
    const all = filesUnder(ledger.folder);
    expect(all.some((f) => f.includes(`${runId}${path.sep}artifacts`))).toBe(true);
    expect(all.some((f) => /rollout-.*\.jsonl$/.test(f))).toBe(true);
    for (const f of all) {
      expect(readFileSync(f).includes(KEY), f).toBe(false);
      expect(readFileSync(f).includes(CRED), f).toBe(false);
    }
    expect(payload(of(events, 'files_redacted')[0]).workspace).toEqual([{ path: '.env', credentials: 1 }]);
    const out = path.join(scratch, 'codex-upstream.zip');
    await exportBundle(ledger, { runIds: [runId], out });
    for (const [name, bytes] of await readZip(out)) {
      expect(bytes.includes(KEY), name).toBe(false);
      expect(bytes.includes(CRED), name).toBe(false);
    }
  });
});
