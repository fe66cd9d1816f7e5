import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildSpanTree, formatMs, type SpanIn } from '../../renderer/features/spans/spanTree';
import {
  firstUserText,
  otlpTitle,
  promptOfAttributes,
  promptOfEvent,
} from '../../shared/formats/otlp-prompt';

const FIX = path.join(__dirname, '../fixtures/otlp');

const span = (id: string, parent: string | null, start: number, end: number, seq = 0): SpanIn => ({
  seq,
  span_id: id,
  parent_span_id: parent,
  trace_id: 't',
  name: id,
  // Times of 2026 in nanoseconds: more digits than a double holds exactly.
  start_ns: (1_780_000_000_000_000_000n + BigInt(start) * 1_000_000n).toString(),
  end_ns: (1_780_000_000_000_000_000n + BigInt(end) * 1_000_000n).toString(),
  status: 0,
  kind: 'otel_span',
});

describe('span tree', () => {
  it('nests by parent span id whatever order the spans arrived in, siblings by start', () => {
    // Children end (and so arrive) before their parent; a late sibling starts first.
    const t = buildSpanTree([
      span('tool', 'root', 30, 45, 1),
      span('read', 'tool', 32, 40, 2),
      span('chat', 'root', 5, 25, 3),
      span('root', null, 0, 50, 4),
    ]);
    expect(t.rows.map((r) => [r.span.span_id, r.depth])).toEqual([
      ['root', 0],
      ['chat', 1],
      ['tool', 1],
      ['read', 2],
    ]);
    expect(t.total_ms).toBe(50);
    const read = t.rows.find((r) => r.span.span_id === 'read')!;
    expect([read.offset_ms, read.duration_ms]).toEqual([32, 8]);
    expect(t.rows[0]!.children).toBe(2);
  });

  it('draws a span whose parent has not arrived as a root, marked, and a loop of parents once', () => {
    const t = buildSpanTree([
      span('child', 'missing', 10, 20),
      span('a', 'b', 0, 5),
      span('b', 'a', 1, 4),
      span('self', 'self', 2, 3),
    ]);
    expect(t.rows).toHaveLength(4);
    expect(t.rows.find((r) => r.span.span_id === 'child')!.orphan).toBe(true);
    expect(t.rows.find((r) => r.span.span_id === 'self')!.orphan).toBe(true);
    expect(new Set(t.rows.map((r) => r.span.span_id)).size).toBe(4);
  });

  it('a chain of 100,000 spans each the parent of the next: no recursion, every depth', () => {
    const n = 100_000;
    const spans = Array.from({ length: n }, (_, i) => span(`s${i}`, i === 0 ? null : `s${i - 1}`, i, n));
    spans.reverse(); // the deepest arrives first, as a chain's spans end
    const t = buildSpanTree(spans);
    expect(t.rows).toHaveLength(n);
    expect(t.rows[n - 1]!.depth).toBe(n - 1);
    expect(t.rows[0]!.span.span_id).toBe('s0');
  });

  it('a span without times has no duration and sits at the start', () => {
    const t = buildSpanTree([{ ...span('x', null, 0, 0), start_ns: '0', end_ns: '' }, span('y', null, 3, 7)]);
    expect(t.rows.map((r) => [r.span.span_id, r.offset_ms, r.duration_ms])).toEqual([
      ['x', 0, 0],
      ['y', 0, 4],
    ]);
  });

  it('formats durations for reading', () => {
    expect([0.25, 12.34, 450, 4560, 125_000].map(formatMs)).toEqual([
      '250 µs',
      '12.3 ms',
      '450 ms',
      '4.56 s',
      '2 min 5 s',
    ]);
  });
});

