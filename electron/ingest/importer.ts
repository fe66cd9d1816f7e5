import type * as z from '../../shared/zod';
import type { SealSchema } from '../../shared/api/bundle';
import { createHash, type Hash } from 'node:crypto';
import { firstLine, hashRange, headOfLine, readAt } from './read-at';
import { completeLine, tailSeq } from './last-line';
import { statSync } from 'node:fs';
import type { Ledger } from '../ledger';
import { prepared } from '../ledger/statements';
import type { Finding } from '../ledger/types';
import { detectText, type Format } from './parse';
import { DEFAULT_MAX_LINE } from './lines';
import {
  Sequencer,
  emptyState,
  reviveState,
  type FileState,
  type PendingFinding,
  type Row,
} from './sequencer';
import { parsedBlocks, type ParsedBlock } from './source';
import { outlineResults, storeRedacted, type StoreArtifact } from './outline';
import { importArtifactsHome } from '../ledger/artifacts';
import { detectStreamed } from './formats/registry';
import { checkImported, Conflict, HEAD_BYTES, headSha, importsRow, isStreamed } from './imports-progress';
import { streamedBlocks } from './streamed';
import { fileRun, folderRun, sanitizeRunId } from './run-names';

/**
 * Import of one JSONL file into the ledger, incrementally and crash-safely:
 * - Progress lives in `imports` (offset, line, head_sha of the first 4 KiB read, and the carried
 *   per-run seq/hash in `state`). It is written in the same BEGIN IMMEDIATE transaction as the
 *   events it accounts for, every CHUNK events, so a crash loses nothing and repeats nothing.
 *   These commits are not fsynced (see importCommit): what they hold is in the source file.
 * - Each transaction first re-reads the stored offset: if another process has imported past where
 *   this one started, this one drops what it parsed and starts again from the stored progress, so
 *   two processes importing one file at once import each event once.
 * - A last line without its newline is not consumed (the offset stays before it): when the writer
 *   finishes the line, the next open imports it. It is reported at once as `truncated_line` (so a
 *   file whose writer died shows it), once, and that finding is deleted when the line is later
 *   completed and imported.
 * - A file that shrank below the offset, or whose first bytes changed, was rewritten rather than
 *   appended to: `file_rewritten` is reported (once per rewrite) and the old run is left as it is.
 */
/**
 * Events per import transaction. A commit runs in the thread that also hands blocks to the parse
 * workers, so while it runs they get no new work: with 10,000 rows a commit (~100 ms) outlasted the
 * 16 blocks queued for them, and a profile of `proofloop open` (200,000 events) showed the main
 * thread and both workers each idle about half the time. At 2,000 a commit is shorter than the
 * queued work; its cost is per commit ~0.2 ms (progress row, head digest), no fsync (importCommit).
 */
export const CHUNK = 2_000;
/**
 * A chunk also ends after this long, so a file of large lines (a Claude Code session of MB-sized
 * tool outputs: 10,000 rows can be 100 MB, seconds of parsing) shows its first rows, and then new
 * ones, while it is still read; at ordinary line sizes CHUNK rows take far less than this.
 */
export const CHUNK_MS = 500;
/** What a streamed format's reader sees to claim a file (StreamedReader.claims). */
const STREAMED_HEAD = 4096;

export interface ImportOptions {
  /** The key of the file in `imports` and findings: relative to the folder, absolute outside it. */
  key: string;
  maxLine?: number;
  blockSize?: number;
  onProgress?: (bytes: number, total: number) => void;
  /** Parsing source; the default parses in this thread. */
  source?: typeof parsedBlocks;
  /**
   * Import the file only if a format's adapter claims it by its first record (a `*.jsonl` found in
   * another program's folder may be anything); `events.jsonl` files are always read.
   */
  onlyIfClaimed?: boolean;
  /**
   * Stops the import between blocks (closing the folder, a signal): what was read since the last
   * commit is dropped, never committed, so the stored progress matches the stored events and the
   * next open goes on from there.
   */
  signal?: AbortSignal;
  /** Called after each commit (the service pushes the new rows to the page). */
  onCommit?: () => void;
}

/** What the seal of an unchained run records (runs.meta.seal): see SealSchema. */
export type Seal = z.infer<typeof SealSchema>;

export interface ImportResult {
  events: number;
  findings: number;
  bytes: number;
  /** The signal stopped it before the end of the file. */
  aborted?: boolean;
}

