/**
 * Inspect AI eval logs: `.eval` (a zip: `header.json`, `summaries.json`, `reductions.json`,
 * `samples/<id>_epoch_<n>.json`, the chunked per-sample layout `samples/<id>_epoch_<n>/…`, and
 * `_journal/` while the eval runs; entries deflate or zstd) and `.json` (one JSON value). Detected
 * by content: a zip whose first entry is one of Inspect's, or JSON that begins as an EvalLog does.
 *
 * Runs: one for the eval (`<eval_id>`: its header or journal start, results, reductions,
 * summaries) and one per sample and epoch (`<eval_id>:<id>_epoch_<n>`), whose `runs.meta.eval`
 * names its eval (task, model, solver, scores) for the runs list to group by.
 *
 * Naming (each event's payload is its record as written):
 *   the sample without its events and pools       → run_started (runs.meta: its eval)
 *   model                                         → model_responded, and one model_proposed per
 *                                                   tool call of its output (source.part 1…)
 *   tool                                          → tool_invoked, its nested events (older logs),
 *                                                   tool_returned (at its `completed` time)
 *   approval approve / modify                     → action_allowed
 *   approval reject / terminate                   → action_denied
 *   approval escalate                             → action_escalated (the next approver decides)
 *   sample_limit message/token/turn/time/working  → budget_exhausted; other types → inspect_sample_limit
 *   score                                         → judge_verdict
 *   state / store                                 → state_changed / store_changed (JSON patches)
 *   error                                         → run_failed
 *   compaction                                    → context_updated
 *   any other event                               → inspect_<event> (span_begin, span_end, step,
 *                                                   sample_init, sandbox, info, logger, input, …)
 *   a message of the message pool / the final conversation → inspect_message
 *   a call of the call pool                       → inspect_call
 *   an attachment (`attachment://<key>`)          → inspect_attachment
 *   the sample's end (error, limit, scores, times) → run_failed when it has an error, else run_completed
 * Pool entries and attachments are written just before the first record that refers to them
 * (`input_refs`, `call_refs`, `attachment://`); those no record refers to, at the end of the sample.
 * References stay as written: they are resolved on read through the events' `source.ids`.
 */
import { open, readFile } from 'node:fs/promises';
import { depthOverText } from '../../../shared/protocol';
import { openZipEntries, type ZipEntries } from '../zip-entries';
import { idStr, mapEvent } from './inspect-events';
import type { StreamedRecord, FormatAdapter, Json, MappedEvent } from './types';
import { dict } from '../../../shared/dict.js';
import { isObj, nonEmpty as str, type Obj } from '../../../shared/json-read.js';

