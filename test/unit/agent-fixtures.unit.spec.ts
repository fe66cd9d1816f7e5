import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { claudeCode } from '../../electron/ingest/formats/claude-code';
import { codex } from '../../electron/ingest/formats/codex';
import type { FormatAdapter, MappedEvent } from '../../electron/ingest/formats/types';
import { decodeRequest } from '../../electron/otlp/decode';
import { RunKeys, type RecordOf } from '../../electron/otlp/run-keys';
import { claudeCodeView } from '../../shared/formats/claude-code';
import { codexView } from '../../shared/formats/codex';
import type { FormatView } from '../../shared/formats/types';
import { KIND_RE, checkPayload, isKnownKind } from '../../shared/protocol';

/**
 * Issue 28: the adapters and the OTLP mapping on what Claude Code 2.1.328 and Codex 0.169.0 wrote
 * here (test/fixtures/otlp/agents/manifest.json, `npm run fixtures:agents`), line by line and
 * record by record, without a ledger.
 */
type Obj = Record<string, unknown>;
const FIX = path.join(__dirname, '../fixtures');
const manifest = JSON.parse(readFileSync(path.join(FIX, 'otlp/agents/manifest.json'), 'utf8')) as {
  sessions: Record<string, { session: string; subagents?: string[]; otlp: string[] }>;
};
const SESSIONS = Object.entries(manifest.sessions);
const CLAUDE = SESSIONS.filter(([n]) => n.startsWith('claude'));
const CODEX = SESSIONS.filter(([n]) => n.startsWith('codex'));

function mapFile(adapter: FormatAdapter, rel: string): { record: Obj; events: MappedEvent[] }[] {
  return readFileSync(path.join(FIX, rel), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l, i) => {
      const record = JSON.parse(l) as Obj;
      const events = adapter.map(record);
      if (!Array.isArray(events)) throw new Error(`${rel}:${i + 1}: ${events.error}`);
      return { record, events };
    });
}

const v1 = (view: FormatView, e: MappedEvent) =>
  view.interpret(e.kind, e.payload, { seq: 1, run_id: 'r', source: e.source ?? null })!.payload;

/** Each v1 event reads as a valid payload of its kind through the format's view. */
function expectValid(view: FormatView, events: MappedEvent[], where: string): void {
  for (const e of events) {
    expect(e.kind, where).toMatch(KIND_RE);
    if (!isKnownKind(e.kind)) continue;
    const r = checkPayload(e.kind, 1, v1(view, e));
    expect(r.ok, `${where} ${e.kind}: ${r.ok ? '' : r.message}`).toBe(true);
  }
}