describe('the prompt of an OTLP run', () => {
  it('GenAI 1.37 gen_ai.input.messages: the first user message’s text parts', () => {
    const v = JSON.stringify([
      { role: 'system', parts: [{ type: 'text', content: 'You are a coder.' }] },
      {
        role: 'user',
        parts: [
          { type: 'text', content: 'Fix the bug' },
          { type: 'text', content: 'in a.py' },
        ],
      },
    ]);
    expect(promptOfAttributes({ 'gen_ai.input.messages': v })).toEqual({ text: 'Fix the bug\nin a.py' });
  });

  it('older gen_ai.prompt (chat JSON or plain text) and OpenLLMetry’s indexed gen_ai.prompt.N.*', () => {
    expect(
      promptOfAttributes({ 'gen_ai.prompt': JSON.stringify([{ role: 'user', content: 'hello there' }]) }),
    ).toEqual({ text: 'hello there' });
    expect(promptOfAttributes({ 'gen_ai.prompt': 'plain words' })).toEqual({ text: 'plain words' });
    expect(
      promptOfAttributes({
        'gen_ai.prompt.0.role': 'system',
        'gen_ai.prompt.0.content': 'sys',
        'gen_ai.prompt.1.role': 'user',
        'gen_ai.prompt.1.content': 'what is 2+2',
      }),
    ).toEqual({ text: 'what is 2+2' });
  });

  it('the captured OpenLLMetry and OpenInference spans name their user message', () => {
    const texts: string[] = [];
    for (const f of ['openllmetry-openai-0.62.3.json', 'openinference-openai-0.1.58.json']) {
      const doc = JSON.parse(readFileSync(path.join(FIX, f), 'utf8')) as {
        resourceSpans: {
          scopeSpans: { spans: { attributes: { key: string; value: Record<string, unknown> }[] }[] }[];
        }[];
      };
      for (const rs of doc.resourceSpans)
        for (const ss of rs.scopeSpans)
          for (const s of ss.spans) {
            const attrs = Object.fromEntries(s.attributes.map((a) => [a.key, Object.values(a.value)[0]]));
            const p = promptOfAttributes(attrs);
            if (p && 'text' in p) texts.push(p.text);
          }
    }
    expect(texts.length).toBeGreaterThanOrEqual(2);
    for (const t of texts) expect(t.trim()).not.toBe('');
  });

  it('Claude Code’s and Codex’s withheld prompts (<REDACTED>, [REDACTED]) give their length, as exported', () => {
    const logs = (file: string, gz: boolean) => {
      const raw = readFileSync(path.join(FIX, 'agents', file));
      const doc = JSON.parse((gz ? gunzipSync(raw) : raw).toString('utf8')) as {
        resourceLogs: {
          scopeLogs: { logRecords: { attributes: { key: string; value: Record<string, unknown> }[] }[] }[];
        }[];
      };
      return doc.resourceLogs.flatMap((r) =>
        r.scopeLogs.flatMap((s) =>
          s.logRecords.map((l) =>
            Object.fromEntries(l.attributes.map((a) => [a.key, Object.values(a.value)[0]])),
          ),
        ),
      );
    };
    const cc = logs('claude-code-json/01-logs.json', false).find((a) => a['event.name'] === 'user_prompt')!;
    expect(promptOfEvent('claude_code_user_prompt', cc)).toEqual({ withheld: true, length: 33 });
    const cx = logs('codex-json/05-logs.json.gz', true).find((a) => a['event.name'] === 'codex.user_prompt')!;
    expect(promptOfEvent('codex_user_prompt', cx)).toEqual({ withheld: true, length: 33 });
    expect(otlpTitle('claude-code', { withheld: true, length: 33 })).toBe(
      'claude-code · prompt not exported (33 chars)',
    );
  });

  it('a prompt the harness exported, and a span’s mapped input messages', () => {
    expect(promptOfEvent('codex_user_prompt', { prompt: 'Add a test', prompt_length: '10' })).toEqual({
      text: 'Add a test',
    });
    expect(
      promptOfEvent('model_responded', {
        input_messages: [{ role: 'user', parts: [{ type: 'text', content: 'Sum the list' }] }],
      }),
    ).toEqual({ text: 'Sum the list' });
    expect(
      promptOfEvent('otel_span', {
        otel: { attributes: { user_prompt: 'rename x', user_prompt_length: 8 } },
      }),
    ).toEqual({ text: 'rename x' });
    expect(firstUserText([{ role: 'assistant', content: 'no' }])).toBeNull();
    expect(otlpTitle('svc', { text: '  two\n lines ' })).toBe('svc · two lines');
    expect(otlpTitle(null, null)).toBeNull();
  });
});
