import { cpSync, readFileSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { homeForFile } from './helpers/tmp';
import { Ledger } from '../../electron/ledger';
import { ingestFolder } from '../../electron/ingest';
import { checkRunSource } from '../../electron/ingest/seal-check';
import { stateAt } from '../../electron/state';
import { importArtifactsHome } from '../../electron/ledger/artifacts';
import { readArtifact } from '../../electron/ledger/artifact-store';
import type { SourceRef } from '../../shared/formats/source-ref';

/**
 * An OpenHands V1 conversation folder as the agent SDK keeps it (test/fixtures/openhands/v1-sdk,
 * from software-agent-sdk's .pr artifacts): OpenHands rewrites base_state.json as the
 * conversation goes on (its execution_status, its stats) and writes no event when it finishes.
 * The run ends, and goes on, as base_state.json says when the folder is read; its seal holds the
 * event files, each named when it changes, and not base_state.json, whose rewrite is no tamper.
 * `verify` crashed on such a run before ("… is not a regular file"), and the run was listed as
 * running for ever.
 */
const FIX = path.join(__dirname, '../fixtures/openhands/v1-sdk');
const CONV = 'cd94562403b9487ebdd4018e3f531dfd';
const RUN = 'cd945624-03b9-487e-bdd4-018e3f531dfd';
const tmpOf = homeForFile('pl-openhands-folder-');
let folder: string;
let l: Ledger;
const dir = () => path.join(folder, CONV);
const base = () => path.join(dir(), 'base_state.json');
const kinds = () => l.read(RUN).map((e) => e.kind);
const status = () => stateAt(l, RUN, l.run(RUN)!.head_seq).state.status;
const verdict = () => checkRunSource(l.db, l.folder, l.run(RUN)!);
const sealedNames = () =>
  (
    JSON.parse(l.db.prepare('SELECT state FROM imports WHERE file = ?').pluck().get(CONV) as string) as {
      sealFiles: string[];
    }
  ).sealFiles;

/** base_state.json rewritten as OpenHands does: its execution_status, a later modification time. */
function setStatus(value: string, tick: number) {
  const d = JSON.parse(readFileSync(base(), 'utf8')) as Record<string, unknown>;
  d.execution_status = value;
  d.stats = { ...(d.stats as object), rewritten: tick };
  writeFileSync(base(), JSON.stringify(d, null, 2));
  const t = new Date(Date.UTC(2026, 1, 5, 12, tick));
  utimesSync(base(), t, t);
}

beforeAll(async () => {
  folder = path.join(tmpOf(), 'runs');
  cpSync(FIX, folder, { recursive: true });
  l = Ledger.open(folder);
  await ingestFolder(l);
});
afterAll(() => l.close());

describe('an OpenHands V1 conversation folder as OpenHands goes on writing it', () => {
  it('ends as base_state.json says, and verifies against its event files', () => {
    expect(JSON.parse(readFileSync(base(), 'utf8')).execution_status).toBe('finished');
    expect(kinds().at(-1)).toBe('run_completed');
    expect(l.read(RUN).at(-1)!.payload).toEqual({ execution_status: 'finished' });
    expect(status()).toBe('completed');
    // Its outcome says what ended it (a V0 finish action's default, 'finish', before).
    expect(stateAt(l, RUN, l.run(RUN)!.head_seq).state.why).toBe('completed: execution_status finished');
    const files = readdirSync(path.join(dir(), 'events')).filter((f) => f.endsWith('.json'));
    expect(sealedNames()).toEqual(files.sort().map((f) => `events/${f}`));
    expect(verdict()).toMatchObject({ state: 'unchanged' });
  });

  it('a rewrite of base_state.json alone is no change of its source; running again resumes the run', async () => {
    setStatus('running', 1);
    expect(verdict()).toMatchObject({ state: 'unchanged' });
    const head = l.run(RUN)!.head_seq;
    await ingestFolder(l);
    const last = l.read(RUN).at(-1)!;
    expect(last.kind).toBe('run_resumed');
    // The seq it goes on from is the importer's: the run's head when it read the status.
    expect(last.payload).toEqual({ execution_status: 'running', from_seq: head });
    // No time: base_state.json holds none for it (its mtime may be a copy's); the run's times stay.
    expect(last.at).toBe('');
    expect(l.run(RUN)!.last_at).toBe(
      l
        .read(RUN)
        .filter((e) => e.at !== '')
        .at(-1)!.at,
    );
    expect(status()).toBe('running');
    // Read again unchanged: nothing more.
    await ingestFolder(l);
    expect(l.run(RUN)!.head_seq).toBe(head + 1);
  });

  it('a new event file and a finished conversation: the event, then the end, numbered on', async () => {
    const files = readdirSync(path.join(dir(), 'events'))
      .filter((f) => f.endsWith('.json'))
      .sort();
    const added = 'event-00008-00000000-0000-4000-8000-000000000008.json';
    const last = JSON.parse(readFileSync(path.join(dir(), 'events', files.at(-1)!), 'utf8')) as Record<
      string,
      unknown
    >;
    writeFileSync(
      path.join(dir(), 'events', added),
      JSON.stringify({ ...last, id: '00000000-0000-4000-8000-000000000008' }),
    );
    setStatus('finished', 2);
    await ingestFolder(l);
    expect(kinds().slice(-3)).toEqual(['run_resumed', 'model_responded', 'run_completed']);
    expect(status()).toBe('completed');
    // One line per part of the folder, none twice (a later import used to number from its files).
    const lines = l.db.prepare('SELECT line FROM events ORDER BY id').pluck().all() as number[];
    expect(lines).toEqual(lines.map((_, i) => i + 1));
    expect(sealedNames().at(-1)).toBe(`events/${added}`);
    expect(verdict()).toMatchObject({ state: 'unchanged' });
  });

  it('an event file changed after its import is named', () => {
    const name = readdirSync(path.join(dir(), 'events'))
      .filter((f) => f.endsWith('.json'))
      .sort()[3]!;
    const file = path.join(dir(), 'events', name);
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, text.replace('"source"', '"sourcE"'));
    const v = verdict()!;
    expect(v.state).toBe('changed');
    expect(v.message).toContain(`events/${name} no longer has the sha256 sealed at import`);
    writeFileSync(file, text);
    expect(verdict()).toMatchObject({ state: 'unchanged' });
  });
});

