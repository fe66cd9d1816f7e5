import type { KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ZERO_HASH, type LedgerEvent } from '../../shared/protocol';
import { ProofloopError } from '../../shared/result';
import { CARRIED, LINK_OK, PREV_OK, RUN_ID_OK, LineFeed, analyzeFile, analyzeHere } from './lines';
import { startVerifyPool, workersFor } from './verify-pool';
import {
  MANIFEST,
  ManifestSchema,
  REPORT,
  RUN_FILES,
  SIGNATURE,
  SignatureFileSchema,
  VERIFY_MD,
  lineRunIdOf,
  type BundleFinding,
  type BundleManifest,
  type BundleVerdict,
  type Completeness,
  type ManifestRun,
  type RunVerdict,
  type SignatureVerdict,
} from './format';
import {
  defaultKeyDir,
  existingPublicKey,
  fingerprintOf,
  loadPublicKeyFile,
  parsePublicKey,
  signatureHolds,
} from './sign';
import {
  DEFAULT_LIMITS,
  notABundle,
  streamBundle,
  withExtractedBundle,
  type ExtractedBundle,
  type ExtractedEntry,
  type ZipLimits,
} from './zip-read';

export interface VerifyOptions {
  /** The signer's public key: a PEM file path or a key object. Pins who must have signed. */
  key?: string | KeyObject;
  /** The user's key folder: a bundle signed with the user's own key counts as pinned. */
  keyDir?: string;
  limits?: ZipLimits;
  /** Worker threads for the digests (default: 1 for a bundle of 2 MiB or more, else none). */
  workers?: number;
}

const MAX_MANIFEST_BYTES = 16 * 1024 * 1024;

/** The file an entry was extracted to. */
function extracted(e: ExtractedEntry): string {
  if (e.file === null)
    throw new ProofloopError('internal', `${e.name} was not kept when the bundle was read`);
  return e.file;
}

/** An entry's bytes: read into memory (streamBundle) or from its extracted file. */
function contentOf(e: ExtractedEntry): Buffer {
  return e.data ?? readFileSync(extracted(e));
}

/** Parses and validates manifest.json (its exact bytes are what the signature covers). */
export function readManifest(file: string, b: ExtractedBundle): { manifest: BundleManifest; bytes: Buffer } {
  const entry = b.entries.get(MANIFEST);
  if (!entry) throw notABundle(file, 'it has no manifest.json');
  if (entry.bytes > MAX_MANIFEST_BYTES)
    throw notABundle(file, `manifest.json is larger than ${MAX_MANIFEST_BYTES} bytes`);
  const bytes = contentOf(entry);
  const { manifest: m, expected } = parseManifest(file, bytes);
  for (const name of b.entries.keys()) {
    if (name !== MANIFEST && name !== SIGNATURE && !expected.has(name)) {
      throw notABundle(file, `entry ${JSON.stringify(name)} is not listed in manifest.json`);
    }
  }
  return { manifest: m, bytes };
}

/** The manifest's JSON, schema and own consistency, and the entries it says the bundle holds. */
function parseManifest(file: string, bytes: Buffer): { manifest: BundleManifest; expected: Set<string> } {
  let raw: unknown;
  try {
    raw = JSON.parse(bytes.toString('utf8'));
  } catch (e) {
    throw notABundle(file, `manifest.json is not JSON: ${(e as Error).message}`);
  }
  const parsed = ManifestSchema.safeParse(raw);
  if (!parsed.success) {
    const i = parsed.error.issues[0]!;
    throw notABundle(file, `manifest.json: ${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`);
  }
  const m = parsed.data;
  const ids = new Set<string>();
  const dirs = new Set<string>();
  const expected = new Set<string>([VERIFY_MD, REPORT]);
  for (const r of m.runs) {
    if (ids.has(r.run_id)) throw notABundle(file, `manifest.json names run ${r.run_id} twice`);
    if (dirs.has(r.dir)) throw notABundle(file, `manifest.json gives two runs the folder ${r.dir}`);
    ids.add(r.run_id);
    dirs.add(r.dir);
    for (const f of RUN_FILES) expected.add(`${r.dir}/${f}`);
  }
  for (const name of Object.keys(m.files)) {
    if (!expected.has(name))
      throw notABundle(file, `manifest.json lists ${JSON.stringify(name)}, which no bundle holds`);
  }
  for (const name of expected) {
    if (!m.files[name]) throw notABundle(file, `manifest.json does not list ${name}`);
  }
  return { manifest: m, expected };
}

