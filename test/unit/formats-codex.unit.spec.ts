import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { claudeCode } from '../../electron/ingest/formats/claude-code';
import { codex } from '../../electron/ingest/formats/codex';
import type { MappedEvent } from '../../electron/ingest/formats/types';
import { ECHO_KINDS, codexTokens, codexView } from '../../shared/formats/codex';
import { patchSections } from '../../shared/formats/codex-patch';
import { KIND_RE, checkPayload, isKnownKind } from '../../shared/protocol';

type Obj = Record<string, unknown>;
const ROOT = path.join(__dirname, '../fixtures/codex/sessions');
const FILES = {
  v0_146: '2026/08/03/rollout-2026-08-03T10-48-56-019fc8be-3658-7ca3-9e29-000000000000.jsonl',
  v0_5x: '2025/10/31/rollout-2025-10-31T17-00-00-test-ratelimit-session.jsonl',
};

function load(rel: string): { line: number; record: Obj; events: MappedEvent[] }[] {
  return readFileSync(path.join(ROOT, rel), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l, i) => {
      const record = JSON.parse(l) as Obj;
      const r = codex.map(record);
      if (!Array.isArray(r)) throw new Error(`line ${i + 1}: ${r.error}`);
      return { line: i + 1, record, events: r };
    });
}
const all = (rel: string): MappedEvent[] => load(rel).flatMap((x) => x.events);
const view = (e: MappedEvent): Obj =>
  codexView.interpret(e.kind, e.payload, { seq: 0, run_id: 'run', source: e.source })!.payload;