export async function importFile(ledger: Ledger, abs: string, opts: ImportOptions): Promise<ImportResult> {
  const total: ImportResult = { events: 0, findings: 0, bytes: 0 };
  // Each pass ends, or starts again from progress another process committed meanwhile.
  for (let pass = 0; pass < 1000 && !opts.signal?.aborted; pass++) {
    try {
      const r = await importPass(ledger, abs, opts);
      total.events += r.events;
      total.findings += r.findings;
      total.bytes += r.bytes;
      if (r.aborted) total.aborted = true;
      return total;
    } catch (e) {
      if (!(e instanceof Conflict)) throw e;
      const partial = (e as Conflict & { done?: ImportResult }).done;
      if (partial) {
        total.events += partial.events;
        total.findings += partial.findings;
        total.bytes += partial.bytes;
      }
    }
  }
  if (opts.signal?.aborted) total.aborted = true;
  return total;
}

async function importPass(ledger: Ledger, abs: string, opts: ImportOptions): Promise<ImportResult> {
  const db = ledger.db;
  const key = opts.key;
  const row = importsRow(db, key);
  let offset = row?.offset ?? 0;
  let lineNo = row?.line ?? 0;
  const state: FileState = row ? reviveState(row.state) : emptyState(folderRun(key));
  const done: ImportResult = { events: 0, findings: 0, bytes: 0 };

  let size: number;
  let mtime: number;
  try {
    // Sync: a reopen of a folder of 10,000 sessions stats each once and most end here; awaiting
    // the thread pool's stat for each cost more than the stat itself.
    const st = statSync(abs);
    size = st.size;
    mtime = st.mtimeMs;
  } catch {
    return done; // gone since the scan
  }

  const fileRunId = (): string | null => {
    const src = state.fileRun ?? state.lastSrc;
    return (src && state.runs[src]?.id) ?? null;
  };

  const early = row ? checkImported(ledger, abs, key, row, state, size, mtime, fileRunId) : null;
  if (early) return early;
  if (size <= offset) return done;
  state.mtime = mtime;

  // The file's format, from its first record; null: each line is detected on its own.
  if (state.unclaimed) return done;
  if (state.format === null && offset === 0 && !claimFormat(ledger, abs, key, size, state, opts)) return done;
  // A last line imported before its writer added the newline: that newline is no line of its own.
  let start = offset;
  if (state.open === offset) {
    if (readAt(abs, offset, 1)[0] === 10) start = offset + 1;
    state.open = null;
  }

  const claimed = new Set(Object.values(state.runs).map((r) => r.id));
  const exists = prepared(db, 'SELECT 1 FROM runs WHERE run_id = ?').pluck();
  const resolveRunId = (src: string): string => {
    const base = sanitizeRunId(src);
    let id = base;
    for (let n = 2; claimed.has(id) || exists.get(id) !== undefined; n++) id = `${base.slice(0, 190)}:${n}`;
    claimed.add(id);
    return id;
  };
  const seqr = new Sequencer(state, {
    file: key,
    resolveRunId,
    mode: 'import',
    defaultRun: fileRun(key),
  });
  const sealHash = createHash('sha256');
  let hashedTo = offset;
  const passFrom = offset;
  const passLine = lineNo;
  const setSeal = prepared(db, "UPDATE runs SET meta = json_set(meta, '$.seal', json(?)) WHERE run_id = ?");
  const setLinks = prepared(
    db,
    "UPDATE runs SET meta = json_set(meta, '$.stated_links', json(?)) WHERE run_id = ?",
  );
  const committedTail = state.tail ?? null;
  let tailToDrop = committedTail;

  const upsertImport = prepared(
    db,
    `INSERT INTO imports (file, size, offset, line, head_sha, state) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (file) DO UPDATE SET size = excluded.size, offset = excluded.offset, line = excluded.line,
       head_sha = excluded.head_sha, state = excluded.state`,
  );
  const dropTail = prepared(
    db,
    "DELETE FROM findings WHERE file = ? AND line = ? AND code = 'truncated_line'",
  );

  let pos = start;
  let committedState: string | null = row?.state ?? null;
  let lastCommit = performance.now();
  const commit = (): void => {
    const { rows, findings, created, linked } = seqr.drain();
    const newOffset = pos;
    const newLine = lineNo;
    const drop = tailToDrop && newOffset > tailToDrop.offset ? tailToDrop : null;
    if (state.tail && newOffset > state.tail.offset) state.tail = null;
    const head = headSha(abs, Math.min(HEAD_BYTES, newOffset));
    // ProofLoop's own runs carry their chain; every other format's run is sealed.
    const sealed = Object.values(state.runs).filter((r) => r.fmt !== 'proofloop');
    let sealJson: string | null = null;
    if (sealed.length > 0 && newOffset > passFrom) {
      hashRange(abs, hashedTo, newOffset, sealHash);
      hashedTo = newOffset;
      sealJson = JSON.stringify(sealOf(abs, key, state, passFrom, passLine, newOffset, sealHash));
    }
    const stateJson = JSON.stringify(state);
    const tx = db.transaction(() => {
      // Re-checked under the write lock: has another process imported from here meanwhile?
      const cur = importsRow(db, key);
      if ((cur?.offset ?? 0) !== offset || (cur?.state ?? null) !== committedState) throw new Conflict();
      for (const r of created) {
        if (exists.get(r.id) !== undefined) throw new Conflict(); // claimed meanwhile: start again
        ledger.createRun(r.id, {
          source: 'imported',
          format: r.fmt,
          chained: r.fmt === 'proofloop',
          origin: key,
          // The one rule for stored ids: every run's events are digested over its source's id
          // (a chained run's by its writer, a sealed one's by sequencer.ts), which source_run_id
          // names for every verifier (verify.ts digestRunIdOf).
          meta: { ...r.meta, ...(r.src === r.id ? {} : { source_run_id: r.src }) },
        });
      }
      insertRows(ledger, rows);
      for (const r of linked) setLinks.run(JSON.stringify(r.links ?? []), r.id);
      addFindings(ledger, state, findings);
      if (sealJson !== null) for (const r of sealed) setSeal.run(sealJson, r.id);
      if (drop) dropTail.run(key, drop.line);
      upsertImport.run(key, size, newOffset, newLine, head, stateJson);
    });
    importCommit(db, () => tx.immediate());
    if (drop) tailToDrop = null;
    committedState = stateJson;
    done.events += rows.length;
    done.findings += findings.length;
    done.bytes += newOffset - offset;
    offset = newOffset;
    lastCommit = performance.now();
    opts.onCommit?.();
  };

  // Large values go to artifacts beside the ledger before their rows are committed (outline.ts).
  const artifactsHome = importArtifactsHome(db.name);
  const store: StoreArtifact = storeRedacted(artifactsHome);
  const docFormat = isStreamed(state.format) ? state.format : null;
  const source = docFormat !== null ? streamedBlocks : (opts.source ?? parsedBlocks);
  try {
    for await (const b of source(abs, start, {
      afterRecord: docFormat !== null ? lineNo : undefined,
      until: size,
      fmt: state.format,
      maxLine: opts.maxLine ?? DEFAULT_MAX_LINE,
      blockSize: opts.blockSize,
      artifacts: artifactsHome,
    })) {
      // Checked before the block is applied: nothing read after the abort reaches the ledger.
      if (opts.signal?.aborted) {
        done.aborted = true;
        return done; // leaving the loop closes the source (and its workers)
      }
      applyBlock(b);
      const rows = seqr.rows.length;
      // The first block's rows are committed at once: they are what a page waits for.
      if (rows >= CHUNK || (rows > 0 && (done.events === 0 || performance.now() - lastCommit >= CHUNK_MS)))
        commit();
      opts.onProgress?.(pos, size);
    }
    if (opts.signal?.aborted) {
      done.aborted = true;
      return done;
    }
    if (
      pos !== offset ||
      seqr.findings.length > 0 ||
      seqr.created.length > 0 ||
      seqr.linked.size > 0 ||
      state.tail !== committedTail
    )
      commit();
  } catch (e) {
    if (e instanceof Conflict) Object.assign(e, { done });
    throw e;
  }
  return done;

  function applyBlock(b: ParsedBlock): void {
    if (b.t === 'lines') {
      outlineResults(b.results, store);
      seqr.pushLines(b.results, lineNo);
      lineNo += b.lines;
      pos = b.end;
    } else if (b.t === 'too_long') {
      lineNo += 1;
      seqr.tooLong(lineNo, b.bytes, tailSeq(headOfLine(abs, b.start)));
      pos = b.end;
    } else {
      // A complete last line is an event even before its writer adds the newline.
      const complete = b.buf ? completeLine(b.buf, state.format) : null;
      if (complete) {
        outlineResults([complete], store);
        seqr.pushLines([complete], lineNo);
        lineNo += 1;
        pos = b.start + b.bytes;
        state.open = pos;
        return;
      }
      // Not consumed: reported once, dropped when the line is completed later.
      if (state.tail?.offset === b.start) return;
      const line = lineNo + 1;
      const cut = b.buf
        ? `the last line (${b.bytes} bytes) has no newline: cut, or still being written`
        : `the last line has no newline and is over the bound`;
      seqr.finding(
        'truncated_line',
        line,
        tailSeq(b.buf),
        `${cut}; it is imported once it is complete`,
        null,
      );
      state.tail = { offset: b.start, line };
    }
  }
}