function parseRedactions(entry: ExtractedEntry | undefined): {
  map: Map<number, string>;
  problem: string | null;
} {
  const map = new Map<number, string>();
  if (!entry) return { map, problem: null };
  const text = contentOf(entry).toString('utf8');
  let n = 0;
  for (const line of text.split('\n')) {
    n += 1;
    if (line === '') continue;
    const m = /^(\d{1,15}) ([0-9a-f]{64})$/.exec(line);
    if (!m) return { map, problem: `redactions.txt line ${n} is not "<seq> <sha256>"` };
    const seq = Number(m[1]);
    if (map.has(seq)) return { map, problem: `redactions.txt lists seq ${seq} twice` };
    map.set(seq, m[2]!);
  }
  return { map, problem: null };
}

/**
 * The seqs seen in a run: 1..prefix all seen, and the others apart. A run in order (every run
 * but a tampered one) costs a comparison per event instead of a Set entry.
 */
class SeqSet {
  private prefix = 0;
  private readonly others = new Set<number>();
  get size(): number {
    return this.prefix + this.others.size;
  }
  has(seq: number): boolean {
    return seq <= this.prefix || this.others.has(seq);
  }
  /** False when the seq was seen already. */
  add(seq: number): boolean {
    if (seq === this.prefix + 1 && this.others.size === 0) {
      this.prefix = seq;
      return true;
    }
    if (this.has(seq)) return false;
    this.others.add(seq);
    while (this.others.delete(this.prefix + 1)) this.prefix += 1;
    return true;
  }
}

interface RunCheck {
  verdict: RunVerdict;
  findings: BundleFinding[];
}

/** Parsed events of a run, in file order, for openBundle (only lines that are valid envelopes). */
export type EventSink = (e: LedgerEvent, digest: string) => void;

