/**
 * The fast way to prepare a run for the diff: from each event's payload as stored (JSON text), not
 * from parsed events. Gives per event exactly the comparison key and call ordinal that the
 * straightforward way (`prepareSide` in ./diff, which stays the reference) gives; a property test
 * (test/unit/diff.unit.spec.ts) holds the two together.
 *
 * Why: on two 100,000-event runs that differ in 1%, parsing every payload, building its normalised
 * copy and writing it back to JSON was ~60% of the diff's CPU time. But most of what a payload's
 * normalised form depends on is shared between events: what makes two events' payload texts differ
 * is mostly what the normalisation leaves out (call ids, times, durations). So each payload text is
 * first turned into a *template* with one native regex replace that blanks out exactly such values;
 * events with the same template have the same normalised payload, so the expensive normalisation
 * runs once per distinct template (about half the events of a bench run; a rerun read together with
 * its source run shares their templates), and every other event costs a regex pass and a Map lookup
 * (or a string compare, following the other run's trail). Measured on the bench's two 100,000-event
 * runs: ~0.65 s of CPU for the diff in one thread, where the straightforward way took ~1.2 s.
 *
 * Why a template may stand for all its events (the regex, below, keeps this true):
 * - it blanks only a whole JSON value token, replacing it with NUL, which valid JSON text cannot
 *   contain, so two texts with one template differ only in blanked values;
 * - it blanks a value only where the normalisation ignores it: a string `call_id` value (masked as
 *   `#` for comparison), the value of a key it drops (`at`, `time`, `timestamp`, `*_at`,
 *   `duration_ms`, `elapsed_ms`), or a string that is a whole ISO-8601 time (`<time>`), the last only
 *   for a run id that no ISO time can contain (normString tests the run id first);
 * - a `"key":` that follows `{` or `,` cannot sit inside a string of valid JSON (the quote before the
 *   key would end that string), so a match is a real key; value tokens are matched as strict JSON
 *   (valid escapes, no control characters), so a text that shares a valid text's template is valid.
 * What the regex misses (whitespace around a colon, escaped key names, numbers as call ids) only makes
 * templates finer, never wrong. Whatever this code does not expect (a record without its kind, a NUL
 * byte, a kind that is not a plain name, an old payload version) makes `prepareStored` return null:
 * the caller then takes the straightforward way.
 *
 * This module imports nothing from the protocol (whose zod schemas cost a worker thread ~50 ms of
 * CPU to load, measured): events of the current payload version need no upcasting, and the reader
 * marks the others, which the straightforward way upcasts.
 */
import type { RunState } from '../state/types';
import { newContext, normalisedPayload, type NormaliseContext } from './normalise';

/** Between a stored event's payload text and its kind. */
export const FIELD_SEP = '\x1f';
/** After the kind, then the payload version, when that is not the current one. */
export const VERSION_SEP = '\x1d';
/** Between the records of a chunk. */
export const RECORD_SEP = '\x1e';

/**
 * One stored event as the fast path reads it: the payload's JSON text, FIELD_SEP, the kind, and
 * VERSION_SEP + v when its payload version is an old one (`oldV`; electron/state/diff-read.ts builds
 * these in SQL).
 */
export function storedRecord(kind: string, payloadJson: string, oldV?: number): string {
  const record = `${payloadJson}${FIELD_SEP}${kind}`;
  return oldV === undefined ? record : `${record}${VERSION_SEP}${oldV}`;
}

/** One run as stored: seqs, and per event a record (see storedRecord), in seq order. */
export interface StoredSide {
  run_id: string;
  seqs: ArrayLike<number>;
  records: readonly string[];
  final_state?: RunState | null;
}

/**
 * A stretch of one run's events as SQLite hands them over, one string per chunk: `n` events, their
 * seqs as a JSON array, their records joined by RECORD_SEP. Cheap to send to a worker thread (a few
 * long strings, not one per event).
 */
export interface StoredChunks {
  run_id: string;
  chunks: { n: number; seqs: string; text: string | null }[];
}