/** Entry names Inspect writes first in a `.eval` (the journal's start, or a finished log's header). */
const FIRST_ENTRIES = ['_journal/start.json', 'header.json', 'summaries.json', 'reductions.json'];
const EVAL_JSON_HEAD = /^\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:\s*"[a-z_]+"\s*,\s*"eval"\s*:\s*\{/;
const ATTACHMENT_RE = /attachment:\/\/([A-Za-z0-9_-]{1,128})/g;
const SAMPLE_ENTRY = /^samples\/(.+)_epoch_(\d+)\.json$/;
const CHUNKED_ENTRY = /^samples\/(.+)_epoch_(\d+)\/(.+)$/;
/** Keys of a sample that are not its shell: its events, pools and final conversation. */
const NOT_SHELL = new Set([
  'events',
  'messages',
  'attachments',
  'events_data',
  'message_pool',
  'call_pool',
  'message_refs',
]);
const END_KEYS = ['id', 'epoch', 'error', 'limit', 'scores', 'total_time', 'working_time', 'completed_at'];

function zipClaims(head: Buffer): boolean {
  if (head.length < 30 || head.readUInt32LE(0) !== 0x04034b50) return false;
  const nameLen = head.readUInt16LE(26);
  const name = head.subarray(30, 30 + nameLen).toString('utf8');
  return FIRST_ENTRIES.includes(name) || SAMPLE_ENTRY.test(name);
}

/** What `runs.meta.eval` says of an eval, from its spec and results as the log writes them. */
function evalMeta(head: Obj, file: string): Obj {
  const spec = isObj(head.eval) ? head.eval : {};
  const plan = isObj(head.plan) ? head.plan : {};
  const steps = Array.isArray(plan.steps) ? plan.steps : [];
  const solver =
    str(isObj(spec.solver) ? spec.solver.solver : spec.solver) ??
    (steps
      .map((s) => (isObj(s) ? str(s.solver) : null))
      .filter((s) => s !== null)
      .join(', ') ||
      null);
  const scores: Obj = dict();
  const results = isObj(head.results) ? head.results : {};
  for (const s of Array.isArray(results.scores) ? results.scores : []) {
    if (!isObj(s)) continue;
    const metrics: Obj = dict();
    if (isObj(s.metrics))
      for (const [k, m] of Object.entries(s.metrics))
        if (isObj(m) && typeof m.value === 'number') metrics[k] = m.value;
    scores[str(s.name) ?? str(s.scorer) ?? 'score'] = metrics;
  }
  return {
    eval_id: str(spec.eval_id),
    run_id: str(spec.run_id),
    task_id: str(spec.task_id),
    task: str(spec.task),
    model: str(spec.model),
    solver,
    created: str(spec.created),
    status: str(head.status),
    scores,
    file,
  };
}

/** The id of an eval's run: its `eval_id`, or in logs before eval ids (≤ 0.3.6x) its `task_id`. */
const evalKey = (meta: Obj): string | null => str(meta.eval_id) ?? str(meta.task_id) ?? str(meta.run_id);

/** Where a sample's pooled values come from: the monolith's inline pools, or the chunked layout's entries. */
interface Pools {
  message(i: number): Promise<unknown>;
  call(i: number): Promise<unknown>;
  attachment(key: string): Promise<string | undefined>;
  /** Every pool index and attachment key, to write those no record referred to. */
  all(): AsyncIterable<{ pool: 'message' | 'call' | 'attachment'; key: string }>;
}

function refIndices(refs: unknown): number[] {
  const out: number[] = [];
  if (!Array.isArray(refs)) return out;
  for (const r of refs) {
    if (!Array.isArray(r) || typeof r[0] !== 'number' || typeof r[1] !== 'number') continue;
    const end = Math.min(r[1], r[0] + 1_000_000);
    for (let i = Math.max(0, r[0]); i < end; i++) out.push(i);
  }
  return out;
}

/** The records of one sample's run, given its shell, its events (in order) and its pools. */
async function* sampleRecords(
  shell: Obj,
  events: AsyncIterable<{ ev: unknown; where: string }>,
  finalMessages: AsyncIterable<{ msg: unknown; where: string; index: number | null }>,
  pools: Pools,
  run: string,
  where: string,
  meta: Obj,
): AsyncGenerator<StreamedRecord> {
  const written = { message: new Set<number>(), call: new Set<number>(), attachment: new Set<string>() };
  const startAt = str(shell.started_at) ?? '';
  yield {
    where,
    events: [
      {
        kind: 'run_started',
        at: startAt,
        payload: shell,
        run,
        source: { ids: sampleIds(shell) },
        runMeta: { eval: meta, sample: { id: idStr(shell.id), epoch: shell.epoch ?? null } },
      },
    ],
  };
  // Records a value refers to that are not written yet: attachments, then pooled messages and calls.
  async function* deps(value: unknown, pooled: Obj | null): AsyncGenerator<StreamedRecord> {
    if (pooled !== null) {
      for (const i of refIndices(pooled.input_refs)) {
        if (written.message.has(i)) continue;
        const m = await pools.message(i);
        if (m === undefined) continue;
        yield* deps(m, null);
        written.message.add(i);
        yield poolRecord('message', String(i), m);
      }
      const call = isObj(pooled.call) ? pooled.call : null;
      for (const i of call ? refIndices(call.call_refs) : []) {
        if (written.call.has(i)) continue;
        const c = await pools.call(i);
        if (c === undefined) continue;
        written.call.add(i);
        yield poolRecord('call', String(i), c);
      }
    }
    const text = JSON.stringify(value) ?? '';
    if (!text.includes('attachment://')) return;
    for (const m of text.matchAll(ATTACHMENT_RE)) {
      const key = m[1]!;
      if (written.attachment.has(key)) continue;
      written.attachment.add(key);
      const content = await pools.attachment(key);
      if (content !== undefined) yield poolRecord('attachment', key, content);
      else
        yield {
          where: `${where} attachment://${key}`,
          error: 'refers to an attachment the sample does not hold',
        };
    }
  }
  const poolRecord = (
    pool: 'message' | 'call' | 'attachment',
    key: string,
    value: unknown,
  ): StreamedRecord => {
    const kind =
      pool === 'message' ? 'inspect_message' : pool === 'call' ? 'inspect_call' : 'inspect_attachment';
    const payload: Obj =
      pool === 'attachment' ? { attachment: key, content: value } : isObj(value) ? value : { value };
    const ids: Record<string, string> = { pool, index: key };
    if (isObj(value) && idStr(value.id) !== null) ids.id = idStr(value.id)!;
    return { where: `${where} ${pool} ${key}`, events: [{ kind, at: '', payload, run, source: { ids } }] };
  };

  yield* deps(shell, null);
  for await (const { ev, where: w } of events) {
    if (!isObj(ev)) {
      yield { where: w, error: 'an event that is not a JSON object' };
      continue;
    }
    yield* deps(ev, ev.event === 'model' ? ev : null);
    yield { where: w, events: mapEvent(ev, run, w) };
  }
  for await (const { msg, where: w, index } of finalMessages) {
    if (index !== null && written.message.has(index)) continue;
    yield* deps(msg, null);
    if (index !== null) written.message.add(index);
    const ids: Record<string, string> = { list: 'messages' };
    if (isObj(msg) && idStr(msg.id) !== null) ids.id = idStr(msg.id)!;
    if (index !== null) ids.index = String(index);
    yield {
      where: w,
      events: [
        { kind: 'inspect_message', at: '', payload: isObj(msg) ? msg : { value: msg }, run, source: { ids } },
      ],
    };
  }
  for await (const { pool, key } of pools.all()) {
    if (pool === 'attachment') {
      if (written.attachment.has(key)) continue;
      written.attachment.add(key);
      const c = await pools.attachment(key);
      if (c !== undefined) yield poolRecord('attachment', key, c);
      continue;
    }
    const i = Number(key);
    if (written[pool].has(i)) continue;
    written[pool].add(i);
    const v = pool === 'message' ? await pools.message(i) : await pools.call(i);
    if (v !== undefined) yield poolRecord(pool, key, v);
  }
  const end: Obj = dict();
  for (const k of END_KEYS) if (shell[k] !== undefined) end[k] = shell[k];
  yield {
    where: `${where} (end)`,
    events: [
      {
        kind: shell.error !== undefined && shell.error !== null ? 'run_failed' : 'run_completed',
        at: str(shell.completed_at) ?? '',
        payload: end,
        run,
        source: { ids: { ...sampleIds(shell), record: 'sample_end' } },
      },
    ],
  };
}

function sampleIds(s: Obj): Record<string, string> {
  const ids: Record<string, string> = dict();
  const id = idStr(s.id);
  if (id !== null) ids.sample_id = id;
  const epoch = idStr(s.epoch);
  if (epoch !== null) ids.epoch = epoch;
  const uuid = idStr(s.uuid);
  if (uuid !== null) ids.uuid = uuid;
  return ids;
}

function shellOf(sample: Obj): Obj {
  const out: Obj = dict();
  for (const [k, v] of Object.entries(sample)) if (!NOT_SHELL.has(k)) out[k] = v;
  return out;
}

async function* fromList<T>(xs: readonly T[]): AsyncGenerator<T> {
  for (const x of xs) yield x;
}

/** A monolith sample's pools and `attachments`, as the sample holds them. */
function inlinePools(sample: Obj): Pools {
  // `events_data` since ~0.3.150; `message_pool` / `call_pool` in the logs of 0.3.13x.
  const data = isObj(sample.events_data) ? sample.events_data : {};
  const list = (...xs: unknown[]): unknown[] =>
    (xs.find((x) => Array.isArray(x)) as unknown[] | undefined) ?? [];
  const messages = list(data.messages, sample.message_pool);
  const calls = list(data.calls, sample.call_pool);
  const atts = isObj(sample.attachments) ? sample.attachments : {};
  return {
    message: (i) => Promise.resolve(messages[i]),
    call: (i) => Promise.resolve(calls[i]),
    attachment: (k) => {
      const v = Object.prototype.hasOwnProperty.call(atts, k) ? atts[k] : undefined;
      return Promise.resolve(typeof v === 'string' ? v : v === undefined ? undefined : JSON.stringify(v));
    },
    async *all() {
      for (let i = 0; i < messages.length; i++) yield { pool: 'message' as const, key: String(i) };
      for (let i = 0; i < calls.length; i++) yield { pool: 'call' as const, key: String(i) };
      for (const k of Object.keys(atts)) yield { pool: 'attachment' as const, key: k };
    },
  };
}

function monolithRecords(sample: Obj, run: string, where: string, meta: Obj): AsyncGenerator<StreamedRecord> {
  const events = Array.isArray(sample.events) ? sample.events : [];
  const messages = Array.isArray(sample.messages) ? sample.messages : [];
  return sampleRecords(
    shellOf(sample),
    fromList(events.map((ev, i) => ({ ev, where: `${where} events[${i}]` }))),
    fromList(messages.map((msg, i) => ({ msg, where: `${where} messages[${i}]`, index: null }))),
    inlinePools(sample),
    run,
    where,
    meta,
  );
}

/** Parses JSON text as a record source: the value, or why not (too deep to walk, not JSON). */
function parseJson(text: string): { value: unknown } | { error: string } {
  if (depthOverText(text)) return { error: 'nests objects or arrays deeper than the reader walks' };
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (e) {
    return { error: `not JSON: ${(e as Error).message}` };
  }
}

const runOfSample = (evalRun: string, id: string, epoch: string): string => `${evalRun}:${id}_epoch_${epoch}`;

/** The chunked layout's sequence of one kind: chunk entries by their start index. */
class Sequence {
  private readonly starts: number[];
  private cached: { start: number; items: unknown[] } | null = null;
  constructor(
    private readonly zip: ZipEntries,
    private readonly prefix: string,
  ) {
    this.starts = zip.names
      .filter((n) => n.startsWith(prefix) && /^\d+\.json$/.test(n.slice(prefix.length)))
      .map((n) => Number(n.slice(prefix.length, -5)))
      .sort((a, b) => a - b);
  }
  get chunks(): readonly number[] {
    return this.starts;
  }
  async chunk(start: number): Promise<unknown[]> {
    if (this.cached?.start === start) return this.cached.items;
    const parsed = parseJson((await this.zip.read(`${this.prefix}${start}.json`)).toString('utf8'));
    if ('error' in parsed) throw new Error(`${this.prefix}${start}.json ${parsed.error}`);
    const items = Array.isArray(parsed.value) ? parsed.value : [];
    this.cached = { start, items };
    return items;
  }
  async at(i: number): Promise<unknown> {
    let lo = 0;
    let hi = this.starts.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.starts[mid]! <= i) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    if (found < 0) return undefined;
    const start = this.starts[found]!;
    return (await this.chunk(start))[i - start];
  }
}