async function checkRun(
  feeds: Map<string, LineFeed> | null,
  b: ExtractedBundle,
  manifest: BundleManifest,
  run: ManifestRun,
  sink: EventSink | undefined,
): Promise<RunCheck> {
  const findings: BundleFinding[] = [];
  const add = (aspect: BundleFinding['aspect'], code: string, seq: number | null, message: string) => {
    // A file altered throughout would report every line; a thousand per run say enough.
    if (findings.length < 1000 || aspect === 'completeness')
      findings.push({ run_id: run.run_id, seq, aspect, code, message });
  };
  const eventsName = `${run.dir}/events.jsonl`;
  const entry = b.entries.get(eventsName);
  const verdict: RunVerdict = {
    run_id: run.run_id,
    events: 0,
    last_seq: 0,
    head_hash: ZERO_HASH,
    integrity: 'ok',
    completeness: 'ok',
    chain: run.chain ?? 'source',
    seal: run.seal ?? null,
  };
  if (!entry) {
    add(
      'completeness',
      'run_missing',
      null,
      `${eventsName} is missing: the run's ${run.events} events are not in the bundle`,
    );
    verdict.completeness = 'failed';
    return { verdict, findings };
  }
  const redactionsEntry = b.entries.get(`${run.dir}/redactions.txt`);
  const red = parseRedactions(redactionsEntry);
  if (red.problem) add('integrity', 'redactions_invalid', null, red.problem);

  let count = 0;
  let lastSeq = 0;
  let expectSeq = 1;
  let prevHash = ZERO_HASH;
  let firstHash: string | null = null;
  let structural = false;
  let chainFindings = 0;
  const chainFinding = (code: string, seq: number, message: string) => {
    // A broken chain reports at every later line; the first hundred say enough.
    if (++chainFindings <= 100) add('integrity', code, seq, message);
  };
  const seen = new SeqSet();
  // Source lines that are no event (too deep to read): the chain links over them by what they state.
  const stated = new Map((run.stated_links ?? []).map((l) => [l.seq, l]));
  /**
   * Whether the stated links from `expectSeq` up to `seq - 1` chain `prevHash` to `prev` (the prev
   * the line at `seq` states); if so they are counted as present and each says why it holds no line.
   */
  const linkOver = (seq: number, prev: string | undefined): boolean => {
    if (prev === undefined || seq <= expectSeq || stated.size === 0) return false;
    let h = prevHash;
    for (let s = expectSeq; s < seq; s++) {
      const l = stated.get(s);
      if (!l || l.prev !== h) return false;
      h = l.hash;
    }
    if (h !== prev) return false;
    for (let s = expectSeq; s < seq; s++) {
      seen.add(s);
      add(
        'completeness',
        'event_unchecked',
        s,
        `seq ${s} is not in the bundle: its source line could not be read as an event (nested too deep), so its content was never checked; the chain links over it by the prev and hash it states`,
      );
    }
    expectSeq = seq;
    return true;
  };
  try {
    const batches =
      feeds?.get(eventsName)?.batches() ??
      analyzeFile(extracted(entry), lineRunIdOf(run), sink !== undefined);
    outer: for await (const batch of batches) {
      if ('truncated' in batch) {
        add(
          'integrity',
          'truncated_line',
          lastSeq + 1,
          `line ${count + 1} is cut off (no newline at the end of the file)`,
        );
        structural = true;
        break;
      }
      let carriedNext = 0;
      let breakNext = 0;
      for (let i = 0; i < batch.count; i++) {
        const seq = batch.seqs[i]!;
        const f = batch.flags[i]!;
        const lineNo = count + 1;
        const brk = batch.breaks[breakNext]?.index === i ? batch.breaks[breakNext++] : undefined;
        if (brk) prevHash = brk.before;
        const linked = linkOver(seq, i === 0 ? batch.firstPrev : brk?.prev);
        if (seq !== expectSeq) {
          const code =
            seq < expectSeq ? (seq === expectSeq - 1 ? 'seq_duplicate' : 'seq_out_of_order') : 'seq_gap';
          chainFinding(code, seq, `line ${lineNo}: expected seq ${expectSeq}, found ${seq}`);
        }
        if (!linked && (i === 0 ? batch.firstPrev !== prevHash : !(f & PREV_OK))) {
          chainFinding('chain_broken', seq, `prev of seq ${seq} is not the hash of the event before it`);
        }
        if (!(f & LINK_OK)) {
          chainFinding(
            'chain_broken',
            seq,
            `seq ${seq}: content does not match its hash (altered after it was written)`,
          );
        }
        if (!(f & RUN_ID_OK))
          add(
            'integrity',
            'run_id_mismatch',
            seq,
            `line ${lineNo} belongs to another run than ${JSON.stringify(lineRunIdOf(run)).slice(0, 300)}`,
          );
        const listed = red.map.get(seq);
        if (f & CARRIED) {
          const lineHash = batch.carriedHashes[carriedNext++];
          if (listed === undefined) {
            add(
              'integrity',
              'redaction_unlisted',
              seq,
              `seq ${seq} carries a digest but is not a listed redaction`,
            );
          } else if (lineHash !== listed) {
            add('integrity', 'redacted_line_altered', seq, `seq ${seq} (redacted) was altered after export`);
          }
        } else if (listed !== undefined) {
          add(
            'integrity',
            'redaction_missing',
            seq,
            `seq ${seq} is listed as redacted but carries no digest`,
          );
        }
        expectSeq = Math.max(expectSeq, seq + 1);
        if (count === 0) firstHash = batch.firstHash;
        count += 1;
        lastSeq = Math.max(lastSeq, seq);
        const again = !seen.add(seq);
        if (sink && !again) sink(batch.events![i]!, batch.digests![i]!);
      }
      if (batch.count > 0) prevHash = batch.lastHash;
      if (batch.problem) {
        add('integrity', batch.problem.code, lastSeq + 1, `line ${count + 1}: ${batch.problem.message}`);
        structural = true;
        break outer;
      }
    }
  } catch (e) {
    add('integrity', 'unreadable', lastSeq + 1, `${eventsName}: ${(e as Error).message}`);
    structural = true;
  }
  // Stated links past the last line (the source's last lines were too deep to read): said, not linked.
  for (let s = expectSeq, h = prevHash; stated.get(s)?.prev === h; s++) {
    h = stated.get(s)!.hash;
    add(
      'completeness',
      'event_unchecked',
      s,
      `seq ${s} is not in the bundle: its source line could not be read as an event (nested too deep), so its content was never checked`,
    );
  }
  // A seq missing inside the run (a deleted line) is both: the file was altered, and an event is missing.
  if (seen.size < lastSeq) {
    let missing = 1;
    while (seen.has(missing)) missing += 1;
    add(
      'completeness',
      'events_missing',
      missing,
      `seq ${missing} is missing (${lastSeq - seen.size} seqs missing up to seq ${lastSeq})`,
    );
  }
  const head = { seq: expectSeq - 1, hash: prevHash };
  verdict.events = count;
  verdict.last_seq = lastSeq;
  verdict.head_hash = head.hash;

  if (count > 0 && run.first_hash !== null && firstHash !== run.first_hash) {
    add(
      'integrity',
      'first_hash_mismatch',
      1,
      `seq 1 is not the first event the manifest names: a different run`,
    );
  }
  // Listed redactions beyond the end belong to a missing tail; inside it, they must be present.
  for (const seq of red.map.keys()) {
    if (seq <= lastSeq && !seen.has(seq))
      add('integrity', 'redaction_missing', seq, `listed redacted seq ${seq} is not in the file`);
  }
  const intact = !findings.some((f) => f.aspect === 'integrity');
  if (!structural) {
    if (lastSeq < run.last_seq || count < run.events) {
      add(
        'completeness',
        'tail_missing',
        lastSeq + 1,
        `events after seq ${lastSeq} are missing: the manifest says the run ends at seq ${run.last_seq} (${run.events} events)`,
      );
    } else if (lastSeq > run.last_seq || count > run.events) {
      add(
        'integrity',
        'extra_events',
        run.last_seq + 1,
        `events after seq ${run.last_seq} are not in the manifest`,
      );
    } else if (head.hash !== run.head_hash) {
      add(
        'integrity',
        'head_mismatch',
        lastSeq,
        `the events end in hash ${head.hash.slice(0, 16)}…, the manifest says ${run.head_hash.slice(0, 16)}…`,
      );
    }
  }
  // The file's own hash: a mismatch explained by a cut-off tail of intact events is a completeness matter.
  const meta = manifest.files[eventsName];
  const truncatedOnly =
    intact && findings.some((f) => f.code === 'tail_missing') && entry.bytes < (meta?.bytes ?? 0);
  if (meta && (meta.sha256 !== entry.sha256 || meta.bytes !== entry.bytes) && !truncatedOnly && intact) {
    add('integrity', 'file_hash_mismatch', null, `${eventsName} does not match its sha256 in the manifest`);
  }
  const red2 = redactionsEntry && manifest.files[`${run.dir}/redactions.txt`];
  if (red2 && (red2.sha256 !== redactionsEntry.sha256 || red2.bytes !== redactionsEntry.bytes)) {
    add(
      'integrity',
      'file_hash_mismatch',
      null,
      `${run.dir}/redactions.txt does not match its sha256 in the manifest`,
    );
  }
  verdict.integrity = findings.some((f) => f.aspect === 'integrity') ? 'failed' : 'ok';
  verdict.completeness = findings.some((f) => f.aspect === 'completeness') ? 'failed' : 'ok';
  return { verdict, findings };
}