/** The events of stored chunks, or null when they are not what the fast path expects. */
export function storedSide(stored: StoredChunks): StoredSide | null {
  const seqs: number[] = [];
  const records: string[] = [];
  let last = -Infinity;
  for (const c of stored.chunks) {
    if (c.n === 0) continue;
    const rows = c.text === null ? [] : c.text.split(RECORD_SEP);
    const chunkSeqs = JSON.parse(c.seqs) as number[];
    // A separator inside a field, or rows out of order: not for the fast path.
    if (rows.length !== c.n || chunkSeqs.length !== c.n) return null;
    for (let i = 0; i < rows.length; i++) {
      const seq = chunkSeqs[i]!;
      if (!(seq > last)) return null;
      last = seq;
      seqs.push(seq);
      records.push(rows[i]!);
    }
  }
  return { run_id: stored.run_id, seqs, records };
}

/**
 * One run prepared for the diff, compact: typed arrays (transferable from a worker thread without a
 * copy) that index small tables. The comparison key of event i is `keys[keyOf[i]]`: kind and
 * normalised payload as one JSON text; equal keys ⇔ events that compare equal.
 */
export interface KeyedSide {
  run_id: string;
  seqs: Float64Array;
  kindOf: Int32Array;
  kinds: string[];
  keyOf: Int32Array;
  keys: string[];
  /** The per-run ordinal of the event's call id (`#n` shown), 0 when it names none. */
  callOf: Int32Array;
  /** The call ids by ordinal (`callIds[n - 1]`), so that the parts of a run read apart can be joined. */
  callIds: string[];
  final_state?: RunState | null;
}

/**
 * The comparison key of an event whose payload is of the current version (or already upcast): kind
 * and normalised payload as JSON text (a payload that is not an object counts as `{}`).
 */
export function payloadKey(kind: string, payload: unknown, ctx: NormaliseContext): string {
  const p = payload && typeof payload === 'object' ? (payload as Record<string, unknown>) : {};
  return JSON.stringify([kind, normalisedPayload(kind, p, ctx)]);
}

/**
 * Comparison keys, numbered. One table may serve both runs of a diff (their keys then share ids);
 * it then also shares templates between them, when a template means the same in both runs.
 */