/**
 * The format of a file read from its start: a streamed format's (an eval log: a zip, one JSON value)
 * told by its first bytes, else its first line's. False when the file is not to be read: only a
 * file some format claims is, when `onlyIfClaimed` (remembered when its first line is whole, so the
 * file is not looked at again).
 */
function claimFormat(
  ledger: Ledger,
  abs: string,
  key: string,
  size: number,
  state: FileState,
  opts: ImportOptions,
): boolean {
  const doc = detectStreamed(readAt(abs, 0, Math.min(size, STREAMED_HEAD)));
  if (doc) state.format = doc.name;
  if (state.format === null) {
    const first = firstLine(abs, Math.min(size, opts.maxLine ?? DEFAULT_MAX_LINE));
    const fmt = first === null ? null : detectText(first);
    // seed000 claims any object with a seq or a kind: only a file named events.jsonl is read as one.
    if (opts.onlyIfClaimed && (fmt === null || fmt === 'seed000')) {
      // Remembered when its first line is whole, so the file is not looked at again.
      if (first !== null && readAt(abs, Buffer.byteLength(first), 1)[0] === 10) {
        ledger.db
          .prepare(
            `INSERT INTO imports (file, size, offset, line, head_sha, state) VALUES (?, ?, 0, 0, NULL, ?)
           ON CONFLICT (file) DO NOTHING`,
          )
          .run(key, size, JSON.stringify({ ...state, unclaimed: true }));
      }
      return false;
    }
    state.format = fmt;
  }
  return true;
}