function checkSignature(
  manifest: BundleManifest,
  bytes: Buffer,
  b: ExtractedBundle,
  opts: VerifyOptions,
): { signature: SignatureVerdict; signer: BundleVerdict['signer']; findings: BundleFinding[] } {
  const findings: BundleFinding[] = [];
  const note = (aspect: BundleFinding['aspect'], code: string, message: string) =>
    findings.push({ run_id: null, seq: null, aspect, code, message });
  const pinnedKey =
    opts.key === undefined ? null : typeof opts.key === 'string' ? loadPublicKeyFile(opts.key) : opts.key;
  const sigEntry = b.entries.get(SIGNATURE);
  if (!sigEntry) {
    if (manifest.signer) {
      note(
        'signature',
        'signature_missing',
        `the manifest names signer ${manifest.signer.fingerprint} but manifest.sig is missing`,
      );
      return { signature: 'invalid', signer: null, findings };
    }
    if (pinnedKey) note('signature', 'not_signed', 'a key was given, but the bundle is not signed');
    return { signature: 'absent', signer: null, findings };
  }
  let sig;
  try {
    if (sigEntry.bytes > 64 * 1024) throw new Error('larger than 64 KiB');
    const parsed = SignatureFileSchema.safeParse(JSON.parse(contentOf(sigEntry).toString('utf8')));
    if (!parsed.success) throw new Error(parsed.error.issues[0]?.message ?? 'invalid');
    sig = parsed.data;
  } catch (e) {
    note('signature', 'signature_unreadable', `manifest.sig cannot be read: ${(e as Error).message}`);
    return { signature: 'invalid', signer: null, findings };
  }
  if (manifest.signer && manifest.signer.fingerprint !== sig.fingerprint) {
    note('signature', 'signer_mismatch', 'manifest.sig names another key than the manifest does');
    return { signature: 'invalid', signer: { fingerprint: sig.fingerprint, pinned: false }, findings };
  }
  if (pinnedKey) {
    const fp = fingerprintOf(pinnedKey);
    if (fp !== sig.fingerprint) {
      note('signature', 'wrong_key', `signed by ${sig.fingerprint}, not by the given key ${fp}`);
      return { signature: 'wrong_key', signer: { fingerprint: sig.fingerprint, pinned: false }, findings };
    }
    const ok = signatureHolds(bytes, sig.signature, pinnedKey);
    if (!ok)
      note(
        'signature',
        'signature_invalid',
        'the signature does not match manifest.json: the manifest was altered',
      );
    return { signature: ok ? 'valid' : 'invalid', signer: { fingerprint: fp, pinned: true }, findings };
  }
  let embedded: KeyObject;
  try {
    embedded = parsePublicKey(sig.public_key, 'the public key in manifest.sig');
  } catch (e) {
    note('signature', 'signature_unreadable', (e as Error).message);
    return { signature: 'invalid', signer: null, findings };
  }
  if (fingerprintOf(embedded) !== sig.fingerprint) {
    note(
      'signature',
      'signer_mismatch',
      'the public key in manifest.sig does not have the fingerprint it claims',
    );
    return { signature: 'invalid', signer: { fingerprint: sig.fingerprint, pinned: false }, findings };
  }
  const ok = signatureHolds(bytes, sig.signature, embedded);
  if (!ok) {
    note(
      'signature',
      'signature_invalid',
      'the signature does not match manifest.json: the manifest was altered',
    );
    return { signature: 'invalid', signer: { fingerprint: sig.fingerprint, pinned: false }, findings };
  }
  const own = existingPublicKey(opts.keyDir ?? defaultKeyDir());
  const pinned = own !== null && fingerprintOf(own) === sig.fingerprint;
  if (!pinned) {
    note(
      'note',
      'signer_not_pinned',
      `signed by ${sig.fingerprint}, a key that was not given with --key: anyone can sign with a key of their own`,
    );
  }
  return { signature: 'valid', signer: { fingerprint: sig.fingerprint, pinned }, findings };
}