describe('a conversation folder’s large values', () => {
  it('move to artifacts, as a document’s and a session line’s do, and read back whole', async () => {
    const files = readdirSync(path.join(dir(), 'events'))
      .filter((f) => f.endsWith('.json'))
      .sort();
    const obs = JSON.parse(
      readFileSync(
        path.join(
          dir(),
          'events',
          files.find((f) => f.includes('event-00004'))!,
        ),
        'utf8',
      ),
    ) as Record<string, unknown>;
    const big = `${'line of a long tool output\n'.repeat(4000)}end`;
    const added = 'event-00009-00000000-0000-4000-8000-000000000009.json';
    writeFileSync(
      path.join(dir(), 'events', added),
      JSON.stringify({ ...obs, id: '00000000-0000-4000-8000-000000000009', big_output: big }),
    );
    await ingestFolder(l);
    const ev = l.read(RUN).find((e) => e.source?.ids?.pointer === `events/${added}`)!;
    // The stored source names what moved (shared/formats/source-ref.ts).
    const moved = (ev.source as SourceRef).artifacts!;
    expect(moved.map((m) => [m.path, m.bytes])).toEqual([[['big_output'], Buffer.byteLength(big)]]);
    expect(String((ev.payload as Record<string, unknown>).big_output)).toContain(
      `moved to artifact sha256:${moved[0]!.digest}`,
    );
    expect(readArtifact(importArtifactsHome(l.db.name), moved[0]!.digest)).toBe(big);
    expect(verdict()).toMatchObject({ state: 'unchanged' });
  });
});

describe('a conversation folder sealed before base_state.json was left out of its seal', () => {
  it('is checked as it was sealed: base_state.json then its files, a rewrite of it said to be possible', () => {
    // The seal of an earlier ProofLoop: one range over base_state.json and the event files it read.
    const names = [
      'base_state.json',
      ...readdirSync(path.join(dir(), 'events'))
        .filter((f) => f.endsWith('.json'))
        .sort()
        .map((f) => `events/${f}`),
    ];
    const bytes = Buffer.concat(names.map((n) => readFileSync(path.join(dir(), n))));
    const ranges = [{ from: 0, to: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') }];
    const state = JSON.parse(
      l.db.prepare('SELECT state FROM imports WHERE file = ?').pluck().get(CONV) as string,
    ) as Record<string, unknown>;
    delete state.sealFiles;
    state.seal = ranges;
    l.db.prepare('UPDATE imports SET state = ? WHERE file = ?').run(JSON.stringify(state), CONV);
    const run = { ...l.run(RUN)!, meta: { ...l.run(RUN)!.meta, seal: { file: CONV, ranges } } };
    expect(checkRunSource(l.db, l.folder, run)).toMatchObject({ state: 'unchanged' });
    setStatus('running', 3);
    const v = checkRunSource(l.db, l.folder, run)!;
    expect(v.state).toBe('changed');
    expect(v.message).toContain('base_state.json');
    expect(v.message).toContain('a rewrite of it alone changes this range');
  });
});
