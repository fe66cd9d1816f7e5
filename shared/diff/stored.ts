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
 * runs once per distinct template (about half the events of the bench runs, fewer for a rerun read
 * together with its source run), and every other event costs a regex pass and a Map lookup.
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
  /** The kind of each key (the first item of its JSON). */
  readonly kinds: string[] = [];
  private readonly index = new Map<string, number>();
  /** Template → key id, for templates that mean the same in every run this table serves. */
  readonly templates = new Map<string, number>();
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
      this.kinds.push(kind);
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
const BLANK = '$1$2$3\0';
/** A kind as the ledger writes it (KIND_RE); a version after it means an old payload version. */
const KIND_TOKEN = /^[a-z][a-z0-9_]*$/;
const CALL_PREFIX = '{"call_id":"';

/**
 * Prepares one stored run for the diff (see the header), or null when its records are not what this
 * code expects. With a table shared with the other run, templates and keys are shared too.
 */
export function prepareStored(side: StoredSide, table = new KeyTable([side.run_id])): KeyedSide | null {
  const runId = side.run_id;
  const records = side.records;
  const n = records.length;
  if (side.seqs.length !== n || !table.runIds.includes(runId)) return null;
  const ctx = newContext(runId, true);
  // normString tests for the run id before it tests for a time: only when no ISO time can contain
  // the run id is every ISO time string `<time>` whatever else it holds.
  const re = /[^0-9TZ:.+\- ]/.test(runId) ? TEMPLATE : TEMPLATE_NO_TIMES;
  const own = new Map<string, number>();
  const kindIds = new Map<string, number>();
  const kinds: string[] = [];
  /**
   * Key id → this run's kind number + 1 (a key starts with its kind, so one key has one kind); 0 for
   * none yet. Typed and grown by hand: a plain array written at ids out of order (keys first met in
   * the other run) turned sparse, measured ~30 ms per 100,000 events.
   */
  let kindOfKey = new Int32Array(1024);
  const kindNo = (kind: string): number => {
    let k = kindIds.get(kind);
    if (k === undefined) {
      k = kinds.length;
      kinds.push(kind);
      kindIds.set(kind, k);
    }
    return k;
  };
  const calls = new Map<string, number>();
  const callIds: string[] = [];
  const out: KeyedSide = {
    run_id: runId,
    seqs: Float64Array.from(side.seqs),
    kindOf: new Int32Array(n),
    kinds,
    keyOf: new Int32Array(n),
    keys: table.keys,
    callOf: new Int32Array(n),
    callIds,
    final_state: side.final_state,
  };
  for (let i = 0; i < n; i++) {
    const r = records[i]!;
    if (r.includes('\0')) return null;
    const template = r.replace(re, BLANK);
    let key = table.templates.get(template) ?? own.get(template);
    if (key === undefined) {
      // A new template: its first event stands for all (the header says why).
      const sep = r.indexOf(FIELD_SEP);
      if (sep < 0) return null;
      // The kind ends the record (a template ends with it too, so all its events have that kind);
      // one with a version after it is an old payload version: for the straightforward way.
      const kind = r.slice(sep + 1);
      if (!KIND_TOKEN.test(kind)) return null;
      key = table.id(payloadKey(kind, JSON.parse(r.slice(0, sep)), ctx), kind);
      (table.sharedTemplate(template) ? table.templates : own).set(template, key);
    }
    out.keyOf[i] = key;
    if (key >= kindOfKey.length) {
      const grown = new Int32Array(Math.max(key + 1, kindOfKey.length * 2));
      grown.set(kindOfKey);
      kindOfKey = grown;
    }
    let kind = kindOfKey[key]! - 1;
    if (kind < 0) {
      kind = kindNo(table.kinds[key]!);
      kindOfKey[key] = kind + 1;
    }
    out.kindOf[i] = kind;
    const callId = topLevelCallId(r);
    if (callId !== undefined) {
      let c = calls.get(callId);
      if (c === undefined) {
        callIds.push(callId);
        calls.set(callId, (c = callIds.length));
      }
      out.callOf[i] = c;
    }
  }
  return out;
}

/**
 * The top-level `call_id` of a record's payload when it is a string (what prepareSide numbers).
 * JSON.stringify writes the keys in the order they were set, and the ledger's writers set call_id
 * first, so the fast case reads it off the start of the text; an escape that could spell a key or a
 * second call_id key (the last one counts) parses.
 */
function topLevelCallId(r: string): string | undefined {
  if (r.startsWith(CALL_PREFIX)) {
    const end = r.indexOf('"', CALL_PREFIX.length);
    const id = r.slice(CALL_PREFIX.length, end);
    if (!id.includes('\\') && !r.includes('"call_id"', end) && !r.includes('\\u')) return id;
  } else if (!r.includes('"call_id"') && !r.includes('\\u')) return undefined;
  const p = JSON.parse(r.slice(0, r.indexOf(FIELD_SEP))) as unknown;
  const id = p && typeof p === 'object' ? (p as Record<string, unknown>).call_id : undefined;
  return typeof id === 'string' ? id : undefined;
}

/** The key ids in `table` of another table's keys (a part of the runs prepared apart, in a worker). */
export function keyMap(table: KeyTable, other: Pick<KeyTable, 'keys' | 'kinds'>): Int32Array {
  const map = new Int32Array(other.keys.length);
  for (let i = 0; i < other.keys.length; i++) map[i] = table.id(other.keys[i]!, other.kinds[i]!);
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
