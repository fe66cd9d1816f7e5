import { describe, expect, it } from 'vitest';
import { mapParts, parseDocument } from '../../electron/ingest/document';
import { atif, MAX_SUBAGENT_DEPTH } from '../../electron/ingest/formats/atif';
import { openHands } from '../../electron/ingest/formats/openhands';
import { sweAgent } from '../../electron/ingest/formats/swe-agent';
import { detectDocument } from '../../electron/ingest/formats/registry';
import type { ParsedEvent } from '../../electron/ingest/parse';
import { interpret } from '../../shared/formats';
import { endingOf } from '../../shared/formats/swe-agent';

/**
 * The mapping rules that the public fixtures (test/fixtures/{swe-agent,openhands,atif}) do not
 * reach: rejections, agent errors, limit exits, deep subagent nesting, documents that are not one.
 * The records are shaped as the programs' own serialisers write them (OpenHands V1:
 * openhands-sdk/openhands/sdk/event/llm_convertible/observation.py and conversation_error.py; V0:
 * openhands/events/observation/reject.py; SWE-agent's exit statuses: sweagent/agent/agents.py).
 */
type Obj = Record<string, unknown>;

function events(adapter: typeof openHands, doc: unknown): ParsedEvent[] {
  return mapParts(adapter, adapter.parts(doc)).flatMap((r) =>
    r.t === 'multi' ? (r.list as ParsedEvent[]) : r.t === 'ev' ? [r] : [],
  );
}
const view = (fmt: string, e: ParsedEvent) =>
  interpret(fmt, e.kind, e.payload, {
    seq: 1,
    run_id: 'r',
    source: e.source ? (JSON.parse(e.source) as Obj) : null,
  })!;

describe('OpenHands: decisions and failures land in their lanes', () => {
  it('V1 UserRejectObservation is action_denied for the call it names, with its reason', () => {
    const [e] = events(openHands, {
      kind: 'UserRejectObservation',
      id: 'e1',
      timestamp: '2026-06-16T05:39:50.000000',
      source: 'user',
      tool_name: 'terminal',
      tool_call_id: 'call_7',
      rejection_reason: 'do not push to main',
      rejection_source: 'user',
      action_id: 'a7',
    });
    expect(e!.kind).toBe('action_denied');
    expect(view('openhands', e!).payload).toMatchObject({
      call_id: 'call_7',
      rule: 'user',
      reason: 'do not push to main',
    });
    expect(e!.invalid).toBeNull();
  });

  it('V0 user_rejected is action_denied for its cause', () => {
    const [e] = events(openHands, [
      {
        id: 9,
        source: 'user',
        observation: 'user_rejected',
        cause: 8,
        content: 'no',
        extras: {},
        message: 'no',
      },
    ]);
    expect(e!.kind).toBe('action_denied');
    expect(view('openhands', e!).payload).toMatchObject({ call_id: '8', reason: 'no' });
  });

  it('a conversation error and an agent state of error are run_failed; an agent error is an error result', () => {
    const [fatal] = events(openHands, {
      kind: 'ConversationErrorEvent',
      id: 'e2',
      timestamp: '2026-06-16T05:40:00.000000',
      source: 'environment',
      code: 'LLMBadRequestError',
      detail: 'context window exceeded',
    });
    expect(fatal!.kind).toBe('run_failed');
    expect(view('openhands', fatal!).payload).toMatchObject({ reason: 'context window exceeded' });
    const [state] = events(openHands, [
      {
        id: 3,
        source: 'environment',
        observation: 'agent_state_changed',
        content: '',
        extras: { agent_state: 'error', reason: 'RuntimeError' },
        message: '',
      },
    ]);
    expect(state!.kind).toBe('run_failed');
    const [agentError] = events(openHands, {
      kind: 'AgentErrorEvent',
      id: 'e3',
      timestamp: '2026-06-16T05:40:01.000000',
      source: 'agent',
      tool_name: 'file_editor',
      tool_call_id: 'call_8',
      error: 'path must be absolute',
    });
    expect(agentError!.kind).toBe('tool_returned');
    expect(view('openhands', agentError!).payload).toMatchObject({
      call_id: 'call_8',
      status: 'error',
      excerpt: 'path must be absolute',
    });
  });

  it('an unknown V1 kind is an event of its own kind, never dropped', () => {
    const [e] = events(openHands, { kind: 'BrandNewEvent', id: 'e4', timestamp: 't', source: 'agent' });
    expect(e!.kind).toBe('openhands_brand_new_event');
  });
});