export class KeyTable {
  readonly keys: string[] = [];
  /** The kinds of the keys, numbered. */
  readonly kindNames: string[] = [];
  /** Per key id: its kind's number (a key's JSON starts with its kind, so it has one). */
  readonly keyKind: number[] = [];
  private readonly index = new Map<string, number>();
  private readonly kindIndex = new Map<string, number>();
  /** Template → template number, for templates that mean the same in every run this table serves. */
  readonly templates = new Map<string, number>();
  /** Per template number: its key id. */
  readonly templateKey: number[] = [];
  /** Per template number: where its events' call id starts, or NO_CALL, or PARSE (see callSpot). */
  readonly templateCall: number[] = [];
  /** Per template number: whether it is in `templates` (means the same in every run). */
  readonly templateShared: boolean[] = [];
  /** Whether backslash escapes in a template could spell one of the run ids (see sharedTemplate). */
  private readonly escapesMatter: boolean;
  constructor(readonly runIds: readonly string[]) {
    // Escapes other than \u only spell `"`, `\`, `/` and control characters.
    this.escapesMatter = runIds.some(
      (id) => /["\\/]/.test(id) || Array.from(id).some((c) => c.charCodeAt(0) < 0x20),
    );
  }
  id(key: string, kind: string): number {
    let n = this.index.get(key);
    if (n === undefined) {
      n = this.keys.length;
      this.keys.push(key);
      let k = this.kindIndex.get(kind);
      if (k === undefined) {
        k = this.kindNames.length;
        this.kindNames.push(kind);
        this.kindIndex.set(kind, k);
      }
      this.keyKind.push(k);
      this.index.set(key, n);
    }
    return n;
  }
  /**
   * Whether a template normalises alike in every run of the table: only a string that is or contains
   * a run id normalises differently per run, so a template that cannot contain one (not even
   * through an escape) does.
   */
  sharedTemplate(template: string): boolean {
    if (this.runIds.length < 2) return true;
    for (const id of this.runIds) if (template.includes(id)) return false;
    if (!template.includes('\\')) return true;
    return !this.escapesMatter && !template.includes('\\u');
  }
}

// Strict JSON string and number tokens (see the header: a text that shares a valid text's template
// must be valid too).
const STR = String.raw`"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"`;
const NUM = String.raw`-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?`;
/** `"call_id":` with a string value (a number stays as it is when normalised). */
const CALL = String.raw`([{,]"call_id":)${STR}`;
/** A key normaliseValue drops (dropped() in ./normalise, seqs aside: events keep them). */
const DROP = String.raw`([{,]"(?:at|time|timestamp|duration_ms|elapsed_ms|[^"\\]*_at)":)(?:${STR}|${NUM})`;
/** A whole string value that ISO_TIME in ./normalise matches, at most 35 characters (it needs ≤ 40). */
const ISO = String.raw`([:,[])"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:\.\d{1,9})?)?(?:Z|[+-]\d\d:?\d\d)?"(?=[,}\]])`;
const TEMPLATE = new RegExp(`${CALL}|${DROP}|${ISO}`, 'g');
const TEMPLATE_NO_TIMES = new RegExp(`${CALL}|${DROP}`, 'g');
/** What a match becomes: the key (or `:`, `,`, `[` before a time) and NUL for the value. */
const BLANK = '$1$2$3\0';
const BLANK_NO_TIMES = '$1$2\0';
/** A kind as the ledger writes it (KIND_RE); a version after it means an old payload version. */
const KIND_TOKEN = /^[a-z][a-z0-9_]*$/;

/**
 * What prepareStored leaves for preparing the other run over the same table: per event its record,
 * template and template number (-1 for a template not shared between the runs).
 */
export interface Trail {
  records: readonly string[];
  templates: string[];
  tplOf: Int32Array;
  /** Per template number: the first event with it (set for the templates this run made). */
  firstAt: number[];
}

export function newTrail(): Trail {
  return { records: [], templates: [], tplOf: new Int32Array(0), firstAt: [] };
}

/**
 * Prepares one stored run for the diff (see the header), or null when its records are not what this
 * code expects. With a table shared with the other run, templates and keys are shared too; then the
 * run prepared first can leave a trail that the second follows.
 */
export function prepareStored(
  side: StoredSide,
  table = new KeyTable([side.run_id]),
  trail?: { leave?: Trail | null; follow?: Trail | null },
): KeyedSide | null {
  const runId = side.run_id;
  const records = side.records;
  const n = records.length;
  if (side.seqs.length !== n || !table.runIds.includes(runId)) return null;
  const ctx = newContext(runId, true);
  // normString tests for the run id before it tests for a time: only when no ISO time can contain
  // the run id is every ISO time string `<time>` whatever else it holds.
  const times = /[^0-9TZ:.+\- ]/.test(runId);
  const re = times ? TEMPLATE : TEMPLATE_NO_TIMES;
  const blank = times ? BLANK : BLANK_NO_TIMES;
  const own = new Map<string, number>();
  const calls = new Map<string, number>();
  const callIds: string[] = [];
  let lastCall: string | undefined;
  let lastOrdinal = 0;
  // Following the other run's trail: a rerun has mostly the same events in the same order, so an
  // event whose record or template equals that of the other run's next event takes its template
  // number by a string compare, without hashing the template for a Map lookup (measured on the
  // bench runs: the second run's preparation from ~160 to ~30 ms of CPU). On a mismatch the Map
  // answers and the trail resumes after the event that first had that template.
  const follow = trail?.follow ?? null;
  const leave: Trail | null = trail?.leave ?? null;
  if (leave) {
    leave.records = records;
    leave.templates = [];
    leave.tplOf = new Int32Array(n);
    leave.firstAt = [];
  }
  let p = 0;
  const out: KeyedSide = {
    run_id: runId,
    seqs: Float64Array.from(side.seqs),
    kindOf: new Int32Array(n),
    kinds: table.kindNames,
    keyOf: new Int32Array(n),
    keys: table.keys,
    callOf: new Int32Array(n),
    callIds,
    final_state: side.final_state,
  };
  for (let i = 0; i < n; i++) {
    const r = records[i]!;
    let tpl: number | undefined;
    let template: string | undefined;
    if (follow && p < follow.records.length && follow.tplOf[p]! >= 0) {
      if (r === follow.records[p]) tpl = follow.tplOf[p]!;
      else {
        template = r.replace(re, blank);
        if (template === follow.templates[p]) tpl = follow.tplOf[p]!;
      }
    }
    if (tpl !== undefined) p++;
    else {
      if (r.includes('\0')) return null;
      template ??= r.replace(re, blank);
      tpl = table.templates.get(template) ?? own.get(template);
      const at = follow && tpl !== undefined ? follow.firstAt[tpl] : undefined;
      if (at !== undefined) p = at + 1;
    }
    if (tpl === undefined) {
      template ??= r.replace(re, blank);
      // A new template: its first event stands for all (the header says why).
      const sep = r.indexOf(FIELD_SEP);
      if (sep < 0) return null;
      // The kind ends the record (a template ends with it too, so all its events have that kind);
      // one with a version after it is an old payload version: for the straightforward way.
      const kind = r.slice(sep + 1);
      if (!KIND_TOKEN.test(kind)) return null;
      tpl = table.templateKey.length;
      table.templateKey.push(table.id(payloadKey(kind, JSON.parse(r.slice(0, sep)), ctx), kind));
      table.templateCall.push(callSpot(template));
      const shared = table.sharedTemplate(template);
      table.templateShared.push(shared);
      (shared ? table.templates : own).set(template, tpl);
      if (leave) leave.firstAt[tpl] = i;
    }
    if (leave) {
      leave.templates.push(template ?? r.replace(re, blank));
      leave.tplOf[i] = table.templateShared[tpl] ? tpl : -1;
    }
    const key = table.templateKey[tpl]!;
    out.keyOf[i] = key;
    out.kindOf[i] = table.keyKind[key]!;
    const spot = table.templateCall[tpl]!;
    let callId: string | undefined;
    if (spot >= 0) {
      callId = r.slice(spot + 1, r.indexOf('"', spot + 1));
      if (callId.includes('\\')) callId = topLevelCallId(r);
    } else if (spot === PARSE) callId = topLevelCallId(r);
    if (callId !== undefined) {
      // A call's events come one after another (proposed, allowed, invoked, returned): the last
      // call's ordinal saves most Map lookups.
      if (callId !== lastCall) {
        let c = calls.get(callId);
        if (c === undefined) {
          callIds.push(callId);
          calls.set(callId, (c = callIds.length));
        }
        lastCall = callId;
        lastOrdinal = c;
      }
      out.callOf[i] = lastOrdinal;
    }
  }
  return out;
}

/**
 * The top-level `call_id` of a record's payload when it is a string (what prepareSide numbers), read
 * off the text without parsing it: the one `"call_id":` key, found at depth 1. An escape that could
 * spell the key, a second call_id key (the last one counts), an escaped value or anything unexpected
 * parses the payload instead.
 */
function topLevelCallId(r: string): string | undefined {
  const at = r.indexOf(CALL_KEY);
  if (r.includes('\\u')) return parsedCallId(r);
  if (at < 0) return undefined;
  if (r.includes(CALL_KEY, at + CALL_KEY.length)) return parsedCallId(r);
  // After `{` or `,` the quote opens a key (one inside a string would have ended it).
  const before = r.charCodeAt(at - 1);
  if (before !== 0x7b && before !== 0x2c) return parsedCallId(r);
  const depth = depthAt(r, at);
  if (depth < 0) return parsedCallId(r);
  // Nested, or not a string: the payload's own call_id is not a string.
  if (depth !== 1 || r.charCodeAt(at + CALL_KEY.length) !== 0x22) return undefined;
  const end = r.indexOf('"', at + CALL_KEY.length + 1);
  const id = r.slice(at + CALL_KEY.length + 1, end);
  return end < 0 || id.includes('\\') ? parsedCallId(r) : id;
}

const CALL_KEY = '"call_id":';
/** callSpot: the template's events name no call. */
const NO_CALL = -1;
/** callSpot: each event's call id is read by topLevelCallId. */
const PARSE = -2;

/**
 * Where the top-level call id of a template's events starts (its opening quote): the text before a
 * template's first blank is the same in all its events, so when the call id is that first blank,
 * each event's starts at the same index. Else NO_CALL when the payload names none at its top level
 * (or not as a string, which would not have been blanked), else PARSE.
 */
function callSpot(template: string): number {
  if (template.includes('\\u')) return PARSE;
  const at = template.indexOf(CALL_KEY);
  if (at < 0) return NO_CALL;
  if (template.includes(CALL_KEY, at + CALL_KEY.length)) return PARSE;
  const before = template.charCodeAt(at - 1);
  if (before !== 0x7b && before !== 0x2c) return PARSE;
  const depth = depthAt(template, at);
  if (depth < 0) return PARSE;
  if (depth !== 1) return NO_CALL;
  const value = at + CALL_KEY.length;
  if (template.charCodeAt(value) !== 0) return template.charCodeAt(value) === 0x22 ? PARSE : NO_CALL;
  return template.indexOf('\0') === value ? value : PARSE;
}

/** The nesting depth at `at` (outside strings), or -1 when `at` falls inside a string. */
function depthAt(r: string, at: number): number {
  let depth = 0;
  for (let i = 0; i < at; i++) {
    const c = r.charCodeAt(i);
    if (c === 0x22) {
      // To the closing quote: one with an even number of backslashes before it.
      let q = r.indexOf('"', i + 1);
      for (;;) {
        if (q < 0) return -1;
        let b = 0;
        while (r.charCodeAt(q - 1 - b) === 0x5c) b++;
        if (b % 2 === 0) break;
        q = r.indexOf('"', q + 1);
      }
      if (q >= at) return -1;
      i = q;
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return depth;
}

function parsedCallId(r: string): string | undefined {
  const p = JSON.parse(r.slice(0, r.indexOf(FIELD_SEP))) as unknown;
  const id = p && typeof p === 'object' ? (p as Record<string, unknown>).call_id : undefined;
  return typeof id === 'string' ? id : undefined;
}

/** The key ids in `table` of another table's keys (a part of the runs prepared apart, in a worker). */
export function keyMap(table: KeyTable, other: Pick<KeyTable, 'keys' | 'kindNames' | 'keyKind'>): Int32Array {
  const map = new Int32Array(other.keys.length);
  for (let i = 0; i < other.keys.length; i++)
    map[i] = table.id(other.keys[i]!, other.kindNames[other.keyKind[i]!]!);
  return map;
}

/**
 * One run's events from two parts read apart, `first` then `rest` (seqs after first's), over the key
 * ids of `table`, which `first` uses; `restKeys` maps rest's key ids into it (see keyMap; null: rest
 * uses `table` too). Kinds and
 * call ordinals are renumbered as if the run had been read whole.
 */
export function joinSides(
  table: KeyTable,
  first: KeyedSide,
  rest: KeyedSide,
  restKeys: Int32Array | null,
): KeyedSide {
  const a = first.seqs.length;
  const n = a + rest.seqs.length;
  const seqs = new Float64Array(n);
  seqs.set(first.seqs);
  seqs.set(rest.seqs, a);
  const keyOf = new Int32Array(n);
  keyOf.set(first.keyOf);
  if (restKeys) for (let i = 0; i < rest.keyOf.length; i++) keyOf[a + i] = restKeys[rest.keyOf[i]!]!;
  else keyOf.set(rest.keyOf, a);
  const kinds = first.kinds.slice();
  const kindMap = rest.kinds.map((k) => {
    const at = kinds.indexOf(k);
    return at >= 0 ? at : kinds.push(k) - 1;
  });
  const kindOf = new Int32Array(n);
  kindOf.set(first.kindOf);
  for (let i = 0; i < rest.kindOf.length; i++) kindOf[a + i] = kindMap[rest.kindOf[i]!]!;
  const callIds = first.callIds.slice();
  const ordinal = new Map<string, number>();
  for (let c = 0; c < callIds.length; c++) ordinal.set(callIds[c]!, c + 1);
  // A call first named in `rest` is numbered after all of `first`'s, in its own order of appearance.
  const callMap = new Int32Array(rest.callIds.length + 1);
  for (let c = 0; c < rest.callIds.length; c++) {
    const id = rest.callIds[c]!;
    let o = ordinal.get(id);
    if (o === undefined) ordinal.set(id, (o = callIds.push(id)));
    callMap[c + 1] = o;
  }
  const callOf = new Int32Array(n);
  callOf.set(first.callOf);
  for (let i = 0; i < rest.callOf.length; i++) callOf[a + i] = callMap[rest.callOf[i]!]!;
  return {
    run_id: first.run_id,
    seqs,
    kindOf,
    kinds,
    keyOf,
    keys: table.keys,
    callOf,
    callIds,
    final_state: first.final_state ?? rest.final_state,
  };
}