function chunkedRecords(
  zip: ZipEntries,
  prefix: string,
  shell: Obj,
  run: string,
  meta: Obj,
): AsyncGenerator<StreamedRecord> {
  const events = new Sequence(zip, `${prefix}events/`);
  const messages = new Sequence(zip, `${prefix}messages/`);
  const calls = new Sequence(zip, `${prefix}calls/`);
  const atts = new Sequence(zip, `${prefix}attachments/`);
  // A separate reader of the messages for the final conversation, so the pool's cache is its own.
  const finals = new Sequence(zip, `${prefix}messages/`);
  async function* eventItems() {
    for (const start of events.chunks) {
      const items = await events.chunk(start);
      for (let k = 0; k < items.length; k++)
        yield { ev: items[k], where: `${prefix}events/${start}.json[${k}]` };
    }
  }
  async function* finalItems() {
    for (const i of refIndices(shell.message_refs))
      yield { msg: await finals.at(i), where: `${prefix}messages ${i}`, index: i };
  }
  const pools: Pools = {
    message: (i) => messages.at(i),
    call: (i) => calls.at(i),
    attachment: async (k) => {
      if (!/^\d+$/.test(k)) return undefined;
      const v = await atts.at(Number(k));
      return typeof v === 'string' ? v : v === undefined ? undefined : JSON.stringify(v);
    },
    async *all() {
      for (const [pool, seq] of [
        ['message', messages],
        ['call', calls],
        ['attachment', atts],
      ] as const) {
        for (const start of seq.chunks) {
          const n = (await seq.chunk(start)).length;
          for (let i = 0; i < n; i++) yield { pool, key: String(start + i) };
        }
      }
    },
  };
  return sampleRecords(shell, eventItems(), finalItems(), pools, run, prefix.slice(0, -1), meta);
}