describe('Codex adapter', () => {
  it('claims rollouts by their first line, not Claude Code sessions', () => {
    for (const rel of Object.values(FILES)) {
      const first = JSON.parse(readFileSync(path.join(ROOT, rel), 'utf8').split('\n')[0]!) as Obj;
      expect(codex.detect(first)).toBe(true);
      expect(claudeCode.detect(first)).toBe(false);
    }
    // The older layout's header (before ~0.3x) is a rollout too.
    expect(codex.detect({ id: 'x', timestamp: '2025-08-01T00:00:00Z', instructions: null })).toBe(true);
    expect(
      codex.detect({ seq: 1, run_id: 'r', kind: 'x', timestamp: 't', type: 'event_msg', payload: {} }),
    ).toBe(false);
  });

  it.each(Object.entries(FILES))(
    '%s: every line is one or more events with the line as written',
    (_v, rel) => {
      const m = load(rel);
      const raw = readFileSync(path.join(ROOT, rel), 'utf8')
        .split('\n')
        .filter((l) => l !== '');
      expect(m.length).toBe(raw.length);
      for (const x of m) {
        expect(x.events.length).toBeGreaterThan(0);
        for (const e of x.events) {
          expect(e.kind).toMatch(KIND_RE);
          expect(e.payload).toBe(x.record);
          expect(e.at).toBe(x.record.timestamp);
        }
      }
    },
  );

  it('the run id is the session id of session_meta', () => {
    const first = load(FILES.v0_146)[0]!.record;
    expect(codex.runId!(first, 'key')).toBe((first.payload as Obj).session_id);
  });

  it('every call is paired with its output by call_id, and reads as a v1 call and result', () => {
    const ev = all(FILES.v0_146);
    const calls = ev.filter((e) => e.kind === 'model_proposed');
    const outputs = ev.filter((e) => e.kind === 'tool_returned');
    expect(calls.length).toBeGreaterThanOrEqual(4);
    const callIds = new Set(calls.map((e) => e.source!.ids!.call_id));
    for (const o of outputs) expect(callIds).toContain(o.source!.ids!.call_id);
    for (const c of callIds) expect(outputs.some((o) => o.source!.ids!.call_id === c)).toBe(true);
    for (const e of calls) expect(typeof view(e).tool).toBe('string');
    for (const e of [...calls, ...outputs]) expect(view(e).call_id).toBe(e.source!.ids!.call_id);
  });

  it('a function output with an exit code reads as its status and duration', () => {
    const line = {
      timestamp: '2025-10-01T00:00:00Z',
      type: 'response_item',
      payload: {
        type: 'function_call_output',
        call_id: 'call_x',
        output: JSON.stringify({ output: 'boom', metadata: { exit_code: 2, duration_seconds: 1.5 } }),
      },
    };
    const [e] = codex.map(line) as MappedEvent[];
    const v = codexView.interpret(e!.kind, e!.payload, { seq: 0, run_id: 'r', source: e!.source })!;
    expect(v.payload).toMatchObject({
      call_id: 'call_x',
      status: 'error',
      duration_ms: 1500,
      excerpt: 'boom',
    });
    expect(v.inferred).toEqual([]);
    const text = {
      ...line,
      payload: { ...line.payload, output: 'Exit code: 0\nWall time: 0.2 seconds\nok' },
    };
    const [t] = codex.map(text) as MappedEvent[];
    expect(
      codexView.interpret(t!.kind, t!.payload, { seq: 0, run_id: 'r', source: t!.source })!.payload,
    ).toMatchObject({
      status: 'ok',
      duration_ms: 200,
    });
  });

  it('an apply_patch call is also one file_changed per file, each with its part of the patch', () => {
    const patch =
      '*** Begin Patch\n*** Update File: src/a.ts\n@@\n-old\n+new\n*** Add File: b.md\n+hello\n*** End Patch\n';
    const line = {
      timestamp: '2025-10-01T00:00:00Z',
      type: 'response_item',
      payload: {
        type: 'custom_tool_call',
        status: 'completed',
        call_id: 'call_p',
        name: 'apply_patch',
        input: patch,
      },
    };
    const ev = codex.map(line) as MappedEvent[];
    expect(ev.map((e) => e.kind)).toEqual(['model_proposed', 'file_changed', 'file_changed']);
    const files = ev.slice(1).map(view);
    expect(files.map((f) => [f.path, f.op])).toEqual([
      ['src/a.ts', 'update'],
      ['b.md', 'add'],
    ]);
    expect(files[0]!.patch).toBe('*** Update File: src/a.ts\n@@\n-old\n+new');
    expect(
      patchSections(patch)
        .map((s) => s.patch)
        .join('\n'),
    ).not.toContain('End Patch');
  });

  it('tokens are the last cumulative total, as Codex counts them (input includes cached)', () => {
    const ev = all(FILES.v0_5x);
    const counts = ev.filter((e) => e.kind === 'codex_event_token_count');
    expect(counts.length).toBe(2);
    // One token_count carries usage, the other only rate limits (info: null): not counted twice.
    const withInfo = counts.map(view).filter((v) => v.tokens_total !== null);
    expect(withInfo.length).toBe(1);
    expect(codexTokens(ev)).toBe(withInfo[0]!.tokens_total);
    expect(withInfo[0]!.input_tokens as number).toBeGreaterThanOrEqual(
      withInfo[0]!.cached_input_tokens as number,
    );
  });

  it('event_msg echoes of response items are kept, and marked so that views show them once', () => {
    const kinds = all(FILES.v0_146).map((e) => e.kind);
    expect(kinds).toContain('codex_event_user_message');
    expect(kinds).toContain('user_prompted');
    for (const k of kinds) if (ECHO_KINDS.has(k)) expect(k.startsWith('codex_event_')).toBe(true);
  });

  it('every record type is an event: unknown ones of their own kind, errors and aborts included', () => {
    const kinds = new Set(Object.values(FILES).flatMap((rel) => all(rel).map((e) => e.kind)));
    for (const k of [
      'codex_turn_context',
      'codex_event_turn_aborted',
      'codex_event_error',
      'context_updated',
      'codex_world_state',
    ])
      expect(kinds).toContain(k);
    const [e] = codex.map({
      timestamp: 't',
      type: 'event_msg',
      payload: { type: 'account/rateLimits/updated' },
    }) as MappedEvent[];
    expect(e!.kind).toBe('codex_event_account_rate_limits_updated');
    const [u] = codex.map({ timestamp: 't', type: 'never_seen', payload: 1 }) as MappedEvent[];
    expect(u!.kind).toBe('codex_never_seen');
  });

  it('every event of a v1 kind reads, through the view, as a payload its v1 schema accepts', () => {
    let n = 0;
    for (const rel of Object.values(FILES))
      for (const e of all(rel)) {
        if (!isKnownKind(e.kind)) continue;
        const r = checkPayload(e.kind, 1, view(e));
        expect(r.ok, `${e.kind}: ${r.ok ? '' : r.message}`).toBe(true);
        n++;
      }
    expect(n).toBeGreaterThan(20);
  });
});