describe('SWE-agent: how the run ended', () => {
  it.each([
    ['submitted', 'run_completed'],
    ['submitted (exit_cost)', 'budget_exhausted'],
    ['exit_context', 'budget_exhausted'],
    ['exit_total_execution_time', 'budget_exhausted'],
    ['exit_format', 'run_failed'],
    ['exit_error', 'run_failed'],
    ['submitted (exit_error)', 'run_failed'],
    [null, 'swe_info'],
  ])('%s → %s', (status, kind) => {
    expect(endingOf(status).kind).toBe(kind);
    const doc = {
      environment: 'e',
      trajectory: [],
      history: [],
      info: { exit_status: status, submission: null },
    };
    const evs = events(sweAgent as typeof openHands, doc);
    expect(evs.map((e) => e.kind)).toEqual(['run_started', kind]);
  });

  it('a limit names its budget; a cost limit is not one of v1’s budgets, and that is flagged, not hidden', () => {
    const doc = {
      trajectory: [],
      info: { exit_status: 'exit_context', model_stats: { tokens_sent: 120_000, tokens_received: 10 } },
    };
    const [, limit] = events(sweAgent as typeof openHands, doc);
    expect(view('swe_agent', limit!).payload).toMatchObject({ budget: 'tokens', used: 120_000 });
    expect(limit!.invalid).toBeNull();
    const cost = events(sweAgent as typeof openHands, {
      trajectory: [],
      info: { exit_status: 'exit_cost' },
    })[1]!;
    expect(cost.invalid).toMatch(/budget/);
  });
});

describe('documents', () => {
  it('are claimed by content, not by name', () => {
    expect(detectDocument({ schema_version: 'ATIF-v1.6', session_id: 's', agent: {}, steps: [] })?.name).toBe(
      'atif',
    );
    expect(detectDocument({ trajectory: [], info: {} })?.name).toBe('swe_agent');
    expect(detectDocument([{ id: 0, source: 'user', action: 'message' }])?.name).toBe('openhands');
    expect(detectDocument({ name: 'proofloop', version: '1.0.0' })).toBeUndefined();
    expect(detectDocument([1, 2, 3])).toBeUndefined();
  });

  it('that do not parse say why, with the position', () => {
    const r = parseDocument(Buffer.from('{"trajectory": [1, 2,'));
    expect(r).toMatchObject({ ok: false, code: 'broken_json' });
    expect(parseDocument(Buffer.from([0x7b, 0xff, 0x7d]))).toMatchObject({ ok: false, code: 'not_utf8' });
    expect(parseDocument(Buffer.from('['.repeat(300) + ']'.repeat(300)))).toMatchObject({
      ok: false,
      code: 'invalid_event',
    });
  });

  it('ATIF subagents nested past the bound are a finding, found without recursion', () => {
    let t: Obj = {
      schema_version: 'ATIF-v1.7',
      session_id: 'leaf',
      agent: { name: 'a', version: '1' },
      steps: [],
    };
    for (let i = 0; i < MAX_SUBAGENT_DEPTH + 3; i++)
      t = {
        schema_version: 'ATIF-v1.7',
        session_id: `s${i}`,
        agent: { name: 'a', version: '1' },
        steps: [],
        subagent_trajectories: [t],
      };
    const results = mapParts(atif, atif.parts(t));
    const bad = results.filter((r) => r.t === 'bad');
    expect(bad).toHaveLength(1);
    expect(bad[0]).toMatchObject({ code: 'invalid_event' });
    expect((bad[0] as { message: string }).message).toMatch(/nested deeper than 16 levels/);
    expect(results.filter((r) => r.t === 'ev')).toHaveLength(MAX_SUBAGENT_DEPTH + 1);
  });
});