/** Entries verification reads back; the others (report, VERIFY.md, states) are only hashed. */
export const needsBytes = (name: string): boolean =>
  name === MANIFEST ||
  name === SIGNATURE ||
  name.endsWith('/events.jsonl') ||
  name.endsWith('/redactions.txt');

export interface VerifyInternals {
  manifest: BundleManifest;
  /** Called per run before its events, then per valid event line (for openBundle). */
  onRun?: (run: ManifestRun) => EventSink | undefined;
}

/**
 * Verifies a bundle trusting nothing in it but the math: entries and manifest (structural problems
 * throw a clear `invalid_input` error), the signature, every file's sha256, and per run seq
 * continuity, the chain (recomputed, or a redacted event's carried digest) and redacted lines,
 * counts and head hashes against the manifest. Integrity and completeness are reported apart.
 */
export async function verifyBundle(
  file: string,
  opts: VerifyOptions = {},
  hooks: { onRun?: (run: ManifestRun, manifest: BundleManifest) => EventSink | undefined } = {},
): Promise<BundleVerdict> {
  const abs = path.resolve(file);
  const limits = opts.limits ?? DEFAULT_LIMITS;
  // Events wanted (openBundle's way): extract, then analyse in this thread, keeping them.
  if (hooks.onRun)
    return withExtractedBundle(abs, limits, (b) => verifyExtracted(abs, b, opts, hooks), needsBytes);
  return verifyStreaming(abs, opts, limits);
}

