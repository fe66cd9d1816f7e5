import { cpSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { inflateRawSync } from 'node:zlib';
import { decompress as zstdDecompress } from 'zstd-napi';
import { createWriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import yazl from 'yazl';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { homeForFile } from './helpers/tmp';
import { Ledger, type StoredEvent } from '../../electron/ledger';
import { ingestFolder } from '../../electron/ingest';
import { diffRuns } from '../../electron/state/diff-runs';
import { exportBundle, verifyBundle } from '../../electron/bundle';
import { interpret } from '../../shared/formats';
import { ProofloopService } from '../../electron/service/service';

/**
 * Issue 27, Inspect AI: real logs of Inspect's own tests (test/fixtures/inspect, README there)
 * through the real importer. Every record of a log is accounted for, counted here from the file
 * itself, not from the reader: the eval's header (its start and its end), each other entry, and
 * per sample its shell, each event (and each event nested in a tool event), each pooled message,
 * call and attachment, each message of its final conversation, and its end.
 */
const FIX = path.join(__dirname, '../fixtures/inspect');
const tmpOf = homeForFile('pl-inspect-');

type Obj = Record<string, unknown>;
const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);

/** An `.eval`'s entries (deflate, or zstd: zip method 93), read here with a zip reader of the test's own (not the importer's). */
function evalEntries(file: string): Map<string, unknown> {
  const zip = readFileSync(file);
  const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const count = zip.readUInt16LE(eocd + 10);
  let at = zip.readUInt32LE(eocd + 16);
  const out = new Map<string, unknown>();
  for (let i = 0; i < count; i++) {
    const method = zip.readUInt16LE(at + 10);
    const csize = zip.readUInt32LE(at + 20);
    const n = zip.readUInt16LE(at + 28);
    const local = zip.readUInt32LE(at + 42);
    const name = zip.subarray(at + 46, at + 46 + n).toString('utf8');
    const dataAt = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const raw = zip.subarray(dataAt, dataAt + csize);
    const bytes = method === 8 ? inflateRawSync(raw) : method === 93 ? zstdDecompress(raw) : raw;
    out.set(name, JSON.parse(bytes.toString('utf8')) as unknown);
    at += 46 + n + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  }
  return out;
}

/** Records of one sample, as the file holds them. */
function sampleRecords(s: Obj): number {
  let n = 2; // its shell and its end
  const nested = (list: unknown): number => {
    let k = 0;
    const stack: unknown[] = Array.isArray(list) ? [...list] : [];
    while (stack.length > 0) {
      const ev = stack.pop();
      k += 1;
      if (isObj(ev) && Array.isArray(ev.events)) stack.push(...(ev.events as unknown[]));
    }
    return k;
  };
  const events = Array.isArray(s.events) ? s.events : [];
  n += events.length;
  for (const ev of events) if (isObj(ev) && Array.isArray(ev.events)) n += nested(ev.events) - 0;
  const data = isObj(s.events_data) ? s.events_data : {};
  const pool = (
    Array.isArray(data.messages) ? data.messages : Array.isArray(s.message_pool) ? s.message_pool : []
  ) as unknown[];
  const calls = (
    Array.isArray(data.calls) ? data.calls : Array.isArray(s.call_pool) ? s.call_pool : []
  ) as unknown[];
  n += pool.length + calls.length;
  n += isObj(s.attachments) ? Object.keys(s.attachments).length : 0;
  n += Array.isArray(s.messages) ? s.messages.length : 0;
  return n;
}

function recordsOfEval(file: string): { records: number; samples: Obj[]; head: Obj } {
  const entries = evalEntries(file);
  const samples: Obj[] = [];
  let records = 0;
  for (const [name, value] of entries) {
    if (/^samples\/.+_epoch_\d+\.json$/.test(name)) {
      samples.push(value as Obj);
      records += sampleRecords(value as Obj);
    } else records += name === 'header.json' ? 2 : 1;
  }
  return { records, samples, head: entries.get('header.json') as Obj };
}

function recordsOfJson(file: string): { records: number; samples: Obj[]; head: Obj } {
  const log = JSON.parse(readFileSync(file, 'utf8')) as Obj;
  const samples = (log.samples ?? []) as Obj[];
  let records = 2 + (log.reductions ? 1 : 0);
  for (const s of samples) records += sampleRecords(s);
  return { records, samples, head: log };
}

/** Events of the runs of one file, by run, in seq order. */
function runsOf(l: Ledger, key: string): Map<string, StoredEvent[]> {
  const out = new Map<string, StoredEvent[]>();
  for (const r of l.runs().filter((x) => x.origin === key)) out.set(r.run_id, l.read(r.run_id));
  return out;
}

const v1 = (e: StoredEvent, runId: string): Obj =>
  interpret('inspect', e.kind, e.payload, { seq: e.seq, run_id: runId, source: e.source ?? null })?.payload ??
  e.payload;

const FILES = [
  ['log_message_deduplication.eval', recordsOfEval],
  ['2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval', recordsOfEval],
  ['2025-05-12T20-27-36-04-00_browser.json', recordsOfJson],
  ['log_read_sample.approvals.json', recordsOfJson],
  // Written by Inspect 0.3.208 itself, zstd entries (test/fixtures/README.md).
  ['retry-2-then-success.eval', recordsOfEval],
] as const;

describe('Inspect AI logs through the importer', () => {
  let folder: string;
  let l: Ledger;
  beforeAll(async () => {
    folder = path.join(tmpOf(), 'evals');
    mkdirSync(folder);
    for (const [name] of FILES) cpSync(path.join(FIX, name), path.join(folder, name));
    // A file in the folder that is JSON but no eval log: left alone, no finding, no run.
    cpSync(path.join(__dirname, '../../tsconfig.json'), path.join(folder, 'tsconfig.json'));
    l = Ledger.open(folder);
    await ingestFolder(l);
  });
  afterAll(() => l.close());

  it.each(FILES)('%s: every record is an event or a finding, and nothing else', (name, count) => {
    const { records, samples } = count(path.join(FIX, name));
    const runs = runsOf(l, name);
    // One run for the eval, one per sample and epoch.
    expect(runs.size).toBe(samples.length + 1);
    const lines = new Set<number>();
    for (const events of runs.values()) for (const e of events) lines.add(e.source!.line!);
    const findings = l.findings().filter((f) => f.file === name);
    for (const f of findings) lines.add(f.line!);
    expect(findings.filter((f) => f.code !== 'invalid_event')).toEqual([]);
    // Record numbers 1..records, each held by an event or a finding.
    expect(lines.size).toBe(records);
    expect(Math.min(...lines)).toBe(1);
    expect(Math.max(...lines)).toBe(records);
    // Every kind's payload reads as its v1 schema wants: no invalid_event at all.
    expect(findings).toEqual([]);
  });

  it.each(FILES)(
    '%s: each sample event is stored as written, in order, under its sample’s run',
    (name, count) => {
      const { samples } = count(path.join(FIX, name));
      const runs = runsOf(l, name);
      for (const s of samples) {
        const run = [...runs.keys()].find((id) =>
          id.endsWith(`:${String(s.id as string)}_epoch_${String(s.epoch as number)}`),
        );
        expect(run, `a run for sample ${String(s.id as string)}`).toBeDefined();
        const events = runs.get(run!)!;
        expect(events[0]!.kind).toBe('run_started');
        expect(events.at(-1)!.kind).toMatch(/^run_(completed|failed)$/);
        // The top-level events of the sample, in order, each the payload of the events named after it.
        const top = events.filter(
          (e) => e.source?.ids?.event !== undefined && e.source.ids.parent === undefined,
        );
        const distinct = top.filter((e, i) => i === 0 || top[i - 1]!.source!.line !== e.source!.line);
        expect(distinct.map((e) => e.payload)).toEqual(s.events);
      }
    },
  );

  it('a model call is paired with its tool result by call id, and tokens and the model read from the model event', () => {
    const runs = runsOf(l, '2025-05-12T20-27-36-04-00_browser.json');
    const [runId, events] = [...runs].find(([id]) => id.includes('_epoch_'))!;
    const proposed = events.filter((e) => e.kind === 'model_proposed').map((e) => v1(e, runId));
    const returned = events.filter((e) => e.kind === 'tool_returned').map((e) => v1(e, runId));
    expect(proposed.length).toBe(4);
    expect(returned.map((r) => r.call_id)).toEqual(proposed.map((p) => p.call_id));
    for (const p of proposed) expect(p.tool).toMatch(/^web_browser/);
    for (const r of returned) expect(r.status).toBe('ok');
    const responded = events.filter((e) => e.kind === 'model_responded').map((e) => v1(e, runId));
    expect(responded.every((m) => typeof m.tokens === 'number' && m.tokens > 0)).toBe(true);
    const log = JSON.parse(
      readFileSync(path.join(FIX, '2025-05-12T20-27-36-04-00_browser.json'), 'utf8'),
    ) as Obj;
    const written = ((log.samples as Obj[])[0]!.events as Obj[]).filter((e) => e.event === 'model');
    expect(responded.map((m) => m.model)).toEqual(written.map((e) => e.model));
    expect(responded.map((m) => m.tokens)).toEqual(
      written.map((e) => ((e.output as Obj).usage as Obj).total_tokens),
    );
  });

  it('condensed events keep their references as written; the pooled messages and attachments they name come first', () => {
    const runs = runsOf(l, 'log_message_deduplication.eval');
    const [, events] = [...runs].find(([id]) => id.includes('_epoch_'))!;
    const models = events.filter((e) => e.kind === 'model_responded');
    expect(models.length).toBe(6);
    for (const m of models) {
      const refs = m.payload.input_refs as [number, number][];
      expect(Array.isArray(refs)).toBe(true);
      // Each pooled message a model event names is an inspect_message before it, by pool index.
      for (const [from, to] of refs)
        for (let i = from; i < to; i++) {
          const msg = events.find(
            (e) =>
              e.kind === 'inspect_message' &&
              e.source?.ids?.pool === 'message' &&
              e.source.ids.index === String(i),
          );
          expect(msg, `pool message ${i}`).toBeDefined();
          expect(msg!.seq).toBeLessThan(m.seq);
        }
    }
    // The attachment a model event's tool description refers to is stored before it, whole.
    const att = events.find((e) => e.kind === 'inspect_attachment')!;
    const key = att.source!.ids!.index!;
    const first = events.find(
      (e) => JSON.stringify(e.payload).includes(`attachment://${key}`) && e.kind !== 'inspect_attachment',
    )!;
    expect(att.seq).toBeLessThan(first.seq);
    expect(String(att.payload.content)).toMatch(/python/i);
  });

  it('approvals and limits land in the decision and budget lanes, with the approver, explanation and decision', () => {
    const runs = runsOf(l, 'log_read_sample.approvals.json');
    const [runId, events] = [...runs].find(([id]) => id.includes('_epoch_'))!;
    const lane = (kind: string) => events.filter((e) => e.kind === kind).map((e) => v1(e, runId));
    expect(lane('action_escalated').map((a) => [a.decision, a.approver])).toEqual([['escalate', 'auto']]);
    expect(lane('action_denied').map((a) => [a.decision, a.rule, a.reason])).toEqual([
      ['reject', 'approver:human', 'Do not delete files.'],
      ['terminate', 'approver:human', 'Stop this sample.'],
    ]);
    expect(lane('action_allowed').map((a) => [a.decision, a.call_id])).toEqual([
      ['modify', 'call_derived_1'],
      ['approve', 'call_derived_1'],
    ]);
    const modified = events.find((e) => e.kind === 'action_allowed')!.payload.modified as Obj;
    expect(modified.arguments).toEqual({ cmd: 'ls /tmp/x' });
    expect(lane('budget_exhausted')).toEqual([
      expect.objectContaining({
        budget: 'tokens',
        limit: 1000,
        limit_type: 'token',
        message: 'Token limit of 1000 exceeded.',
      }),
    ]);
    expect(lane('judge_verdict')).toHaveLength(1);
  });

  it('each sample run is grouped under its eval: task, model, solver and scores in runs.meta', () => {
    const name = '2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval';
    const { head } = recordsOfEval(path.join(FIX, name));
    const spec = head.eval as Obj;
    const samples = l.runs().filter((r) => r.origin === name && r.run_id.includes('_epoch_'));
    expect(samples).toHaveLength(10);
    for (const r of samples) {
      const ev = r.meta.eval as Obj;
      // A log of 0.3.58 has no eval_id: its task_id names the eval.
      expect(spec.eval_id).toBeUndefined();
      expect(ev).toMatchObject({
        eval_id: null,
        task_id: spec.task_id,
        task: 'popularity',
        model: spec.model,
      });
      expect(typeof ev.solver).toBe('string');
      expect(r.run_id.startsWith(`${String(spec.task_id)}:`)).toBe(true);
      expect(r.status).toBe('completed');
    }
    const scores = (samples[0]!.meta.eval as Obj).scores as Obj;
    expect(Object.keys(scores).length).toBeGreaterThan(0);
  });

  it('two samples diff like any two runs; a sample exports as a redacted bundle that verifies', async () => {
    const name = '2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval';
    const ids = l
      .runs()
      .filter((r) => r.origin === name && r.run_id.includes('_epoch_'))
      .map((r) => r.run_id)
      .sort();
    const d = diffRuns(l, ids[0]!, ids[1]!);
    expect(d.identical).toBe(false);
    expect(d.counts.same + d.counts.changed).toBeGreaterThan(10);
    expect(d.first_divergence).not.toBeNull();
    const self = diffRuns(l, ids[0]!, ids[0]!);
    expect(self.identical).toBe(true);

    const out = path.join(tmpOf(), 'sample.zip');
    const res = await exportBundle(l, { runIds: [ids[0]!, ids[1]!], out });
    expect(res.manifest.runs.map((r) => r.run_id).sort()).toEqual([ids[0], ids[1]]);
    const verdict = await verifyBundle(out);
    expect(verdict.integrity).toBe('ok');
    expect(verdict.runs.map((r) => r.chain)).toEqual(['import', 'import']);
  });

  it('opening the folder again reads nothing twice', async () => {
    const before = l.db.prepare('SELECT count(*) FROM events').pluck().get();
    const s = await ingestFolder(l);
    expect(s.events).toBe(0);
    expect(l.db.prepare('SELECT count(*) FROM events').pluck().get()).toBe(before);
  });
});

describe('an Inspect .eval with zstd entries (method 93)', () => {
  it('a log Inspect 0.3.208 wrote with zstd entries opens: its retried model call, condensed, is three model events', async () => {
    const name = 'retry-2-then-success.eval';
    const file = path.join(FIX, name);
    // The file is what Inspect wrote: every local header names zstd (93), none deflate.
    const zip = readFileSync(file);
    const methods: number[] = [];
    for (
      let i = zip.indexOf('PK\x03\x04', 0, 'latin1');
      i >= 0;
      i = zip.indexOf('PK\x03\x04', i + 4, 'latin1')
    )
      methods.push(zip.readUInt16LE(i + 8));
    expect(methods).toEqual([93, 93, 93, 93, 93]);
    const { head, samples } = recordsOfEval(file);
    expect(((head.eval as Obj).packages as Obj).inspect_ai).toMatch(/^0\.3\.208/);
    const folder = path.join(tmpOf(), 'real-zstd');
    mkdirSync(folder);
    cpSync(file, path.join(folder, name));
    const l = Ledger.open(folder);
    try {
      await ingestFolder(l);
      expect(l.findings()).toEqual([]);
      const runs = runsOf(l, name);
      const runId = [...runs.keys()].find((id) => id.endsWith(':1_epoch_1'))!;
      const events = runs.get(runId)!;
      expect(l.run(runId)!.status).toBe('completed');
      // The sample's events are condensed: each model event names its input in the pool by
      // input_refs, and the pooled message is an event before them.
      const s = samples[0]!;
      expect((s.events_data as Obj).messages).toHaveLength(1);
      const models = events.filter((e) => e.kind === 'model_responded');
      expect(models.map((e) => e.payload)).toEqual((s.events as Obj[]).filter((e) => e.event === 'model'));
      const pooled = events.find((e) => e.kind === 'inspect_message' && e.source?.ids?.pool === 'message')!;
      expect(pooled.seq).toBeLessThan(models[0]!.seq);
      // Two failed attempts and the one that answered, one call (call_id) three times.
      expect(models.map((e) => [v1(e, runId).error, e.payload.attempt, e.payload.call_id])).toEqual([
        ["_Transient('transient')", 1, 'kGpTHyKQDTbrjBUS6y2G4P'],
        ["_Transient('transient')", 2, 'kGpTHyKQDTbrjBUS6y2G4P'],
        [null, 3, 'kGpTHyKQDTbrjBUS6y2G4P'],
      ]);
      expect(v1(models[2]!, runId)).toMatchObject({ content: 'ok', model: 'mockllm/fake' });
    } finally {
      l.close();
    }
  });

  it('reads as the same records as its deflate original', async () => {
    const read = async (name: string) => {
      const folder = path.join(tmpOf(), name.replace(/\W/g, '_'));
      mkdirSync(folder);
      cpSync(path.join(FIX, name), path.join(folder, name));
      const l = Ledger.open(folder);
      try {
        await ingestFolder(l);
        expect(l.findings()).toEqual([]);
        // By run id: two runs created in one millisecond list in either order.
        return [...runsOf(l, name)]
          .sort(([a], [b]) => (a < b ? -1 : 1))
          .map(([id, evs]) => [id, evs.map((e) => [e.kind, e.payload, e.source?.line])]);
      } finally {
        l.close();
      }
    };
    const deflate = await read('log_message_deduplication.eval');
    const zstd = await read('log_message_deduplication.zstd.eval');
    expect(deflate.length).toBe(2);
    expect(zstd).toEqual(deflate);
  });
});

/**
 * The chunked per-sample layout (`samples/<id>_epoch_<n>/sample.json`, `events/<start>.json`,
 * `messages/<start>.json`, `attachments/<start>.json`; design/large-samples.md of inspect_ai). No
 * public log in it was found: this one is derived here from the real sample of
 * log_message_deduplication.eval as Inspect's converter lays it out (its message pool then its
 * final messages as the messages sequence, `message_refs` naming the final ones, attachments by
 * index), events and messages cut into two chunks each.
 */
describe('an Inspect .eval with a chunked sample (derived from a real one)', () => {
  it('reads the chunks in order: every event, pooled message and attachment once, in the monolith’s order', async () => {
    const src = evalEntries(path.join(FIX, 'log_message_deduplication.eval'));
    const sample = src.get('samples/0_epoch_1.json') as Obj;
    const atts = sample.attachments as Record<string, string>;
    const keys = Object.keys(atts);
    const byIndex = (text: string) =>
      text.replace(/attachment:\/\/([0-9a-f]{32})/g, (_m, k: string) => `attachment://${keys.indexOf(k)}`);
    const events = JSON.parse(byIndex(JSON.stringify(sample.events))) as Obj[];
    const pool = sample.message_pool as unknown[];
    const finals = sample.messages as unknown[];
    const messages = [...pool, ...finals];
    const shell: Obj = {};
    for (const [k, v] of Object.entries(sample))
      if (!['events', 'messages', 'attachments', 'message_pool'].includes(k)) shell[k] = v;
    shell.message_refs = [[pool.length, messages.length]];
    const zip = new yazl.ZipFile();
    const add = (name: string, value: unknown) => zip.addBuffer(Buffer.from(JSON.stringify(value)), name);
    for (const [name, value] of src) if (!name.startsWith('samples/')) add(name, value);
    const p = 'samples/0_epoch_1/';
    add(`${p}sample.json`, JSON.parse(byIndex(JSON.stringify(shell))));
    const cut = 20;
    add(`${p}events/0.json`, events.slice(0, cut));
    add(`${p}events/${cut}.json`, events.slice(cut));
    add(`${p}messages/0.json`, messages.slice(0, 3));
    add(`${p}messages/3.json`, messages.slice(3));
    add(
      `${p}attachments/0.json`,
      keys.map((k) => atts[k]),
    );
    zip.end();
    const folder = path.join(tmpOf(), 'chunked');
    mkdirSync(folder);
    const file = path.join(folder, 'chunked.eval');
    const out = createWriteStream(file);
    zip.outputStream.pipe(out);
    await finished(out);

    const l = Ledger.open(folder);
    try {
      await ingestFolder(l);
      expect(l.findings()).toEqual([]);
      const run = l.runs().find((r) => r.run_id.endsWith(':0_epoch_1'))!;
      const evs = l.read(run.run_id);
      // Every event, as the chunks hold it, in order.
      const top = evs.filter((e) => e.source?.ids?.event !== undefined && e.source.ids.parent === undefined);
      const distinct = top.filter((e, i) => i === 0 || top[i - 1]!.source!.line !== e.source!.line);
      expect(distinct.map((e) => e.payload)).toEqual(events);
      // Each item of the messages sequence once: the pooled ones before the model events naming them,
      // the final ones (message_refs) after the events.
      const msgs = evs.filter((e) => e.kind === 'inspect_message');
      expect(msgs.map((e) => Number(e.source!.ids!.index)).sort((a, b) => a - b)).toEqual(
        messages.map((_, i) => i),
      );
      const firstModel = evs.find((e) => e.kind === 'model_responded')!;
      expect(evs.find((e) => e.kind === 'inspect_message' && e.source!.ids!.index === '0')!.seq).toBeLessThan(
        firstModel.seq,
      );
      // The attachment, by index, before the first record that names it.
      const att = evs.filter((e) => e.kind === 'inspect_attachment');
      expect(att.map((e) => e.payload.content)).toEqual(keys.map((k) => atts[k]));
      expect(evs.at(-1)!.kind).toBe('run_completed');
    } finally {
      l.close();
    }
  });
});

describe('what the runs list shows of Inspect runs; an unfinished log', () => {
  it('a sample’s summary names its eval as its project, its model, its input as title', async () => {
    const name = '2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval';
    const folder = path.join(tmpOf(), 'summary');
    mkdirSync(folder);
    cpSync(path.join(FIX, name), path.join(folder, name));
    const service = new ProofloopService();
    try {
      await service.openFolder(folder);
      const { head, samples } = recordsOfEval(path.join(FIX, name));
      const spec = head.eval as Obj;
      const runs = await service.invoke('runs.list', {});
      const one = runs.find((r) => r.run_id.endsWith(`:${String(samples[0]!.id as string)}_epoch_1`))!;
      const s = await service.invoke('run.summary', { run_id: one.run_id });
      expect(s.format).toBe('inspect');
      expect(s.project).toBe(`popularity · ${String(spec.model)} (${String(spec.task_id)})`);
      expect(s.model).toBe(spec.model);
      expect(s.title).toBe(
        String(samples[0]!.input as string)
          .replace(/\s+/g, ' ')
          .trim()
          .slice(0, 200),
      );
    } finally {
      service.closeFolder();
    }
  });

  it('an unfinished .eval (its journal, no header yet) opens: samples complete, the eval still running', async () => {
    // What Inspect leaves while an eval runs: `_journal/` and the finished samples, no header.json,
    // summaries.json or reductions.json (derived here from the real deduplication log).
    const src = evalEntries(path.join(FIX, 'log_message_deduplication.eval'));
    const zip = new yazl.ZipFile();
    for (const [n, v] of src)
      if (!['header.json', 'summaries.json', 'reductions.json'].includes(n))
        zip.addBuffer(Buffer.from(JSON.stringify(v)), n);
    zip.end();
    const folder = path.join(tmpOf(), 'unfinished');
    mkdirSync(folder);
    const out = createWriteStream(path.join(folder, 'running.eval'));
    zip.outputStream.pipe(out);
    await finished(out);
    const l = Ledger.open(folder);
    try {
      await ingestFolder(l);
      expect(l.findings()).toEqual([]);
      const start = src.get('_journal/start.json') as Obj;
      const evalRun = l.runs().find((r) => !r.run_id.includes('_epoch_'))!;
      expect(evalRun.run_id).toBe((start.eval as Obj).eval_id);
      expect(evalRun.status).toBe('running');
      const evs = l.read(evalRun.run_id);
      expect(evs[0]!.kind).toBe('run_started');
      expect(evs[0]!.payload).toEqual(start);
      expect(evs.map((e) => e.kind)).toEqual(['run_started', 'inspect_journal_summaries']);
      const sample = l.runs().find((r) => r.run_id.includes('_epoch_'))!;
      expect(sample.status).toBe('completed');
    } finally {
      l.close();
    }
  });
});
