import { describe, expect, it } from 'vitest';
import { inspect } from '../../electron/ingest/formats/inspect';
import { mapEvent } from '../../electron/ingest/formats/inspect-events';
import { interpret } from '../../shared/formats';
import { scoreValue } from '../../shared/formats/inspect';
import { checkPayload } from '../../shared/protocol';

/**
 * The Inspect adapter's naming of the event types the real fixtures do not hold (error, compaction,
 * each limit type and approval decision, nested tool events), on records shaped as Inspect's event
 * models define them (inspect_ai src/inspect_ai/event/), and how each reads as v1.
 */
type Obj = Record<string, unknown>;
const v1 = (kind: string, payload: Obj, part?: number) =>
  interpret('inspect', kind, payload, {
    seq: 1,
    run_id: 'e:1_epoch_1',
    source: part === undefined ? null : { part },
  })!.payload;

describe('Inspect events to kinds', () => {
  it('an error event is run_failed, its message the reason', () => {
    const ev = { event: 'error', timestamp: 't', error: { message: 'RuntimeError: boom', traceback: '…' } };
    const [m] = mapEvent(ev, 'r', 'w');
    expect(m!.kind).toBe('run_failed');
    expect(m!.payload).toBe(ev);
    const p = v1('run_failed', ev);
    expect(p.reason).toBe('RuntimeError: boom');
    expect(checkPayload('run_failed', 1, p).ok).toBe(true);
  });

  it('each limit type: budget_exhausted for those protocol v1 has a budget for, its own kind for the rest', () => {
    const kinds = ['message', 'turn', 'token', 'time', 'working', 'cost', 'operator', 'custom'].map(
      (type) => [type, mapEvent({ event: 'sample_limit', type, message: 'm', limit: 60 }, 'r', 'w')[0]!.kind],
    );
    expect(Object.fromEntries(kinds)).toEqual({
      message: 'budget_exhausted',
      turn: 'budget_exhausted',
      token: 'budget_exhausted',
      time: 'budget_exhausted',
      working: 'budget_exhausted',
      cost: 'inspect_sample_limit',
      operator: 'inspect_sample_limit',
      custom: 'inspect_sample_limit',
    });
    // A time limit is in seconds: wall_ms reads it in ms.
    const p = v1('budget_exhausted', { event: 'sample_limit', type: 'time', message: 'm', limit: 60 });
    expect(p).toMatchObject({ budget: 'wall_ms', limit: 60_000, limit_type: 'time' });
    expect(checkPayload('budget_exhausted', 1, p).ok).toBe(true);
  });

  it('each approval decision lands in its lane', () => {
    const kindOf = (decision: string) =>
      mapEvent(
        { event: 'approval', decision, approver: 'a', call: { id: 'c', function: 'bash' } },
        'r',
        'w',
      )[0]!.kind;
    expect(['approve', 'modify', 'reject', 'terminate', 'escalate'].map(kindOf)).toEqual([
      'action_allowed',
      'action_allowed',
      'action_denied',
      'action_denied',
      'action_escalated',
    ]);
    // Without an explanation, the reason is the decision.
    const p = v1('action_denied', {
      event: 'approval',
      decision: 'terminate',
      approver: 'human',
      call: { id: 'c' },
    });
    expect(p).toMatchObject({
      call_id: 'c',
      rule: 'approver:human',
      reason: 'terminate',
      decision: 'terminate',
    });
    expect(checkPayload('action_denied', 1, p).ok).toBe(true);
  });

  it('a model event with two tool calls proposes each, in order, by its call id', () => {
    const ev = {
      event: 'model',
      uuid: 'u1',
      model: 'm',
      output: {
        choices: [
          {
            message: {
              content: [{ type: 'text', text: 'two calls' }],
              tool_calls: [
                { id: 'a', function: 'bash', arguments: { cmd: 'ls' } },
                { id: 'b', function: 'python', arguments: { code: '1' } },
              ],
            },
          },
        ],
        usage: { total_tokens: 12 },
      },
    };
    const ms = mapEvent(ev, 'r', 'w');
    expect(ms.map((m) => [m.kind, m.source?.part, m.source?.ids?.call_id])).toEqual([
      ['model_responded', 0, undefined],
      ['model_proposed', 1, 'a'],
      ['model_proposed', 2, 'b'],
    ]);
    expect(v1('model_responded', ev, 0)).toMatchObject({ content: 'two calls', tokens: 12, model: 'm' });
    expect(v1('model_proposed', ev, 2)).toMatchObject({ call_id: 'b', tool: 'python', args: { code: '1' } });
  });

  it('a tool event of an older log: invoked, its nested events (a nested tool too) each as written, returned', () => {
    const inner = {
      event: 'tool',
      id: 'in',
      function: 'f',
      arguments: {},
      result: 'x',
      events: [{ event: 'info', data: 1 }],
    };
    const ev = {
      event: 'tool',
      id: 'out',
      function: 'agent',
      arguments: {},
      result: 'ok',
      timestamp: '2026-01-01T00:00:00Z',
      completed: '2026-01-01T00:00:02Z',
      events: [{ event: 'model', output: {} }, inner],
    };
    const ms = mapEvent(ev, 'r', 'w');
    expect(ms.map((m) => m.kind)).toEqual([
      'tool_invoked',
      'model_responded',
      'tool_invoked',
      'tool_returned',
      'inspect_info',
      'tool_returned',
    ]);
    expect(ms[4]!.payload).toEqual({ event: 'info', data: 1 });
    expect(ms[4]!.source?.ids?.path).toBe('w.events[1].events[0]');
    expect(v1('tool_returned', ev)).toMatchObject({ call_id: 'out', status: 'ok', duration_ms: 2000 });
  });

  it('score values read as Inspect reads them', () => {
    expect(['C', 'I', 'P', 'yes', true, 1, 0.5, 'nope'].map(scoreValue)).toEqual([
      1,
      0,
      0.5,
      1,
      1,
      1,
      0.5,
      null,
    ]);
    expect(v1('judge_verdict', { event: 'score', score: { value: { a: 'C', b: 1 } } }).passed).toBe(true);
    expect(v1('judge_verdict', { event: 'score', score: { value: { a: 'C', b: 'I' } } }).passed).toBe(false);
  });

  it('claims a zip whose first entry is Inspect’s and JSON that begins as an EvalLog, nothing else', () => {
    const zipHead = (name: string) => {
      const b = Buffer.alloc(30 + name.length);
      b.writeUInt32LE(0x04034b50, 0);
      b.writeUInt16LE(name.length, 26);
      b.write(name, 30);
      return b;
    };
    const claims = (h: Buffer) => inspect.streamed!.claims(h);
    expect(claims(zipHead('_journal/start.json'))).toBe(true);
    expect(claims(zipHead('header.json'))).toBe(true);
    expect(claims(zipHead('manifest.json'))).toBe(false);
    expect(claims(Buffer.from('{\n  "version": 2,\n  "status": "success",\n  "eval": {\n'))).toBe(true);
    expect(claims(Buffer.from('{"name": "x", "version": "1.0.0"}'))).toBe(false);
    expect(inspect.detect({ event: 'model' })).toBe(false);
  });
});