/**
 * Blocks a worker has queued before this thread analyses one itself. Three keep the worker busy
 * while this thread analyses a block (~5 ms) and then inflates the next (two left it waiting
 * ~4 ms in 15: measured 30–40 ms slower over 100,000 events, in fresh processes).
 */
const HELP_AT = 3;

/**
 * verifyBundle in one pass over the zip, nothing written to disk: the workers start at once (beside
 * the reading of the central directory and the manifest), each run's events.jsonl is cut into
 * blocks of lines as it inflates and hashes, and the blocks are analysed in the workers meanwhile;
 * the checks against the manifest then run on their compact results, as `verifyExtracted` does.
 */
async function verifyStreaming(file: string, opts: VerifyOptions, limits: ZipLimits): Promise<BundleVerdict> {
  // A worker, and this thread helping whenever it has HELP_AT blocks pending: as fast as two workers
  // for less CPU (one thread less to start).
  const pool = startVerifyPool(workersFor(file, opts.workers), HELP_AT);
  const analyze = pool?.analyze ?? analyzeHere;
  const feeds = new Map<string, LineFeed>();
  let runIds: Map<string, string> | null = null;
  try {
    const b = await streamBundle(
      file,
      limits,
      (name, size) => name === MANIFEST && size <= MAX_MANIFEST_BYTES,
      (name, early) => {
        if (name.endsWith('/events.jsonl')) {
          // The manifest's run for this file, read as bare JSON: its schema (a first zod parse costs
          // ~15 ms, and would hold the inflating up) is checked by readManifest once every entry is
          // read, and without a valid manifest verification stops there anyway.
          if (runIds === null) {
            runIds = new Map();
            const m = early.get(MANIFEST);
            // The schema parse itself, once this file's first chunk is inflating (two turns of the
            // event loop on), while this thread would wait: readManifest's parse is then warm.
            if (m)
              setImmediate(() =>
                setImmediate(() => {
                  try {
                    parseManifest(file, contentOf(m));
                  } catch {
                    // readManifest reports it.
                  }
                }),
              );
            try {
              const runs = m ? (JSON.parse(contentOf(m).toString('utf8')) as { runs?: unknown }).runs : null;
              if (Array.isArray(runs))
                for (const r of runs as { dir?: unknown; run_id?: unknown; source_run_id?: unknown }[])
                  if (typeof r?.dir === 'string' && typeof r.run_id === 'string')
                    runIds.set(
                      `${r.dir}/events.jsonl`,
                      typeof r.source_run_id === 'string' ? r.source_run_id : r.run_id,
                    );
            } catch {
              // readManifest reports it.
            }
          }
          const runId = runIds.get(name);
          if (runId === undefined) return 'hash';
          const feed = new LineFeed(runId, analyze, (pool?.size ?? 1) * HELP_AT + 1);
          feeds.set(name, feed);
          return feed;
        }
        return needsBytes(name) ? 'keep' : 'hash';
      },
    );
    // Every block is handed out: the worker's queue is shared out, this thread would only wait.
    pool?.steal();
    return await verifyExtracted(file, b, opts, {}, feeds);
  } finally {
    await pool?.close();
  }
}

