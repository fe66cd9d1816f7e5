import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { claudeCode } from '../../electron/ingest/formats/claude-code';
import { codex } from '../../electron/ingest/formats/codex';
import type { FormatAdapter } from '../../electron/ingest/formats/types';
import type { StoredEvent } from '../../renderer/api/types';
import { summarize } from '../../renderer/ui/kinds';

type Obj = Record<string, unknown>;
const FIX = path.join(__dirname, '../fixtures');

function jsonlUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile() && d.name.endsWith('.jsonl'))
    .map((d) => path.join(d.parentPath, d.name));
}

const stored = (seq: number, kind: string, at: string, payload: Obj): StoredEvent => ({
  seq,
  run_id: 'fixture',
  kind,
  v: 1,
  at,
  payload,
  prev: '',
  hash: '',
});

/** Every event a fixture folder's records map to, with the record it came from. */
function mapped(dir: string, adapter: FormatAdapter): { ev: StoredEvent; record: Obj }[] {
  const out: { ev: StoredEvent; record: Obj }[] = [];
  for (const file of jsonlUnder(dir))
    for (const text of readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.trim())) {
      const record = JSON.parse(text) as Obj;
      const events = adapter.map(record as never);
      if (!Array.isArray(events)) continue;
      for (const m of events)
        out.push({
          record,
          ev: stored(out.length + 1, m.kind, m.at, m.payload as Obj),
        });
    }
  return out;
}

describe('the timeline summary of a record kept as written', () => {
  const claude = mapped(path.join(FIX, 'claude-code'), claudeCode);

  it("names a Claude Code hook's progress by what it ran, not by the envelope every record shares", () => {
    const hooks = claude.filter(({ record }) => (record.data as Obj | undefined)?.type === 'hook_progress');
    expect(hooks.length).toBeGreaterThan(0);
    for (const { ev, record } of hooks) {
      const data = record.data as Obj;
      const line = summarize(ev);
      expect(line, JSON.stringify(ev.payload).slice(0, 300)).toMatch(new RegExp(`^${String(data.type)} · `));
      expect(line).toContain(`hookName=${String(data.hookName)}`);
      expect(line).not.toContain('parentUuid');
      expect(line).not.toContain(String(record.sessionId));
    }
  });

  it('keeps every kind of record of other programs to one bounded line without their shared fields', () => {
    const kept = [...claude, ...mapped(path.join(FIX, 'codex'), codex)].filter(({ ev }) =>
      /^(cc|codex)_/.test(ev.kind),
    );
    expect(new Set(kept.map(({ ev }) => ev.kind)).size).toBeGreaterThan(3);
    for (const { ev } of kept) {
      const line = summarize(ev);
      expect(line.length).toBeGreaterThan(0);
      expect(line.length).toBeLessThanOrEqual(120);
      expect(line).not.toMatch(/^\{"(parentUuid|timestamp)"/);
    }
  });

  it('falls back to the JSON of a payload with nothing but shared fields', () => {
    const ev = stored(1, 'cc_record', '', { uuid: 'u-1' });
    expect(summarize(ev)).toBe('{"uuid":"u-1"}');
  });
});

describe("the timeline summary of a real agent's run (the gateway's and the hooks' events)", () => {
  it('an exchange that answered with calls only names its lane, its stop and its calls, not an empty line', () => {
    // As the gateway recorded a subagent's first exchange of Claude Code 2.1.328 (sim source).
    const ev = stored(6, 'model_responded', '', {
      agent_version: '2.1.328',
      answer: { bytes: 910, digest: 'd', status: 200 },
      calls: ['toolu_sim93026f2c03b3f7a5'],
      content: '',
      index: 0,
      lane: 'sub:88ec9a756e72',
      model: 'claude-sonnet-4-5',
      source: 'sim',
      stop_reason: 'tool_use',
      tokens: 68,
    });
    expect(summarize(ev)).toBe('sub:88ec9a756e72 · tool_use · 1 call · from sim');
    // The model's text, when there is some, is the line.
    expect(summarize({ ...ev, payload: { ...ev.payload, content: 'Fixed slug.js', calls: [] } })).toBe(
      'Fixed slug.js',
    );
  });
  it("a Claude Code call is named by its file or its subagent's task, not by its JSON", () => {
    const read = stored(7, 'model_proposed', '', {
      call_id: 't1',
      tool: 'Read',
      args: { file_path: '/runs/r/workspace/slug.js' },
    });
    expect(summarize(read)).toBe('Read(/runs/r/workspace/slug.js)');
    const agent = stored(3, 'tool_invoked', '', {
      call_id: 't0',
      tool: 'Agent',
      args: { description: 'Find the code under test', prompt: 'Look around this workspace…' },
    });
    expect(summarize(agent)).toBe('Agent(Find the code under test)');
  });
});
