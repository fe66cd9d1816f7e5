import { ZERO_HASH, envelopeFields, jsonLineAround, type LedgerEvent } from '../../shared/protocol';
import { evolve, initialState, type FoldEvent, type RunState } from '../../shared/state';
import { SHARE_DETECTORS, scanForSecrets, type Redactor } from '../../shared/redact';
import { digestEvent } from '../crypto';
import { openDatabase, type Db } from '../ledger/open';
import { ID_RANGE, idRange, idsBefore, LAST_HASH_SQL } from '../ledger/event-ids';
import type { RedactionProfile } from './format';
import { digestRunIdOf, statedLinksOf } from '../ledger/verify';
import type { RunRow } from '../ledger/types';

/*
 * The exporter's per-chunk work, shared by its worker threads (export-worker.ts) and its in-thread
 * path, so both give the same bytes.
 */

/**
 * The bundle form of one stored event: the payload through the export redactor; when it changed,
 * the line carries the original digest so `hash = sha256(prev + digest)` still links.
 */
export function redactEvent(e: LedgerEvent, redactor: Redactor): { line: LedgerEvent; changed: boolean } {
  const r = redactor.redactValue(e.payload, { path: ['payload'] });
  // An event the ledger already holds redacted (a run opened from a bundle) keeps its carried digest.
  const base = envelopeFields(e);
  if (!r.changed) return { line: base, changed: e.digest !== undefined };
  base.payload = r.value;
  base.digest = e.digest ?? digestEvent(e.seq, e.run_id, e.kind, e.v, e.at, e.payload);
  return { line: base, changed: true };
}

/** A stored event and its payload's JSON text as stored (canonical JSON, the text its digest covers). */
export interface StoredItem {
  e: LedgerEvent;
  payloadJson: string;
}

type Row = [number, string, number, string, string, Buffer, Buffer | null];

/**
 * Reads ranges of a run's events from its own read-only connection, as Ledger.iterate gives them
 * but with the payload text as stored, rows as arrays (the ledger's own readRange and prevHash).
 */
export function eventReader(dbFile: string): {
  read(runId: string, from: number, to: number): Generator<StoredItem>;
  close(): void;
} {
  let db: Db | null = null;
  let q: ReturnType<typeof prepare> | null = null;
  const prepare = (d: Db) => ({
    run: d.prepare('SELECT run_no, run_id, meta FROM runs WHERE run_id = ?'),
    range: d
      .prepare(`SELECT seq, kind, v, at, payload, hash, digest FROM events WHERE ${ID_RANGE} ORDER BY id`)
      .raw(true),
    prevHash: d.prepare(LAST_HASH_SQL).pluck(),
  });
  return {
    *read(runId, from, to) {
      db ??= openDatabase(dbFile, { readonly: true });
      q ??= prepare(db);
      const row = q.run.get(runId) as { run_no: number; run_id: string; meta: string } | undefined;
      if (row === undefined) return;
      const runNo = row.run_no;
      const meta = JSON.parse(row.meta) as RunRow['meta'];
      // A run stored under another id than its source's: its lines carry the id its digests cover.
      const lineRunId = digestRunIdOf({ run_id: row.run_id, meta });
      // An event after a source line that is no event links to the hash that line states, as its
      // source line does (the manifest's stated_links carry them).
      const stated = new Map(statedLinksOf({ meta }).map((l) => [l.seq, l.hash]));
      const before = q.prevHash.get(...idsBefore(runNo, from)) as Buffer | undefined;
      let prev = before ? before.toString('hex') : ZERO_HASH;
      for (const [seq, kind, v, at, payloadJson, hash, digest] of q.range.all(
        ...idRange(runNo, from, to),
      ) as Row[]) {
        prev = stated.get(seq - 1) ?? prev;
        const e: LedgerEvent = {
          seq,
          run_id: lineRunId,
          kind,
          v,
          at,
          payload: JSON.parse(payloadJson) as Record<string, unknown>,
          prev,
          hash: hash.toString('hex'),
        };
        if (digest) e.digest = digest.toString('hex');
        prev = e.hash;
        yield { e, payloadJson };
      }
    },
    close() {
      db?.close();
      db = null;
      q = null;
    },
  };
}