describe('Claude Code 2.1.328 sessions', () => {
  it.each(CLAUDE)('%s: every line maps, new record types kept as their own kinds', (_n, s) => {
    const files = [s.session, ...(s.subagents ?? []).filter((f) => f.endsWith('.jsonl'))];
    const kinds = new Set<string>();
    for (const f of files) {
      const first = JSON.parse(readFileSync(path.join(FIX, f), 'utf8').split('\n')[0]!) as Obj;
      expect(claudeCode.detect(first), f).toBe(true);
      for (const [i, m] of mapFile(claudeCode, f).entries()) {
        expect(m.events.length, `${f}:${i + 1}`).toBeGreaterThan(0);
        expectValid(claudeCodeView, m.events, `${f}:${i + 1}`);
        for (const e of m.events) kinds.add(e.kind);
      }
    }
    for (const k of [
      'cc_api_request',
      'cc_api_request_shape',
      'cc_api_request_blob',
      'cc_tools_used',
      'cc_cost_state',
      'cc_atis_latch',
      'cc_attachment',
    ])
      expect(kinds, k).toContain(k);
  });

  it.each(CLAUDE)(
    '%s: each tool result line’s permissionDecision is the call’s decision, before its result',
    (_n, s) => {
      const events = mapFile(claudeCode, s.session).flatMap((m) => m.events);
      const decisions = events.filter((e) => e.kind === 'action_allowed' || e.kind === 'action_denied');
      const read = decisions.map((e) => {
        const p = v1(claudeCodeView, e);
        return [e.kind, p.call_id, p.decided_by, p.rule];
      });
      expect(read).toEqual([
        ['action_allowed', 'toolu_fx_echo', 'config', 'claude_code.config'],
        ['action_denied', 'toolu_fx_rm', 'hook', 'claude_code.hook'],
        ['action_allowed', 'toolu_fx_missing', 'config', 'claude_code.config'],
        ['action_allowed', 'toolu_fx_env', 'config', 'claude_code.config'],
        ['action_allowed', 'toolu_fx_agent', 'config', 'claude_code.config'],
      ]);
      const denial = v1(claudeCodeView, decisions[1]!);
      expect(denial).toMatchObject({
        reason: 'PreToolUse:Bash hook error: the fixture policy forbids rm -rf',
        reason_type: 'hook',
        reason_code: 'hook:PreToolUse',
        denial_kind: 'permission-rule',
        decision: 'reject',
      });
      // Each decision comes right before its call's result, from the same line and block.
      for (const d of decisions) {
        const next = events[events.indexOf(d) + 1]!;
        expect(next.kind).toBe('tool_returned');
        expect(next.payload).toBe(d.payload);
        expect(next.source).toEqual(d.source);
      }
      // The tool error is a result with status error, allowed by config.
      const missing = events.find(
        (e) => e.kind === 'tool_returned' && e.source?.ids?.tool_use_id === 'toolu_fx_missing',
      )!;
      expect(v1(claudeCodeView, missing)).toMatchObject({ status: 'error' });
    },
  );

  it.each(CLAUDE)(
    '%s: the background Agent call launches; its task-notification ends it, not a prompt',
    (_n, s) => {
      const events = mapFile(claudeCode, s.session).flatMap((m) => m.events);
      const launch = events.find(
        (e) => e.kind === 'tool_returned' && e.source?.ids?.tool_use_id === 'toolu_fx_agent',
      )!;
      const lp = v1(claudeCodeView, launch);
      expect(lp).toMatchObject({ call_id: 'toolu_fx_agent', async_launched: true });
      const ended = events.filter((e) => e.kind === 'subagent_ended');
      expect(ended.map((e) => v1(claudeCodeView, e))).toEqual([
        {
          call_id: 'toolu_fx_agent',
          agent_id: lp.agent_id,
          status: 'completed',
          summary: 'Agent "Count files" finished',
        },
      ]);
      expect(ended[0]!.source?.ids).toMatchObject({ tool_use_id: 'toolu_fx_agent', task_id: lp.agent_id });
      // The only prompt is the user's.
      const prompts = events
        .filter((e) => e.kind === 'user_prompted')
        .map((e) => v1(claudeCodeView, e).content);
      expect(prompts).toEqual(['FIXTURE-CC-MAIN: tidy this folder']);
      // A foreground result with an agent id (no async launch) has no async flag.
      expect(
        v1(claudeCodeView, {
          kind: 'tool_returned',
          at: '',
          payload: {
            type: 'user',
            message: { content: [{ type: 'tool_result', tool_use_id: 't', content: 'done' }] },
            toolUseResult: { agentId: 'x', status: 'completed' },
          },
          source: { part: 0 },
        }),
      ).not.toHaveProperty('async_launched');
    },
  );

  it('thinking is model_reasoned', () => {
    const events = mapFile(claudeCode, CLAUDE[0]![1].session).flatMap((m) => m.events);
    const t = events.filter((e) => e.kind === 'model_reasoned').map((e) => v1(claudeCodeView, e).content);
    expect(t).toEqual(['I should look around before changing anything.']);
  });
});

describe('Codex 0.169.0 rollouts', () => {
  it.each(CODEX)(
    '%s: every line maps; world_state, token_usage_record kept; goal_objective is no result',
    (_n, s) => {
      const mapped = mapFile(codex, s.session);
      const kinds = new Set<string>();
      for (const [i, m] of mapped.entries()) {
        expect(m.events.length).toBeGreaterThan(0);
        expectValid(codexView, m.events, `${s.session}:${i + 1}`);
        for (const e of m.events) kinds.add(e.kind);
      }
      expect(kinds).toContain('codex_world_state');
      expect(kinds).toContain('codex_token_usage_record');
      const goal = mapped.find((m) => (m.record.payload as Obj).name === 'goal_objective')!;
      expect((goal.record.payload as Obj).call_id).toBeUndefined();
      expect(goal.events.map((e) => e.kind)).toEqual(['codex_item_function_call_output']);
      // Every call has exactly one result.
      const events = mapped.flatMap((m) => m.events);
      const ids = (k: string) => events.filter((e) => e.kind === k).map((e) => e.source?.ids?.call_id);
      expect(ids('tool_returned').sort()).toEqual(ids('model_proposed').sort());
      expect(ids('model_proposed').length).toBe(5);
    },
  );

  it.each(CODEX)('%s: the exec policy’s refusal of rm -rf is an action_denied by config', (_n, s) => {
    const events = mapFile(codex, s.session).flatMap((m) => m.events);
    const denied = events.filter((e) => e.kind === 'action_denied');
    expect(denied.map((e) => v1(codexView, e))).toEqual([
      {
        call_id: 'call_fx_rm',
        rule: 'codex.config',
        reason: 'policy forbids commands starting with `rm -rf`',
        decided_by: 'config',
        decision: 'denied',
        source: 'Config',
        harness: 'codex',
      },
    ]);
    expect(events[events.indexOf(denied[0]!) + 1]!.kind).toBe('tool_returned');
    // A command whose own output says "rejected: …" is no refusal.
    const ran = codex.map({
      timestamp: '2026-12-03T00:00:00Z',
      type: 'response_item',
      payload: {
        type: 'function_call_output',
        call_id: 'c',
        output: 'Process exited with code 1\nOutput:\nrequest rejected: bad token\n',
      },
    }) as MappedEvent[];
    expect(ran.map((e) => e.kind)).toEqual(['tool_returned']);
  });
});

