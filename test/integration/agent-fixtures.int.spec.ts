import { cpSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { homeForFile } from './helpers/tmp';
import { readZip } from './bundle.helpers';
import { Ledger, type StoredEvent } from '../../electron/ledger';
import { ingestFolder, verifyFile } from '../../electron/ingest';
import { stateAt } from '../../electron/state';
import { exportBundle } from '../../electron/bundle/export';
import { ProofloopService } from '../../electron/service/service';
import { startOtlpReceiver, type OtlpReceiver } from '../../electron/otlp';
import { interpret } from '../../shared/formats';

/**
 * Issue 28 on what Claude Code 2.1.328 and Codex 0.169.0 wrote here (test/fixtures/otlp/agents/
 * manifest.json, made by `npm run fixtures:agents`): through the real importer and the real OTLP
 * receiver, each session's lines are all accounted for, every call has its result and its decision,
 * the transcript's decisions and the telemetry's agree, one session is one run, the untouched files
 * verify, and the planted credential is in neither the ledger nor a bundle.
 */
const FIX = path.join(__dirname, '../fixtures');
const tmpOf = homeForFile('pl-agent-fixtures-');

interface Session {
  session: string;
  subagents?: string[];
  otlp: string[];
}
const manifest = JSON.parse(readFileSync(path.join(FIX, 'otlp/agents/manifest.json'), 'utf8')) as {
  planted: string;
  sessions: Record<string, Session>;
};
const SESSIONS = Object.entries(manifest.sessions);
const harnessOf = (name: string) => (name.startsWith('claude') ? 'claude_code' : 'codex');
const idOf = (e: StoredEvent) => e.source?.ids?.tool_use_id ?? e.source?.ids?.call_id ?? '';
const jsonl = (s: Session) => [s.session, ...(s.subagents ?? []).filter((f) => f.endsWith('.jsonl'))];

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name));
}

/** A decision as both sources must agree on it. */
interface Said {
  allowed: boolean;
  by: unknown;
  rule: unknown;
}
const said = (kind: string, p: Record<string, unknown>): Said => ({
  allowed: kind === 'action_allowed',
  by: p.decided_by,
  rule: p.rule,
});