/** The bundle lines of a run of consecutive stored events. */
export interface LineChunk {
  /** The lines as UTF-8, each ending in a newline; a touched event's line is left empty. */
  bytes: Uint8Array;
  count: number;
  /**
   * Events the profile changes (or that already carry a digest), with the byte offset of their
   * empty line. The exporter redacts these itself, in order, with the bundle's one redactor: their
   * placeholders are numbered across the bundle.
   */
  touched: { offset: number; event: LedgerEvent }[];
  first: { seq: number; prev: string; hash: string } | null;
  last: { seq: number; hash: string } | null;
}

/**
 * Lines of the events that the profile leaves alone, and the others apart. Whether the profile
 * changes an event depends only on the event (and the rules), never on what the redactor saw
 * before: its memory only numbers placeholders. So any redactor of the same profile and rules can
 * tell, and a worker's own redactor sorts events exactly as the bundle's would.
 */
export function lineChunk(items: Iterable<StoredItem>, redactor: Redactor): LineChunk {
  const lines: string[] = [];
  const touchedAt: number[] = [];
  const touched: LedgerEvent[] = [];
  let first: LineChunk['first'] = null;
  let last: LineChunk['last'] = null;
  for (const { e, payloadJson } of items) {
    const r = redactor.redactValue(e.payload, { path: ['payload'] });
    if (r.changed || r.hits > 0 || e.digest !== undefined) {
      touchedAt.push(lines.length);
      touched.push(e);
      lines.push('');
    } else {
      // The stored canonical payload text, the very text its digest covers (verify-bundle's fast path).
      lines.push(
        jsonLineAround(e.seq, JSON.stringify(e.run_id), e.kind, e.v, e.at, payloadJson, e.prev, e.hash),
      );
    }
    first ??= { seq: e.seq, prev: e.prev, hash: e.hash };
    last = { seq: e.seq, hash: e.hash };
  }
  // Placeholders this redactor numbered are never used: forgetting them bounds its memory.
  redactor.forget();
  const text = lines.length ? lines.join('\n') + '\n' : '';
  // An ArrayBuffer of its own (not Buffer's shared pool): a worker hands it over (transfer).
  const bytes = Buffer.from(new ArrayBuffer(Buffer.byteLength(text, 'utf8')));
  bytes.write(text, 'utf8');
  // Byte offsets of the empty lines, found in order (one line's bytes end where its newline is).
  const out: LineChunk['touched'] = [];
  let line = 0;
  let offset = 0;
  for (let k = 0; k < touched.length; k++) {
    while (line < touchedAt[k]!) {
      offset = bytes.indexOf(10, offset) + 1;
      line++;
    }
    out.push({ offset, event: touched[k]! });
  }
  return { bytes, count: lines.length, touched: out, first, last };
}

/**
 * The chunk's final bytes, in shared memory (the scan and fold workers read them without a copy
 * per message): its lines with the touched events' lines (`texts`, in order) put in their places.
 */
export function finishChunk(c: LineChunk, texts: readonly string[]): Buffer {
  const src = Buffer.from(c.bytes.buffer, c.bytes.byteOffset, c.bytes.byteLength);
  let size = src.length;
  for (const t of texts) size += Buffer.byteLength(t, 'utf8');
  const out = Buffer.from(new SharedArrayBuffer(size));
  let from = 0;
  let to = 0;
  c.touched.forEach(({ offset }, k) => {
    to += src.copy(out, to, from, offset);
    to += out.write(texts[k]!, to, 'utf8');
    from = offset;
  });
  src.copy(out, to, from);
  return out;
}

/** The rules of every detector (the share profile's own ones too) that fire in a text. */
export function firedRules(text: string, profile: RedactionProfile): string[] {
  const rules = new Set(scanForSecrets(text).map((f) => f.rule));
  if (profile === 'share') for (const f of scanForSecrets(text, SHARE_DETECTORS)) rules.add(f.rule);
  return [...rules];
}

/**
 * The state after one more finished chunk of events.jsonl (complete lines). Important: it folds the
 * redacted lines as they go into the bundle, so state.json holds nothing they don't.
 */
export function foldChunk(state: RunState | undefined, runId: string, text: string): RunState {
  let s = state ?? initialState(runId);
  let start = 0;
  while (start < text.length) {
    const nl = text.indexOf('\n', start);
    const end = nl < 0 ? text.length : nl;
    if (end > start) s = evolve(s, JSON.parse(text.slice(start, end)) as FoldEvent);
    start = end + 1;
  }
  return s;
}

/** The text of UTF-8 bytes (also in shared memory). */
export function utf8(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}