/** An eval-level record (header, summaries, reductions, journal) as one event of the eval's run. */
function evalRecord(kind: string, where: string, value: unknown, run: string, at = ''): StreamedRecord {
  const payload = isObj(value) ? value : { [where.replace(/\.json$/, '').replace(/\W+/g, '_')]: value };
  return { where, events: [{ kind, at, payload, run, source: { ids: { entry: where } } }] };
}

function headerStart(head: Obj, where: string, run: string, meta: Obj): StreamedRecord {
  const spec = isObj(head.eval) ? head.eval : {};
  const at = str(spec.created) ?? '';
  return {
    where,
    events: [
      {
        kind: 'run_started',
        at,
        payload: head,
        run,
        source: { part: 0, ids: { entry: where } },
        runMeta: { eval: meta },
      },
    ],
  };
}

/**
 * The eval's end, as its header says (status, stats, error): the same record as its start, read
 * again as the last event of the eval's run. None for an eval still running (`started`).
 */
function headerEnd(head: Obj, where: string, run: string): StreamedRecord[] {
  const status = str(head.status);
  const stats = isObj(head.stats) ? head.stats : {};
  const at = str(stats.completed_at) ?? '';
  const kind =
    status === 'success'
      ? 'run_completed'
      : status === 'error' || status === 'cancelled'
        ? 'run_failed'
        : null;
  if (kind === null) return [];
  return [
    {
      where: `${where} (end)`,
      events: [{ kind, at, payload: head, run, source: { part: 1, ids: { entry: where } } }],
    },
  ];
}

