import { createHash } from 'node:crypto';
import { closeSync, readdirSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Ledger } from '../ledger';
import { prepared } from '../ledger/statements';
import { sha256Bytes } from '../crypto';
import { depthOverText, MAX_DEPTH } from '../../shared/protocol';
import {
  detectDocument,
  DOCUMENT_FORMATS,
  sniffDocument,
  type DocPart,
  type DocumentAdapter,
} from './formats/registry';
import { excerptOf, parseMapped, roundedIntegers } from './parse';
import { openRegular, readAt } from './read-at';
import { Sequencer, emptyState, type FileState } from './sequencer';
import type { LineResult } from './block';
import { outlineResults, storeRedacted } from './outline';
import { importArtifactsHome } from '../ledger/artifacts';
import type { ImportResult, Seal } from './importer';
import { isObj } from '../../shared/json-read.js';
import { endsRun, statusPart } from './formats/openhands';

/**
 * Import of whole-file sources (a SWE-agent `.traj`, an ATIF `trajectory.json`, an OpenHands
 * event-stream `.json`) and of conversation folders (OpenHands V1 `<id>/base_state.json` +
 * `events/event-<n>-<id>.json`; V0's `events/<n>.json`).
 *
 * A document is not appended to like JSONL: its program rewrites it whole (SWE-agent after every
 * step). So it is read whole, bounded by MAX_DOCUMENT_BYTES, split by its adapter into parts, and
 * each part goes the way a line goes (parse.ts: named, checked, redacted, digested; the sequencer:
 * numbered, chained, sealed). A document that changes after its import is reported once as
 * `file_rewritten` and its run kept as it was imported. A conversation folder grows by new files:
 * each open imports the event files it has not seen, in the order of their numbers.
 *
 * Each part's events carry its JSON pointer (or file name) in `source.ids.pointer`, and `line` is
 * the part's number in the document (1-based), so a finding names both.
 */

/** Documents larger than this are a finding and are not read (a whole-file parse holds them). */
export const MAX_DOCUMENT_BYTES = 256 * 1024 * 1024;
const HEAD = 4096;

/** A source the scan found: a `.json` / `.traj` file, or a conversation folder. */
export interface DocumentSource {
  abs: string;
  dir: boolean;
}

interface Row {
  size: number;
  offset: number;
  state: string;
}

interface DocState extends FileState {
  /** Event files of a conversation folder already imported (their names, in order: the count). */
  files?: number;
  /** The seal so far of a conversation folder: the bytes of its files, in import order. */
  bytes?: number;
  /** The event file (`events/<name>`) of each seal range (a folder sealed per file; before, a range per import). */
  sealFiles?: string[];
  /** Parts of the folder numbered so far (its files, base_state.json's and its status events). */
  lines?: number;
  /** base_state.json's size and modification time when last read ("<size>:<mtimeMs>"). */
  baseMark?: string | null;
  /** Its execution_status then. */
  baseStatus?: string | null;
}

const V1_EVENT = /^event-(\d+)-[^/\\]+\.json$/;
const V0_EVENT = /^(\d+)\.json$/;