describe('sessions the pinned CLIs wrote, through the importer', () => {
  let folder: string;
  let l: Ledger;
  beforeAll(async () => {
    folder = path.join(tmpOf(), 'agents');
    for (const [, s] of SESSIONS)
      for (const f of [s.session, ...(s.subagents ?? [])])
        cpSync(path.join(FIX, f), path.join(folder, f), { recursive: true });
    l = Ledger.open(folder);
    await ingestFolder(l);
  });
  afterAll(() => l?.close());

  const runOf = (file: string) => l.runs().find((r) => r.origin === file)!;
  const v1 = (e: StoredEvent, fmt: string) =>
    interpret(fmt, e.kind, e.payload, { seq: e.seq, run_id: e.run_id, source: e.source ?? null })?.payload ??
    e.payload;

  it.each(SESSIONS)(
    '%s: every line is an event of that line or a finding, and none is invalid',
    (_name, s) => {
      for (const file of jsonl(s)) {
        const run = runOf(file);
        expect(run, file).toBeDefined();
        const events = l.read(run.run_id);
        const lines = readFileSync(path.join(folder, file), 'utf8')
          .split('\n')
          .filter((x) => x !== '');
        const findings = l.findings().filter((f) => f.file === file);
        for (let n = 1; n <= lines.length; n++)
          expect(
            events.some((e) => e.source?.line === n) || findings.some((f) => f.line === n),
            `${file}:${n}`,
          ).toBe(true);
        // Nothing is flagged: the CLIs wrote valid files.
        expect(findings, file).toEqual([]);
      }
    },
  );

  it.each(SESSIONS)('%s: verify of the untouched files is ok', async (_name, s) => {
    for (const file of jsonl(s)) {
      const reports = await verifyFile(path.join(folder, file));
      expect(reports.length, file).toBeGreaterThan(0);
      for (const r of reports) expect(r.findings, file).toEqual([]);
      expect(reports.every((r) => r.ok)).toBe(true);
    }
  });

  it.each(SESSIONS)('%s: every call has its result and its decision in the state', (name, s) => {
    let calls = 0;
    for (const file of jsonl(s)) {
      const run = runOf(file);
      const { state } = stateAt(l, run.run_id, run.head_seq);
      expect(state.notes.items, file).toEqual([]);
      for (const c of state.calls.items) {
        calls += 1;
        expect(c.result, `${file}: ${c.call_id} has no result`).not.toBeNull();
        // Codex writes no decision for a call that needs none (create_goal) nor, under
        // approval_policy never, an allow: those come from its telemetry (below).
        if (harnessOf(name) === 'codex' && !/rm -rf/.test(JSON.stringify(c.args))) continue;
        expect(c.decision, `${file}: ${c.call_id} has no decision`).not.toBeNull();
      }
      // The last event's time is the last time the file has, whatever lines without one end it.
      expect(run.last_at, file).toMatch(/^\d{4}-/);
      expect(state.last_at, file).toBe(run.last_at);
    }
    expect(calls).toBeGreaterThanOrEqual(5);
    // The denial: Claude Code's PreToolUse hook, Codex's exec policy (its config).
    const denials = jsonl(s).flatMap((f) => {
      const run = runOf(f);
      return stateAt(l, run.run_id, run.head_seq).state.denials.items;
    });
    expect(denials.map((d) => [d.by, d.rule])).toEqual([
      harnessOf(name) === 'codex' ? ['config', 'codex.config'] : ['hook', 'claude_code.hook'],
    ]);
  });

  it('Claude Code: the background subagent ends at its notification, tied to its Agent call', () => {
    for (const [name, s] of SESSIONS.filter(([n]) => n.startsWith('claude'))) {
      const run = runOf(s.session);
      const events = l.read(run.run_id);
      const launched = events.find((e) => e.kind === 'tool_returned' && idOf(e) === 'toolu_fx_agent')!;
      expect(v1(launched, run.format), name).toMatchObject({ async_launched: true });
      const ended = events.filter((e) => e.kind === 'subagent_ended');
      expect(ended.length, name).toBe(1);
      expect(idOf(ended[0]!)).toBe('toolu_fx_agent');
      expect(ended[0]!.seq).toBeGreaterThan(launched.seq);
      const agentId = String(v1(launched, run.format).agent_id);
      expect(v1(ended[0]!, run.format)).toMatchObject({
        call_id: 'toolu_fx_agent',
        agent_id: agentId,
        status: 'completed',
      });
      // And the subagent's own file is the run the parent names.
      expect(s.subagents!.some((f) => f.endsWith(`agent-${agentId}.jsonl`))).toBe(true);
      // The notification is no prompt.
      expect(events.filter((e) => e.kind === 'user_prompted').length, name).toBe(1);
    }
  });

  it('no credential in the ledger, nor in a bundle of every run', async () => {
    const secret = manifest.planted;
    // The copies do carry it, so finding none later means something.
    expect(filesUnder(folder).some((f) => readFileSync(f).includes(secret))).toBe(true);
    for (const f of filesUnder(path.join(process.env.PROOFLOOP_HOME!)))
      expect(readFileSync(f).includes(secret), f).toBe(false);
    const out = path.join(tmpOf(), 'agents.zip');
    await exportBundle(l, { runIds: l.runs().map((r) => r.run_id), out });
    const entries = await readZip(out);
    expect(entries.size).toBeGreaterThan(3);
    for (const [name, bytes] of entries) expect(bytes.includes(secret), name).toBe(false);
  });

  describe('their telemetry, through the receiver', () => {
    let svc: ProofloopService;
    let rx: OtlpReceiver;
    beforeAll(async () => {
      svc = new ProofloopService();
      mkdirSync(path.join(tmpOf(), 'otlp'));
      await svc.openFolder(path.join(tmpOf(), 'otlp'));
      rx = await startOtlpReceiver({ ledger: () => svc.ctx.ledger(), port: 0 });
      for (const [, s] of SESSIONS)
        for (const f of s.otlp) {
          const res = await fetch(`${rx.endpoint}/v1/${/-(logs|traces|metrics)\./.exec(f)![1]}`, {
            method: 'POST',
            headers: {
              'content-type': /\.json/.test(f) ? 'application/json' : 'application/x-protobuf',
              ...(f.endsWith('.gz') ? { 'content-encoding': 'gzip' } : {}),
            },
            body: readFileSync(path.join(FIX, f)),
          });
          expect(res.status, f).toBe(200);
        }
    });
    afterAll(async () => {
      await rx?.close();
      svc?.closeFolder();
    });

    it.each(SESSIONS)('%s: one run, whose decisions are the transcript’s', (name, s) => {
      const ol = svc.ctx.ledger();
      const sessionId = name.startsWith('claude')
        ? path.basename(s.session, '.jsonl')
        : /([0-9a-f-]{36})\.jsonl$/.exec(s.session)![1]!;
      const runs = ol.runs().filter((r) => r.format === 'otlp' && r.run_id.includes(sessionId));
      expect(runs.map((r) => r.run_id)).toEqual([`otlp-${sessionId}`]);
      // Nothing of this session's telemetry went elsewhere: every other run is another session's,
      // but for Codex's metrics, which name no thread: its service's metrics run (below).
      const others = ol.runs().filter((r) => !SESSIONS.some(([, t]) => r.run_id.includes(idIn(t))));
      expect(others.map((r) => r.run_id)).toEqual(['otlp-metrics-codex_exec']);

      const fromTelemetry = new Map<string, Said>();
      for (const e of ol.read(runs[0]!.run_id))
        if (e.kind === 'action_allowed' || e.kind === 'action_denied')
          fromTelemetry.set(String(e.payload.call_id), said(e.kind, e.payload));
      const fromTranscript = new Map<string, Said>();
      for (const file of jsonl(s)) {
        const run = runOf(file);
        for (const e of l.read(run.run_id))
          if (e.kind === 'action_allowed' || e.kind === 'action_denied')
            fromTranscript.set(idOf(e), said(e.kind, v1(e, run.format)));
      }
      expect(fromTelemetry.size).toBeGreaterThanOrEqual(3);
      // Where both speak of a call they say the same thing.
      let both = 0;
      for (const [id, t] of fromTelemetry) {
        const x = fromTranscript.get(id);
        if (!x) continue;
        both += 1;
        expect(x, id).toEqual(t);
      }
      if (harnessOf(name) === 'claude_code') {
        // Claude Code's transcript names a decision on every call, as its telemetry does.
        expect(both).toBe(fromTelemetry.size);
        expect([...fromTranscript.keys()].sort()).toEqual([...fromTelemetry.keys()].sort());
      } else {
        // Codex's telemetry has the allows (tool_decision) and, read from its tool_result's output
        // by the rollout's own rule, the exec policy's refusal; its rollout has the refusal only.
        expect([...fromTranscript.keys()]).toEqual(['call_fx_rm']);
        expect(both).toBe(1);
        expect([...fromTelemetry.keys()].sort()).toEqual([
          'call_fx_echo',
          'call_fx_env',
          'call_fx_missing',
          'call_fx_rm',
        ]);
      }
      // Every tool_result of the telemetry names a call of the transcript.
      const calls = new Set(
        jsonl(s).flatMap((f) =>
          l
            .read(runOf(f).run_id)
            .filter((e) => e.kind === 'model_proposed')
            .map(idOf),
        ),
      );
      for (const e of ol.read(runs[0]!.run_id))
        if (e.kind === 'tool_returned' && e.payload.harness)
          expect(calls.has(String(e.payload.call_id))).toBe(true);
    });

    it.each(SESSIONS)(
      '%s: the telemetry’s run knows every call, with its result and its decision',
      (name) => {
        const ol = svc.ctx.ledger();
        const s = manifest.sessions[name]!;
        const run = ol.runs().find((r) => r.run_id === `otlp-${idIn(s)}`)!;
        const { state } = stateAt(ol, run.run_id, run.head_seq);
        const calls = state.calls.items.map((c) => [
          c.call_id,
          c.result?.status ?? null,
          c.decision?.rule ?? null,
        ]);
        const notes = state.notes.items.filter((n) => n.code !== 'before_start').map((n) => n.message);
        if (harnessOf(name) === 'claude_code') {
          // The failed call's result: its tool span (no error status) and its log (success false)
          // disagree, and the later to arrive stands (the order differs from one run to the next).
          expect(calls[2]![1]).toMatch(/^(ok|error)$/);
          calls[2]![1] = 'ok or error';
          expect(calls).toEqual([
            ['toolu_fx_echo', 'ok', 'claude_code.config'],
            ['toolu_fx_rm', 'ok', 'claude_code.hook'],
            ['toolu_fx_missing', 'ok or error', 'claude_code.config'],
            ['toolu_fx_env', 'ok', 'claude_code.config'],
            ['toolu_fx_agent', 'ok', 'claude_code.config'],
            ['toolu_fx_sub_ls', 'ok', 'claude_code.user_permanent'],
          ]);
          // What Claude Code's spans say against its logs, left as findings: a tool span (an
          // execute_tool, read as an invocation) for the call its hook denied, and the failed call's
          // tool span without an error status.
          expect(notes).toEqual([
            'call toolu_fx_rm invoked but denied',
            expect.stringMatching(/^call toolu_fx_missing already ended at seq \d+$/),
          ]);
        } else {
          // Codex says nothing of create_goal's decision (it needs none); the refused rm -rf is
          // its exec policy's (config) decision, read from the result's output.
          expect(calls).toEqual([
            ['call_fx_goal', 'ok', null],
            ['call_fx_echo', 'ok', 'codex.config'],
            ['call_fx_rm', 'error', 'codex.config'],
            ['call_fx_missing', 'ok', 'codex.config'],
            ['call_fx_env', 'ok', 'codex.config'],
          ]);
          expect(notes).toEqual([]);
        }
      },
    );

    it('every metric data point is an event: Claude Code’s in its session’s run, Codex’s in its service’s', () => {
      const ol = svc.ctx.ledger();
      type Pt = { attributes?: { key: string }[] };
      type Body = {
        resourceMetrics: { scopeMetrics: { metrics: Record<string, { dataPoints?: Pt[] }>[] }[] }[];
      };
      /** Points of a JSON body, counted here from the file (a metric with none counts as one). */
      const pointsOf = (f: string): number => {
        const raw = readFileSync(path.join(FIX, f));
        const body = JSON.parse((f.endsWith('.gz') ? gunzipSync(raw) : raw).toString('utf8')) as Body;
        let n = 0;
        for (const rm of body.resourceMetrics)
          for (const sm of rm.scopeMetrics)
            for (const m of sm.metrics) {
              const data = Object.values(m).find((v) => typeof v === 'object' && v !== null);
              n += Math.max(1, data?.dataPoints?.length ?? 0);
            }
        return n;
      };
      const metricsIn = (run: string) => ol.read(run).filter((e) => e.kind === 'otel_metric');
      const claude = manifest.sessions['claude-code-json']!;
      const claudeRun = `otlp-${idIn(claude)}`;
      const sent = claude.otlp.filter((f) => f.includes('-metrics.')).reduce((n, f) => n + pointsOf(f), 0);
      expect(sent).toBeGreaterThan(5);
      expect(metricsIn(claudeRun)).toHaveLength(sent);
      const tokens = metricsIn(claudeRun).filter((e) => e.payload.metric === 'claude_code.token.usage');
      expect(tokens.length).toBeGreaterThan(0);
      for (const e of tokens) {
        expect(e.payload).toMatchObject({
          unit: 'tokens',
          type: 'sum',
          attributes: { 'session.id': idIn(claude) },
        });
        expect(typeof e.payload.value).toBe('number');
        expect(e.at).toMatch(/^2026-/);
      }
      // Codex's metrics, both sessions' bodies, in one run of its service: none is lost.
      const codexSent = ['codex-json', 'codex-proto'].flatMap((n) =>
        manifest.sessions[n]!.otlp.filter((f) => f.includes('-metrics.')),
      );
      const codexRun = metricsIn('otlp-metrics-codex_exec');
      expect(codexRun.length).toBeGreaterThan(pointsOf(codexSent.find((f) => f.includes('.json'))!));
      const hist = codexRun.find((e) => e.payload.type === 'histogram')!;
      expect(hist.payload.value).toMatchObject({
        count: expect.any(Number),
        bucket_counts: expect.any(Array),
      });
      // A metric names no tool call: the state of the session's run is what it was.
      expect(stateAt(ol, claudeRun, ol.run(claudeRun)!.head_seq).state.unknown.kinds.otel_metric).toBe(sent);
    });

    it('no credential in the receiver’s ledger', () => {
      const dir = path.join(tmpOf(), 'otlp', '.proofloop');
      for (const f of filesUnder(dir)) expect(readFileSync(f).includes(manifest.planted), f).toBe(false);
    });
  });
});