async function* evalZipRecords(file: string): AsyncGenerator<StreamedRecord> {
  const zip = await openZipEntries(file);
  try {
    const read = async (name: string): Promise<{ value: unknown } | { error: string }> =>
      parseJson((await zip.read(name)).toString('utf8'));
    const headName = zip.has('header.json')
      ? 'header.json'
      : zip.has('_journal/start.json')
        ? '_journal/start.json'
        : null;
    let meta: Obj = dict();
    let evalRun = 'inspect-eval';
    let header: Obj | null = null;
    const done = new Set<string>();
    if (headName !== null) {
      done.add(headName);
      const h = await read(headName);
      if ('error' in h || !isObj(h.value)) {
        yield { where: headName, error: 'error' in h ? h.error : 'not a JSON object' };
      } else {
        meta = evalMeta(h.value, file);
        evalRun = evalKey(meta) ?? evalRun;
        header = h.value;
        yield headerStart(h.value, headName, evalRun, meta);
      }
    }
    // Samples, one at a time, in the order the zip holds them.
    const chunked = new Set<string>();
    for (const name of zip.names) {
      const m = SAMPLE_ENTRY.exec(name);
      if (m) {
        done.add(name);
        const s = await read(name);
        if ('error' in s || !isObj(s.value)) {
          yield { where: name, error: 'error' in s ? s.error : 'a sample that is not a JSON object' };
          continue;
        }
        const sample = s.value;
        const run = runOfSample(evalRun, idStr(sample.id) ?? m[1]!, idStr(sample.epoch) ?? m[2]!);
        yield* monolithRecords(sample, run, name, meta);
        continue;
      }
      const c = CHUNKED_ENTRY.exec(name);
      if (!c) continue;
      const prefix = `samples/${c[1]}_epoch_${c[2]}/`;
      if (chunked.has(prefix)) continue;
      chunked.add(prefix);
      const shellName = `${prefix}sample.json`;
      const s = zip.has(shellName)
        ? await read(shellName)
        : { error: 'the chunked sample has no sample.json' };
      if ('error' in s || !isObj(s.value)) {
        yield { where: shellName, error: 'error' in s ? s.error : 'not a JSON object' };
        continue;
      }
      const run = runOfSample(evalRun, idStr(s.value.id) ?? c[1]!, idStr(s.value.epoch) ?? c[2]!);
      yield* chunkedRecords(zip, prefix, s.value, run, meta);
      // Every entry of the sample is read through its sequences or kept as its own record below.
      for (const n of zip.names) {
        if (!n.startsWith(prefix)) continue;
        const rest = n.slice(prefix.length);
        if (rest === 'sample.json' || /^(events|messages|calls|attachments)\/\d+\.json$/.test(rest))
          done.add(n);
      }
    }
    // The rest of the eval: summaries, reductions, the journal, sidecars of chunked samples.
    for (const name of zip.names) {
      if (done.has(name)) continue;
      const v = await read(name);
      const c = CHUNKED_ENTRY.exec(name);
      const run = c ? runOfSample(evalRun, c[1]!, c[2]!) : evalRun;
      if ('error' in v) {
        yield { where: name, error: v.error };
        continue;
      }
      const kind =
        name === 'summaries.json'
          ? 'inspect_summaries'
          : name === 'reductions.json'
            ? 'inspect_reductions'
            : name === '_journal/start.json'
              ? 'inspect_journal_start'
              : name.startsWith('_journal/summaries/')
                ? 'inspect_journal_summaries'
                : 'inspect_entry';
      yield evalRecord(kind, name, v.value, run);
    }
    if (header !== null && headName !== null) yield* headerEnd(header, headName, evalRun);
  } finally {
    zip.close();
  }
}