describe('their OTLP telemetry', () => {
  /** The records of a session's bodies, in arrival order, mapped as the receiver maps them. */
  function receive(files: string[]) {
    const keys = new RunKeys();
    const runs = new Map<string, { kinds: string[]; events: Obj[]; ats: (string | null)[] }>();
    for (const f of files) {
      const signal = /-(logs|traces|metrics)\./.exec(f)![1] as 'logs' | 'traces' | 'metrics';
      if (signal === 'metrics') continue;
      let body = readFileSync(path.join(FIX, f));
      if (f.endsWith('.gz')) body = gunzipSync(body);
      const d = decodeRequest(signal, body, /\.json/.test(f) ? 'json' : 'protobuf');
      const recs = ('records' in d ? d.records : []).map(
        (r) => ({ kind: signal === 'logs' ? 'log' : 'span', r }) as RecordOf,
      );
      for (const p of keys.prepare(recs)) {
        expect(p.error, f).toBeUndefined();
        const run = runs.get(p.key) ?? { kinds: [], events: [], ats: [] };
        runs.set(p.key, run);
        run.kinds.push(...p.kinds);
        // What the ledger stores as each event's payload (canonical, redacted).
        run.events.push(...p.jsons.map((j) => JSON.parse(j) as Obj));
        run.ats.push(...p.ats);
      }
    }
    return runs;
  }

  it.each(SESSIONS)('%s: one run, keyed by the session; decisions and results by call id', (name, s) => {
    const runs = receive(s.otlp);
    const id = /([0-9a-f]{8}-[0-9a-f-]{27})/.exec(path.basename(s.session))![1]!;
    expect([...runs.keys()]).toEqual([`c:${id}`]);
    const run = runs.get(`c:${id}`)!;
    // No kind named after a call site (Codex 0.169's record names).
    expect(run.kinds.filter((k) => /session_telemetry|tool_result_rs/.test(k))).toEqual([]);
    const decisions = run.events
      .map((e, i) => ({ kind: run.kinds[i]!, p: e, at: run.ats[i] }))
      .filter((e) => e.kind === 'action_allowed' || e.kind === 'action_denied');
    const said = decisions.map((d) => [d.kind, d.p.call_id, d.p.decided_by, d.p.rule]);
    if (name.startsWith('claude'))
      expect(said).toEqual([
        ['action_allowed', 'toolu_fx_echo', 'config', 'claude_code.config'],
        ['action_denied', 'toolu_fx_rm', 'hook', 'claude_code.hook'],
        ['action_allowed', 'toolu_fx_missing', 'config', 'claude_code.config'],
        ['action_allowed', 'toolu_fx_env', 'config', 'claude_code.config'],
        ['action_allowed', 'toolu_fx_agent', 'config', 'claude_code.config'],
        ['action_allowed', 'toolu_fx_sub_ls', 'user', 'claude_code.user_permanent'],
      ]);
    else
      expect(said).toEqual([
        ['action_allowed', 'call_fx_echo', 'config', 'codex.config'],
        // No tool_decision: its tool_result's output is the exec policy's refusal.
        ['action_denied', 'call_fx_rm', 'config', 'codex.config'],
        ['action_allowed', 'call_fx_missing', 'config', 'codex.config'],
        ['action_allowed', 'call_fx_env', 'config', 'codex.config'],
      ]);
    // Codex writes timeUnixNano 0: the time is the observed one, never 1970.
    for (const d of decisions) expect(String(d.at), name).toMatch(/^2026-/);
    const results = run.events
      .map((e, i) => ({ kind: run.kinds[i]!, p: e }))
      .filter((e) => e.kind === 'tool_returned' && e.p.harness !== undefined)
      .map((e) => [e.p.call_id, e.p.status]);
    expect(results).toContainEqual([name.startsWith('claude') ? 'toolu_fx_missing' : 'call_fx_rm', 'error']);
  });
});