/**
 * The seal after this pass: earlier passes' ranges, and this one's [from, to) with its sha256.
 * Past 64 ranges (a file tailed for long) they are folded into one range from byte 0.
 */
function sealOf(
  abs: string,
  key: string,
  state: FileState,
  from: number,
  line: number,
  to: number,
  h: Hash,
): Seal {
  const old = state.seal ?? [];
  const keep = old.map((r, i) => ({ r, line: state.sealLines?.[i] ?? 0 })).filter((x) => x.r.from !== from);
  let ranges = [...keep.map((x) => x.r), { from, to, sha256: h.copy().digest('hex') }];
  let lines = [...keep.map((x) => x.line), line];
  if (ranges.length > 64) {
    const whole = createHash('sha256');
    hashRange(abs, 0, to, whole);
    ranges = [{ from: 0, to, sha256: whole.digest('hex') }];
    lines = [0];
  }
  state.seal = ranges;
  state.sealLines = lines;
  return { file: key, ranges };
}

/**
 * Runs one import transaction with synchronous=NORMAL, so its commit writes the WAL without an
 * fsync. Safe because an import is repeatable: WAL mode keeps the database consistent through any
 * crash, and the progress row (offset, carried chain state) commits in the same transaction as the
 * events it accounts for, so a commit lost to a power cut is one the next open reads again from
 * the source file. Appends are the only copy of what they hold and stay FULL: the setting is put
 * back before anything else can use the connection (FULL, 2), and an append's fsync of the WAL makes every
 * import commit before it durable too.
 */
function importCommit(db: Ledger['db'], run: () => void): void {
  // Prepared once per connection: db.pragma() prepares each time, three times a commit, which a
  // first open of 10,000 small sessions (a commit each) felt (~0.1 ms a commit in profiles).
  const was = prepared(db, 'PRAGMA synchronous').pluck().get() as number;
  prepared(db, 'PRAGMA synchronous = NORMAL').run();
  try {
    run();
  } finally {
    prepared(db, `PRAGMA synchronous = ${was}`).run();
  }
}

/** Rows of several runs, in file order: each run's events go in one insertImported call. */
function insertRows(ledger: Ledger, rows: readonly Row[]): void {
  const byRun = new Map<string, Row[]>();
  for (const r of rows) {
    let list = byRun.get(r.run_id);
    if (!list) byRun.set(r.run_id, (list = []));
    list.push(r);
  }
  for (const [id, list] of byRun) ledger.insertImported(id, list);
}

function addFindings(ledger: Ledger, state: FileState, findings: readonly PendingFinding[]): void {
  if (findings.length === 0) return;
  const byRun = new Map<string | null, Finding[]>();
  for (const { src, ...f } of findings) {
    const id = (src && state.runs[src]?.id) ?? null;
    let list = byRun.get(id);
    if (!list) byRun.set(id, (list = []));
    list.push(f);
  }
  for (const [id, list] of byRun) ledger.addFindings(id, list);
}

export type { Format };