/** A `.json` log: one EvalLog value. Read whole (the format is one JSON value); its samples one by one. */
async function* evalJsonRecords(file: string): AsyncGenerator<StreamedRecord> {
  const parsed = parseJson(await readFile(file, 'utf8'));
  if ('error' in parsed || !isObj(parsed.value)) {
    yield { where: file, error: 'error' in parsed ? parsed.error : 'not a JSON object' };
    return;
  }
  const log = parsed.value;
  const head: Obj = dict();
  for (const [k, v] of Object.entries(log)) if (k !== 'samples' && k !== 'reductions') head[k] = v;
  const meta = evalMeta(head, file);
  const evalRun = evalKey(meta) ?? 'inspect-eval';
  yield headerStart(head, '$', evalRun, meta);
  const samples = Array.isArray(log.samples) ? log.samples : [];
  for (let i = 0; i < samples.length; i++) {
    const s = samples[i];
    const where = `$.samples[${i}]`;
    if (!isObj(s)) {
      yield { where, error: 'a sample that is not a JSON object' };
      continue;
    }
    const run = runOfSample(evalRun, idStr(s.id) ?? String(i), idStr(s.epoch) ?? '1');
    yield* monolithRecords(s, run, where, meta);
  }
  if (log.reductions !== undefined && log.reductions !== null)
    yield evalRecord('inspect_reductions', '$.reductions', { reductions: log.reductions }, evalRun);
  yield* headerEnd(head, '$', evalRun);
}

export const inspect: FormatAdapter = {
  name: 'inspect',
  label: 'Inspect AI eval log',
  // Never a JSON line: an Inspect log is a document (below).
  detect: () => false,
  map(record: Json): MappedEvent[] {
    return mapEvent(record, '', 'event');
  },
  streamed: {
    claims(head: Buffer): boolean {
      if (zipClaims(head)) return true;
      return EVAL_JSON_HEAD.test(head.subarray(0, 4096).toString('utf8'));
    },
    async *records(file: string): AsyncGenerator<StreamedRecord> {
      yield* (await isZip(file)) ? evalZipRecords(file) : evalJsonRecords(file);
    },
  },
};

async function isZip(file: string): Promise<boolean> {
  const fh = await open(file, 'r');
  try {
    const b = Buffer.alloc(4);
    const { bytesRead } = await fh.read(b, 0, 4, 0);
    return bytesRead === 4 && b.readUInt32LE(0) === 0x04034b50;
  } finally {
    await fh.close();
  }
}