export async function verifyExtracted(
  file: string,
  b: ExtractedBundle,
  opts: VerifyOptions,
  hooks: { onRun?: (run: ManifestRun, manifest: BundleManifest) => EventSink | undefined } = {},
  feeds: Map<string, LineFeed> | null = null,
): Promise<BundleVerdict> {
  const { manifest, bytes } = readManifest(file, b);
  const sig = checkSignature(manifest, bytes, b, opts);
  const findings: BundleFinding[] = [];
  const runs: RunVerdict[] = [];
  for (const run of manifest.runs) {
    const r = await checkRun(feeds, b, manifest, run, hooks.onRun?.(run, manifest));
    runs.push(r.verdict);
    findings.push(...r.findings);
  }
  for (const name of [VERIFY_MD, REPORT, ...manifest.runs.map((r) => `${r.dir}/state.json`)]) {
    const e = b.entries.get(name);
    const meta = manifest.files[name]!;
    const runId = manifest.runs.find((r) => name.startsWith(r.dir + '/'))?.run_id ?? null;
    if (!e)
      findings.push({
        run_id: runId,
        seq: null,
        aspect: 'completeness',
        code: 'file_missing',
        message: `${name} is missing`,
      });
    else if (e.sha256 !== meta.sha256 || e.bytes !== meta.bytes) {
      findings.push({
        run_id: runId,
        seq: null,
        aspect: 'integrity',
        code: 'file_hash_mismatch',
        message: `${name} does not match its sha256 in the manifest`,
      });
    }
  }
  findings.push(...sig.findings);

  const integrity =
    findings.some((f) => f.aspect === 'integrity') || sig.signature === 'invalid' ? 'failed' : 'ok';
  let completeness: Completeness;
  if (findings.some((f) => f.aspect === 'completeness')) completeness = 'failed';
  else if (sig.signature === 'valid' && sig.signer?.pinned) completeness = 'ok';
  else {
    completeness = 'unknown';
    findings.push({
      run_id: null,
      seq: null,
      aspect: 'note',
      code: 'completeness_unproven',
      message:
        sig.signature === 'valid'
          ? 'the signer is not pinned (--key): a cut-off tail with a re-signed manifest cannot be ruled out'
          : 'the manifest is not signed by a trusted key: a chain alone cannot show that the tail was cut off',
    });
  }
  const failing = findings.filter((f) => f.aspect !== 'note');
  const runOrder = new Map(manifest.runs.map((r, i) => [r.run_id, i]));
  failing.sort((x, y) => {
    const rx = x.run_id === null ? Infinity : (runOrder.get(x.run_id) ?? Infinity);
    const ry = y.run_id === null ? Infinity : (runOrder.get(y.run_id) ?? Infinity);
    if (rx !== ry) return rx - ry;
    return (x.seq ?? Infinity) - (y.seq ?? Infinity);
  });
  const first = failing[0];
  const sigOk = sig.signature === 'valid' || (sig.signature === 'absent' && opts.key === undefined);
  // A run that matches its manifest entry is complete only if the manifest itself is proven: without
  // a trusted signature the entry could have been cut down with the events, so the run says unknown.
  const runVerdicts = runs.map((r) =>
    r.completeness === 'ok' && completeness !== 'ok' ? { ...r, completeness: 'unknown' as const } : r,
  );
  return {
    ok: integrity === 'ok' && completeness !== 'failed' && sigOk,
    file,
    integrity,
    completeness,
    signature: sig.signature,
    signer: sig.signer,
    first_failure: first
      ? { run_id: first.run_id, seq: first.seq, reason: `${first.code}: ${first.message}` }
      : null,
    runs: runVerdicts,
    findings,
    manifest: {
      created_at: manifest.created_at,
      app_version: manifest.app.version,
      profile: manifest.profile,
      runs: manifest.runs.length,
      events: manifest.runs.reduce((n, r) => n + r.events, 0),
    },
  };
}