function idIn(s: Session): string {
  return s.session.endsWith('.jsonl') && s.session.includes('/projects/')
    ? path.basename(s.session, '.jsonl')
    : /([0-9a-f-]{36})\.jsonl$/.exec(s.session)![1]!;
}

/**
 * Issue 28: a folder holding a session's transcript and the same session's telemetry (received
 * into that folder's ledger) reads them together. Where both decide a call they agree, and the
 * call's decision lists both sources; an edited copy of the telemetry that disagrees is a
 * decision_conflict naming both.
 */
describe('a session’s transcript and its telemetry in one folder', () => {
  type Src = { run_id: string; format: string; allowed: boolean; rule: string; by: string | null };
  const post = async (endpoint: string, f: string, body: Buffer | string) => {
    const res = await fetch(`${endpoint}/v1/${/-(logs|traces|metrics)\./.exec(f)![1]}`, {
      method: 'POST',
      headers: {
        'content-type': /\.json/.test(f) ? 'application/json' : 'application/x-protobuf',
        ...(f.endsWith('.gz') ? { 'content-encoding': 'gzip' } : {}),
      },
      body,
    });
    expect(res.status, f).toBe(200);
  };
  /** A folder with the sessions' files, opened by a service, and its receiver fed `bodies`. */
  async function folderWith(
    name: string,
    sessions: [string, Session][],
    body: (f: string) => Buffer | string = (f) => readFileSync(path.join(FIX, f)),
  ) {
    const folder = path.join(tmpOf(), name);
    for (const [, s] of sessions)
      for (const f of [s.session, ...(s.subagents ?? [])])
        cpSync(path.join(FIX, f), path.join(folder, f), { recursive: true });
    const svc = new ProofloopService();
    await svc.openFolder(folder);
    const rx = await startOtlpReceiver({ ledger: () => svc.ctx.ledger(), port: 0 });
    for (const [, s] of sessions) for (const f of s.otlp) await post(rx.endpoint, f, body(f));
    await rx.close();
    return svc;
  }
  const stateOf = async (svc: ProofloopService, run_id: string) => {
    const head = svc.ctx.ledger().run(run_id)!.head_seq;
    return (await svc.invoke('state.at', { run_id, seq: head })).state;
  };

  let svc: ProofloopService;
  beforeAll(async () => {
    svc = await folderWith('both', SESSIONS);
  });
  afterAll(() => svc?.closeFolder());

  it.each(SESSIONS)(
    '%s: each call that both decide, they decide alike, and its decision lists both sources',
    async (name, s) => {
      const l = svc.ctx.ledger();
      const telemetry = `otlp-${idIn(s)}`;
      expect(l.run(telemetry)?.format).toBe('otlp');
      const transcripts = jsonl(s).map((f) => l.runs().find((r) => r.origin === f)!.run_id);
      const both: string[] = [];
      for (const run of [...transcripts, telemetry]) {
        const state = await stateOf(svc, run);
        expect(
          state.notes.items.filter((n) => n.code === 'decision_conflict'),
          run,
        ).toEqual([]);
        const findings = await svc.invoke('run.findings', { run_id: run });
        expect(
          findings.filter((f) => f.code === 'decision_conflict'),
          run,
        ).toEqual([]);
        for (const c of state.calls.items) {
          const sources = (c.decision_sources ?? []) as Src[];
          if (sources.length === 0) continue;
          // Read from this run or another of the session, never from elsewhere.
          for (const x of sources) expect([...transcripts, telemetry]).toContain(x.run_id);
          // They agree: one verdict, one decider, one rule (the harness's, whatever source).
          expect(new Set(sources.map((x) => `${x.allowed}|${x.by}|${x.rule}`)).size, c.call_id).toBe(1);
          if (
            run !== telemetry &&
            sources.some((x) => x.run_id === run) &&
            sources.some((x) => x.run_id === telemetry)
          )
            both.push(c.call_id);
          // The call's own decision, where this run has one, is one of them.
          if (c.decision)
            expect(sources.some((x) => x.run_id === run && x.rule === c.decision!.rule)).toBe(true);
        }
      }
      if (name.startsWith('claude'))
        // Every call of the transcript (and its subagent's) is decided by both.
        expect(both.sort()).toEqual([
          'toolu_fx_agent',
          'toolu_fx_echo',
          'toolu_fx_env',
          'toolu_fx_missing',
          'toolu_fx_rm',
          'toolu_fx_sub_ls',
        ]);
      else expect(both).toEqual(['call_fx_rm']);
    },
  );

  it('Codex: a call its rollout names no decision for shows its telemetry’s (approved by Config)', async () => {
    const [, s] = SESSIONS.find(([n]) => n === 'codex-json')!;
    const l = svc.ctx.ledger();
    const run = l.runs().find((r) => r.origin === s.session)!.run_id;
    const echo = (await stateOf(svc, run)).calls.items.find((c) => c.call_id === 'call_fx_echo')!;
    expect(echo.decision).toBeNull();
    expect((echo.decision_sources as Src[]).map((x) => [x.run_id, x.allowed, x.by, x.rule])).toEqual([
      [`otlp-${idIn(s)}`, true, 'config', 'codex.config'],
    ]);
  });

  it('an edited copy of the telemetry (the hook’s denial a config allow, a config allow the user’s) is a decision_conflict per call naming both sources', async () => {
    const [, s] = SESSIONS.find(([n]) => n === 'claude-code-json')!;
    const edited = (f: string): Buffer | string => {
      const text = readFileSync(path.join(FIX, f), 'utf8');
      if (!f.endsWith('04-logs.json')) return readFileSync(path.join(FIX, f));
      const doc = JSON.parse(text) as {
        resourceLogs: {
          scopeLogs: { logRecords: { attributes: { key: string; value: { stringValue?: string } }[] }[] }[];
        }[];
      };
      let n = 0;
      for (const rl of doc.resourceLogs)
        for (const sl of rl.scopeLogs)
          for (const r of sl.logRecords) {
            const a = new Map(r.attributes.map((x) => [x.key, x.value]));
            if (!a.has('decision')) continue;
            const call = a.get('tool_use_id')?.stringValue;
            if (call === 'toolu_fx_rm') {
              a.get('decision')!.stringValue = 'accept';
              a.get('source')!.stringValue = 'config';
              n += 1;
            } else if (call === 'toolu_fx_echo') {
              // Allowed either way, but by the user here: a disagreement on who decided.
              a.get('source')!.stringValue = 'user_temporary';
              n += 1;
            }
          }
      expect(n).toBe(2);
      return JSON.stringify(doc);
    };
    const other = await folderWith('disagree', [['claude-code-json', s]], edited);
    try {
      const l = other.ctx.ledger();
      const transcript = l.runs().find((r) => r.origin === s.session)!.run_id;
      const telemetry = `otlp-${idIn(s)}`;
      const findings = (await other.invoke('run.findings', { run_id: transcript })).filter(
        (f) => f.code === 'decision_conflict',
      );
      expect(findings).toHaveLength(2);
      const denial = l.read(transcript).find((e) => e.kind === 'action_denied' && idOf(e) === 'toolu_fx_rm')!;
      const rmFinding = findings.find((f) => f.message.startsWith('call toolu_fx_rm '))!;
      expect(rmFinding).toMatchObject({ run_id: transcript, seq: denial.seq, file: null, line: null });
      expect(rmFinding.message).toMatch(
        new RegExp(
          `^call toolu_fx_rm denied by claude_code\\.hook \\(hook\\) in ${transcript} \\(claude_code transcript\\) at seq ${denial.seq}, but allowed by claude_code\\.config \\(config\\) in ${telemetry} \\(telemetry\\) at seq \\d+$`,
        ),
      );
      // Both allow the echo, but name different deciders: that is a disagreement too.
      const echoFinding = findings.find((f) => f.message.startsWith('call toolu_fx_echo '))!;
      expect(echoFinding.message).toMatch(
        /^call toolu_fx_echo allowed by claude_code\.config \(config\) in .+, but allowed by claude_code\.user_temporary \(user\) in otlp-/,
      );
      // The runs list and the run itself count them with its findings (the list's filter reads them).
      const counted = (await other.invoke('runs.list', {})).filter(
        (r) => r.run_id === transcript || r.run_id === telemetry,
      );
      const stored = (id: string) => l.findings(id).length;
      expect(counted.map((r) => [r.run_id, r.findings]).sort()).toEqual(
        [
          [transcript, stored(transcript) + 2],
          [telemetry, stored(telemetry) + 2],
        ].sort(),
      );
      expect((await other.invoke('run.get', { run_id: transcript })).findings).toBe(stored(transcript) + 2);
      // The telemetry's run says the same from its side.
      const mirrored = (await other.invoke('run.findings', { run_id: telemetry })).filter(
        (f) => f.code === 'decision_conflict',
      );
      expect(mirrored.map((f) => f.message).sort()).toEqual([
        expect.stringMatching(
          /^call toolu_fx_echo allowed by claude_code\.user_temporary \(user\) in otlp-.+ but allowed by claude_code\.config/,
        ),
        expect.stringMatching(
          /^call toolu_fx_rm allowed by claude_code\.config \(config\) in otlp-.+ but denied by claude_code\.hook/,
        ),
      ]);
      // In the state: a note at the denial, and the call lists both sources as they disagree.
      const state = await stateOf(other, transcript);
      expect(
        state.notes.items.filter((n) => n.code === 'decision_conflict').map((n) => [n.seq, n.message]),
      ).toEqual(findings.map((f) => [f.seq, f.message]));
      const rm = state.calls.items.find((c) => c.call_id === 'toolu_fx_rm')!;
      expect((rm.decision_sources as Src[]).map((x) => [x.run_id, x.allowed, x.by])).toEqual([
        [transcript, false, 'hook'],
        [telemetry, true, 'config'],
      ]);
      // Every other call still agrees; verify (integrity) is untouched by the disagreement.
      expect(
        state.calls.items
          .filter((c) => c.call_id !== 'toolu_fx_rm')
          .every((c) => new Set(((c.decision_sources as Src[]) ?? []).map((x) => x.allowed)).size <= 1),
      ).toBe(true);
      expect((await other.invoke('run.verify', { run_id: transcript })).ok).toBe(true);
    } finally {
      await other.closeFolder();
    }
  });
});
