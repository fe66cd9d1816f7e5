import { appendFileSync, cpSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { homeForFile } from './helpers/tmp';
import { Ledger, type StoredEvent } from '../../electron/ledger';
import { ingestFolder } from '../../electron/ingest';
import { stateAt } from '../../electron/state';
import { ProofloopService } from '../../electron/service/service';
import { subagentLinks } from '../../shared/formats/claude-code';

/**
 * Issue 13 on the real fixtures, through the real importer and the live service: every line of a
 * session is accounted for (an event whose source names it, or a finding), stored as written, each
 * call paired with its result, subagents linked, unknown types kept; a session growing line by
 * line is followed.
 */
const FIX = path.join(__dirname, '../fixtures');
const tmpOf = homeForFile('pl-sessions-');

type Obj = Record<string, unknown>;
const nonBlank = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .map((text, i) => ({ n: i + 1, text }))
    .filter((l) => l.text.trim() !== '');

function jsonlFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.jsonl'))
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)).split(path.sep).join('/'))
    .sort();
}

/** Each line of `key`: the events whose source names it, and the findings on it. */
function accounting(l: Ledger, folder: string, key: string) {
  const runs = l.runs().filter((r) => r.origin === key);
  const events = runs.flatMap((r) => l.read(r.run_id));
  const findings = l.findings().filter((f) => f.file === key);
  return nonBlank(path.join(folder, key)).map((line) => ({
    ...line,
    events: events.filter((e) => e.source?.line === line.n),
    findings: findings.filter((f) => f.line === line.n),
  }));
}

describe.each([
  ['Claude Code', 'claude-code/projects', /^(model_|user_|tool_|file_|context_|cc_)/],
  ['Codex', 'codex/sessions', /^(run_started|model_|user_|tool_|file_|context_|codex_)/],
])('%s fixtures through the importer', (_name, fixtures, kinds) => {
  let folder: string;
  let l: Ledger;
  beforeAll(async () => {
    folder = path.join(tmpOf(), fixtures.replace('/', '-'));
    cpSync(path.join(FIX, fixtures), folder, { recursive: true });
    l = Ledger.open(folder);
    await ingestFolder(l);
  });
  afterAll(() => l.close());

  it('every line is accounted for: an event with that source line, stored as written, or a finding', () => {
    const files = jsonlFiles(folder);
    expect(files.length).toBeGreaterThanOrEqual(5);
    for (const key of files) {
      const lines = accounting(l, folder, key);
      for (const line of lines) {
        const where = `${key}:${line.n}`;
        expect(line.events.length + line.findings.length, `${where} is not accounted for`).toBeGreaterThan(0);
        if (line.events.length === 0) continue;
        // Each event of the line carries the whole line as written (credential redaction aside).
        const written = JSON.parse(line.text) as Obj;
        for (const e of line.events) {
          expect(e.kind, where).toMatch(kinds);
          if (!e.redacted) expect(e.payload, where).toEqual(written);
        }
      }
      // Nothing else: no event names a line the file does not have.
      const n = new Set(lines.map((x) => x.n));
      const runs = l.runs().filter((r) => r.origin === key);
      expect(runs.length, key).toBeGreaterThan(0);
      for (const r of runs)
        for (const e of l.read(r.run_id)) expect(n.has(e.source?.line ?? -1), key).toBe(true);
    }
  });

  it('each call is paired with its result, wherever the file holds one', () => {
    let paired = 0;
    for (const r of l.runs()) {
      const events = l.read(r.run_id);
      // The results the file holds, by the id the source gave them (tool_use_id, call_id).
      const idOf = (e: StoredEvent) => e.source?.ids?.tool_use_id ?? e.source?.ids?.call_id;
      const results = new Set(events.filter((e) => e.kind === 'tool_returned').map(idOf));
      const proposed = events.filter((e) => e.kind === 'model_proposed').map(idOf);
      // Ids the file itself repeats (the record-shape fixture replaced them with one placeholder).
      const repeated = new Set(proposed.filter((id, i) => proposed.indexOf(id) !== i));
      const { state } = stateAt(l, r.run_id, r.head_seq);
      for (const c of state.calls.items) {
        const where = `${r.run_id}: call ${c.call_id} (${c.tool})`;
        if (repeated.has(c.call_id)) continue;
        if (results.has(c.call_id)) {
          expect(c.result, `${where} has no result`).not.toBeNull();
          expect(c.status, where).toBe('returned');
          paired += 1;
        } else {
          // A session cut before the result came (a window of a longer one), or a record-shape file.
          expect(c.result, where).toBeNull();
        }
      }
      expect(
        state.notes.items.filter((x) => x.code === 'result_twice'),
        r.run_id,
      ).toEqual([]);
      // A result for a call the file never proposes (a window that starts after the call) only.
      for (const x of state.notes.items.filter((n) => n.code === 'unknown_call')) {
        const id = /call (\S+)/.exec(x.message)?.[1];
        expect(proposed, `${r.run_id}: ${x.message}`).not.toContain(id);
      }
    }
    expect(paired).toBeGreaterThan(10);
  });

  it('types the format has no reading for are kept as events of their own kind', () => {
    const seen = new Set<string>();
    for (const key of jsonlFiles(folder))
      for (const line of accounting(l, folder, key))
        for (const e of line.events) if (/^(cc|codex)_/.test(e.kind)) seen.add(e.kind);
    expect(seen.size, [...seen].join(', ')).toBeGreaterThanOrEqual(2);
  });
});