/** The event files of a conversation folder's `events/`, in the order of their numbers. */
export function eventFiles(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(path.join(dir, 'events'));
  } catch {
    return [];
  }
  const num = (n: string): number => Number((V1_EVENT.exec(n) ?? V0_EVENT.exec(n))?.[1] ?? NaN);
  return names
    .filter((n) => V1_EVENT.test(n) || V0_EVENT.test(n))
    .sort((a, b) => num(a) - num(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/** Whether a folder is a conversation folder (an `events/` of numbered event files). */
export function isConversationDir(dir: string): boolean {
  return eventFiles(dir).length > 0;
}

/** The run a document is about when its content names none: its file's name, or its folder's. */
export function documentRun(key: string, dir: boolean): string {
  const parts = key.split(/[\\/]/).filter(Boolean);
  const name = parts.at(-1) ?? key;
  if (dir) return name;
  const base = name.replace(/\.(traj|json)$/i, '');
  // Harbor writes <trial>/agent/trajectory.json: the trial's folder names the run.
  if (base === 'trajectory') {
    const up = parts
      .slice(0, -1)
      .reverse()
      .find((p) => p !== 'agent');
    return up ?? base;
  }
  return base || name;
}

function headOf(abs: string): string {
  return readAt(abs, 0, HEAD).toString('utf8');
}

/** The whole file, read through the same guarded open as every import read (no links, no FIFOs). */
function readWhole(abs: string, size: number): Buffer {
  const fd = openRegular(abs);
  try {
    const buf = Buffer.allocUnsafe(size);
    let n = 0;
    while (n < size) {
      const r = readSync(fd, buf, n, size - n, n);
      if (r === 0) break;
      n += r;
    }
    return buf.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

type Parsed =
  | { ok: true; doc: unknown; text: string }
  | { ok: false; code: 'not_utf8' | 'broken_json' | 'invalid_event'; message: string };

/** A document's bytes to its value, or why not (bounded depth first: the parse and the redactor walk it). */
export function parseDocument(buf: Buffer): Parsed {
  let text: string;
  try {
    text = strictUtf8.decode(buf);
  } catch (e) {
    return { ok: false, code: 'not_utf8', message: `not valid UTF-8 (${(e as Error).message})` };
  }
  if (depthOverText(text))
    return {
      ok: false,
      code: 'invalid_event',
      message: `nests objects or arrays deeper than ${MAX_DEPTH} levels`,
    };
  try {
    return { ok: true, doc: JSON.parse(text) as unknown, text };
  } catch (e) {
    return { ok: false, code: 'broken_json', message: `not JSON: ${(e as Error).message}` };
  }
}

/** The parts of a document as the sequencer takes them: one LineResult a part. */
export function mapParts(adapter: DocumentAdapter, parts: readonly DocPart[]): LineResult[] {
  return parts.map((part) => {
    let mapped: ReturnType<DocumentAdapter['mapPart']>;
    try {
      mapped = adapter.mapPart(part);
    } catch (e) {
      mapped = { error: `the ${adapter.label} reader failed on this part: ${(e as Error).message}` };
    }
    if (!('error' in mapped)) {
      for (const m of mapped) {
        m.source = { ...m.source, ids: { ...m.source?.ids, pointer: part.pointer || '/' } };
        if (part.run !== undefined && m.run === undefined) m.run = part.run;
      }
    }
    const text = JSON.stringify(part.record) ?? 'null';
    const r = parseMapped(adapter.name, adapter.label, mapped, part.record, text);
    if (r.t === 'bad') r.message = `${part.pointer || '/'}: ${r.message}`;
    return r;
  });
}

/**
 * Imports one document or conversation folder. `onlyIfClaimed`: a file no document format claims
 * is remembered as not claimed (found by a folder scan, it may be anything); named directly, it is
 * a finding.
 */
export async function importDocument(
  ledger: Ledger,
  src: DocumentSource,
  key: string,
  opts: { onlyIfClaimed?: boolean; onCommit?: () => void } = {},
): Promise<ImportResult> {
  const db = ledger.db;
  const row = prepared(db, 'SELECT size, offset, state FROM imports WHERE file = ?').get(key) as
    Row | undefined;
  const state: DocState = row ? (JSON.parse(row.state) as DocState) : emptyState(null);
  const done: ImportResult = { events: 0, findings: 0, bytes: 0 };
  const seqr = new Sequencer(state, {
    file: key,
    resolveRunId: resolver(ledger, state),
    mode: 'import',
    defaultRun: documentRun(key, src.dir),
  });
  const remember = (size: number, offset: number, line: number, head: string | null): void => {
    prepared(
      db,
      `INSERT INTO imports (file, size, offset, line, head_sha, state) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (file) DO UPDATE SET size = excluded.size, offset = excluded.offset, line = excluded.line,
         head_sha = excluded.head_sha, state = excluded.state`,
    ).run(key, size, offset, line, head, JSON.stringify(state));
  };

  if (src.dir) return importFolder();

  const size = statSync(src.abs).size;
  if (row && row.size === size) return done; // unchanged (or not claimed) since it was looked at
  if (row && state.format !== null) {
    // Rewritten since its import: reported once for this size, the run kept as imported.
    if (state.rewritten?.size === size) return done;
    state.rewritten = { size, head: '' };
    commit([], () => {
      ledger.addFindings(runOf(), [
        {
          code: 'file_rewritten',
          file: key,
          line: null,
          seq: null,
          message: `the document changed since it was imported (now ${size} bytes, was ${row.size}): it is read whole, so the imported run is kept as it was`,
        },
      ]);
      done.findings += 1;
      // `size` stays the imported one: a later change to yet another size is reported again.
      prepared(db, 'UPDATE imports SET state = ? WHERE file = ?').run(JSON.stringify(state), key);
    });
    return done;
  }
  const unclaimed = (): ImportResult => {
    state.unclaimed = true;
    remember(size, size, 0, null);
    return done;
  };
  if (opts.onlyIfClaimed && !sniffDocument(headOf(src.abs))) return unclaimed();
  if (size > MAX_DOCUMENT_BYTES) {
    fileFinding(
      'import_failed',
      `${key} is ${size} bytes, over the ${MAX_DOCUMENT_BYTES / 2 ** 20} MiB bound of a document read whole: not read`,
    );
    state.unclaimed = true;
    remember(size, size, 0, null);
    return done;
  }
  const buf = readWhole(src.abs, size);
  const parsed = parseDocument(buf);
  if (!parsed.ok) {
    if (opts.onlyIfClaimed) return unclaimed();
    fileFinding(parsed.code, `${key}: ${parsed.message}`);
    return done;
  }
  const adapter = detectDocument(parsed.doc);
  if (!adapter) {
    if (opts.onlyIfClaimed) return unclaimed();
    fileFinding(
      'import_failed',
      `${key}: no format claims this document (${DOCUMENT_FORMATS.map((f) => f.label).join(', ')})`,
    );
    return done;
  }
  state.format = adapter.name;
  const runSrc = adapter.runId?.(parsed.doc) ?? null;
  const parts = adapter.parts(parsed.doc);
  if (runSrc) for (const p of parts) p.run ??= runSrc;
  const results = mapParts(adapter, parts);
  const rounded = roundedIntegers(parsed.text);
  const store = storeRedacted(importArtifactsHome(db.name));
  outlineResults(results, store);
  seqr.pushLines(results, 0);
  if (rounded !== null)
    seqr.finding(
      'number_rounded',
      null,
      null,
      `integers beyond 2^53 cannot be held exactly by a JSON number and are stored rounded: ${rounded.slice(0, 3).join(', ')}`,
      null,
    );
  const digest = sha256Bytes(buf);
  const seal: Seal = { file: key, ranges: [{ from: 0, to: buf.length, sha256: digest }] };
  state.seal = seal.ranges;
  commit([seal], () => remember(size, size, parts.length, digest));
  return done;

  function importFolder(): ImportResult {
    const files = eventFiles(src.abs);
    const seen = state.files ?? 0;
    const base = path.join(src.abs, 'base_state.json');
    const baseNow = statSync(base, { throwIfNoEntry: false });
    // OpenHands rewrites base_state.json as a conversation goes on (its execution_status, its
    // stats): looked at again whenever it changes, not only when an event file is added.
    const baseMark = baseNow ? `${baseNow.size}:${baseNow.mtimeMs}` : null;
    if (row && files.length <= seen && baseMark === (state.baseMark ?? null)) return done;
    const adapter = DOCUMENT_FORMATS.find((f) => f.name === 'openhands')!;
    state.format = adapter.name;
    const results: LineResult[] = [];
    // The seal holds each event file's bytes, one range per file (sealFiles names them), so a
    // change is named by its file. Not base_state.json's: it is rewritten as the conversation
    // goes on, and its content when first read is the run_started event. A folder sealed before
    // (no sealFiles) goes on as it was sealed: a range per import of its new files' bytes.
    const perFile = seen === 0 || state.sealFiles !== undefined;
    const seal: Seal['ranges'] = [...(state.seal ?? [])];
    const sealFiles = perFile ? [...(state.sealFiles ?? [])] : undefined;
    const pass = createHash('sha256');
    let from = state.bytes ?? 0;
    const start = from;
    let runSrc: string | null = seen === 0 ? null : state.lastSrc;
    const read = (abs: string, name: string, event: boolean): { doc: unknown } | LineResult => {
      let buf: Buffer;
      try {
        const size = statSync(abs).size;
        if (size > MAX_DOCUMENT_BYTES) return bad(`${name}: ${size} bytes, over the bound: not read`);
        buf = readWhole(abs, size);
      } catch (e) {
        return bad(`${name}: ${(e as Error).message}`);
      }
      if (event) {
        if (sealFiles) {
          seal.push({ from, to: from + buf.length, sha256: sha256Bytes(buf) });
          sealFiles.push(name);
        } else pass.update(buf);
        from += buf.length;
      }
      const p = parseDocument(buf);
      return p.ok ? { doc: p.doc } : bad(`${name}: ${p.message}`, buf);
    };
    const push = (r: DocPart[] | LineResult): void => {
      if (!Array.isArray(r)) {
        results.push(r);
        return;
      }
      if (runSrc) for (const p of r) p.run ??= runSrc;
      results.push(...mapParts(adapter, r));
    };
    // base_state.json: the run's start when first read; at every read, its execution_status.
    let status: string | null = null;
    if (baseNow) {
      const b = read(base, 'base_state.json', false);
      if (!('doc' in b)) {
        if (seen === 0) push(b);
      } else {
        status = isObj(b.doc) && typeof b.doc.execution_status === 'string' ? b.doc.execution_status : null;
        if (seen === 0) {
          runSrc = adapter.runId?.(b.doc) ?? null;
          push([
            {
              record: isObj(b.doc) ? b.doc : { value: b.doc },
              type: 'base_state',
              pointer: 'base_state.json',
            },
          ]);
        }
      }
    }
    // What this ledger last recorded of it: an end, then events or a status that go on, resume it.
    const added = files.slice(seen);
    let ended = endsRun(state.baseStatus ?? null);
    if (ended && status !== null && (added.length > 0 || !endsRun(status))) {
      push([statusPart(status, (runSrc && state.runs[runSrc]?.seq) || 0)]);
      ended = false;
    }
    for (const name of added) {
      const r = read(path.join(src.abs, 'events', name), `events/${name}`, true);
      push(
        'doc' in r ? adapter.parts(r.doc).map((x) => ({ ...x, pointer: `events/${name}${x.pointer}` })) : r,
      );
    }
    if (status !== null && endsRun(status) && !ended) push([statusPart(status)]);
    // Values over 64 KiB move to artifacts, as a whole document's and a JSONL line's do.
    outlineResults(results, storeRedacted(importArtifactsHome(db.name)));
    if (!sealFiles && from > start) seal.push({ from: start, to: from, sha256: pass.digest('hex') });
    // Numbered on from the parts before (a state from before `lines`: base_state.json's and the files').
    const before = state.lines ?? (seen === 0 ? 0 : seen + (baseNow ? 1 : 0));
    state.files = files.length;
    state.bytes = from;
    state.seal = seal;
    if (sealFiles) state.sealFiles = sealFiles;
    state.lines = before + results.length;
    state.baseMark = baseMark;
    if (status !== null) state.baseStatus = status;
    seqr.pushLines(results, before);
    const s: Seal = { file: key, ranges: seal };
    commit([s], () => remember(files.length, files.length, state.lines!, null));
    return done;
  }

  function bad(message: string, buf?: Buffer): LineResult {
    return {
      t: 'bad',
      code: 'invalid_event',
      message,
      seq: null,
      src: null,
      excerpt: buf ? excerptOf(buf.toString('utf8')) : null,
    };
  }

  function runOf(): string | null {
    const src = state.lastSrc;
    return (src && state.runs[src]?.id) ?? null;
  }

  function fileFinding(
    code: 'import_failed' | 'not_utf8' | 'broken_json' | 'invalid_event',
    message: string,
  ): void {
    const msg = message.length > 2000 ? `${message.slice(0, 2000)}…` : message;
    const seenAlready = db
      .prepare('SELECT 1 FROM findings WHERE file = ? AND code = ? AND message = ? LIMIT 1')
      .get(key, code, msg);
    if (seenAlready) return;
    ledger.addFindings(null, [{ code, file: key, line: null, seq: null, message: msg }]);
    done.findings += 1;
  }

  /** One transaction: the runs first seen, their events and findings, the seal, the progress row. */
  function commit(seals: Seal[], more: () => void): void {
    const { rows, findings, created } = seqr.drain();
    const setSeal = prepared(db, "UPDATE runs SET meta = json_set(meta, '$.seal', json(?)) WHERE run_id = ?");
    const tx = db.transaction(() => {
      for (const r of created)
        ledger.createRun(r.id, {
          source: 'imported',
          format: r.fmt,
          chained: false,
          origin: key,
          // The one rule for stored ids (sequencer.ts): its events are digested over the source's
          // id, which source_run_id names for every verifier.
          meta: r.src === r.id ? {} : { source_run_id: r.src },
        });
      const byRun = new Map<string, typeof rows>();
      for (const r of rows) {
        const list = byRun.get(r.run_id) ?? [];
        list.push(r);
        byRun.set(r.run_id, list);
      }
      for (const [id, list] of byRun) ledger.insertImported(id, list);
      const byFindingRun = new Map<string | null, typeof findings>();
      for (const f of findings) {
        const id = (f.src && state.runs[f.src]?.id) ?? null;
        const list = byFindingRun.get(id) ?? [];
        list.push(f);
        byFindingRun.set(id, list);
      }
      for (const [id, list] of byFindingRun)
        ledger.addFindings(
          id,
          list.map(({ src: _src, ...f }) => f),
        );
      // Every run of the document carries its seal (a document of several runs: ATIF subagents).
      for (const s of seals) for (const r of Object.values(state.runs)) setSeal.run(JSON.stringify(s), r.id);
      more();
    });
    tx.immediate();
    done.events += rows.length;
    done.findings += findings.length;
    opts.onCommit?.();
  }
}

/** Ledger run ids for the runs of a document: its own id, or `<id>:2`… when that is taken. */
function resolver(ledger: Ledger, state: FileState): (src: string) => string {
  const claimed = new Set(Object.values(state.runs).map((r) => r.id));
  const exists = prepared(ledger.db, 'SELECT 1 FROM runs WHERE run_id = ?').pluck();
  return (src) => {
    let base = src.replace(/[^A-Za-z0-9._:-]/g, '_').slice(0, 180);
    if (!/^[A-Za-z0-9]/.test(base)) base = `r${base}`;
    let id = base;
    for (let n = 2; claimed.has(id) || exists.get(id) !== undefined; n++) id = `${base.slice(0, 190)}:${n}`;
    claimed.add(id);
    return id;
  };
}