describe('Claude Code subagents', () => {
  it('a 2.1 subagent file is a run of its own, linked to the Task call of its session', async () => {
    const folder = path.join(tmpOf(), 'subagent');
    const project = '-home-marco-projects-spotter-worktrees-spotter-4te';
    cpSync(path.join(FIX, 'claude-code/projects', project), path.join(folder, project), { recursive: true });
    const l = Ledger.open(folder);
    try {
      await ingestFolder(l);
      const session = 'ae4a77f8-aedd-4bc1-888f-c94edc91af04';
      const sub = l.run(`${session}:agent-aac57f5`);
      expect(sub).toMatchObject({
        format: 'claude_code',
        origin: `${project}/${session}/subagents/agent-aac57f5.jsonl`,
      });
      expect(sub!.head_seq).toBe(nonBlank(path.join(folder, sub!.origin!)).length);
      // The link, read from the parent's stored events: the Task call whose result names the agent.
      const parent = l.read(session);
      const links = subagentLinks(
        parent.filter((e) => e.source?.part === undefined || e.source.part === 0).map((e) => e.payload),
      );
      const call = [...links].find(([, v]) => v.agentId === 'aac57f5');
      expect(call, JSON.stringify([...links])).toBeDefined();
      const { state } = stateAt(l, session, l.run(session)!.head_seq);
      const task = state.calls.items.find((c) => c.call_id === call![0]);
      expect(task, 'the Task call is in the parent state').toBeDefined();
      expect(['Task', 'Agent']).toContain(task!.tool);
      expect(task!.result).not.toBeNull();
    } finally {
      l.close();
    }
  });
});

describe('a Claude Code session growing line by line', () => {
  it('is followed: each line becomes its events as it arrives, a cut line once it is whole', async () => {
    const projects = path.join(tmpOf(), 'live', 'projects');
    const dir = path.join(projects, '-home-marco-projects-spotter');
    mkdirSync(dir, { recursive: true });
    const src = path.join(FIX, 'claude-code/projects/-home-marco-projects-spotter/tool_heavy.jsonl');
    const lines = readFileSync(src, 'utf8')
      .split('\n')
      .filter((t) => t.trim() !== '');
    const file = path.join(dir, 'live-session.jsonl');
    // Claude Code has written its first lines when the folder is opened.
    writeFileSync(file, lines.slice(0, 2).join('\n') + '\n');

    const service = new ProofloopService();
    try {
      await service.openFolder(projects);
      service.keepLive();
      const ledger = service.ctx.ledger();
      const run = 'live-session';
      const linesIn = () => new Set(ledger.read(run).map((e: StoredEvent) => e.source?.line ?? 0));
      const waitFor = async (what: string, ok: () => boolean, ms = 15_000) => {
        const t0 = Date.now();
        while (!ok()) {
          if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
          await new Promise((r) => setTimeout(r, 50));
        }
      };
      expect([...linesIn()].sort()).toEqual([1, 2]);

      const cut = 8; // a line appended in two writes, its newline in the second
      for (let n = 3; n <= 14; n++) {
        const text = lines[n - 1]!;
        if (n === cut) {
          appendFileSync(file, text.slice(0, 100));
          await waitFor(`the cut line ${n} reported`, () =>
            ledger.findings(run).some((f) => f.code === 'truncated_line' && f.line === n),
          );
          expect(linesIn().has(n), 'half a line is no event').toBe(false);
          appendFileSync(file, text.slice(100) + '\n');
        } else {
          appendFileSync(file, text + '\n');
        }
        await waitFor(`line ${n}`, () => linesIn().has(n));
        expect(Math.max(...linesIn())).toBe(n);
      }
      expect(ledger.findings(run).filter((f) => f.code === 'truncated_line')).toEqual([]);

      // The rest at once; then every line is accounted for, and the run holds what a fresh import does.
      appendFileSync(file, lines.slice(14).join('\n') + '\n');
      await waitFor('the last line', () => linesIn().has(lines.length));
      const have = linesIn();
      for (let n = 1; n <= lines.length; n++) expect(have.has(n), `line ${n}`).toBe(true);
      const live = ledger.read(run).map((e) => [e.seq, e.kind, e.source?.line, e.source?.part]);
      const again = path.join(tmpOf(), 'live-again');
      mkdirSync(path.join(again, 'p'), { recursive: true });
      cpSync(file, path.join(again, 'p', 'live-session.jsonl'));
      const fresh = Ledger.open(again);
      try {
        await ingestFolder(fresh);
        expect(fresh.read(run).map((e) => [e.seq, e.kind, e.source?.line, e.source?.part])).toEqual(live);
      } finally {
        fresh.close();
      }
    } finally {
      service.closeFolder();
    }
  });
});
