import type * as z from '../../shared/zod';
import { SealSchema } from '../../shared/api/bundle';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { toJsonLine } from '../../shared/protocol';
import { dict } from '../../shared/dict';
import { createRedactor, parseRedactRules, type RedactRules, type Redactor } from '../../shared/redact';
import { ProofloopError } from '../../shared/result';
import type { RunState } from '../../shared/state';
import { sha256Bytes, sha256Hex as fastSha256 } from '../crypto';
import { digestRunIdOf, statedLinksOf, type LedgerReader, type RunRow } from '../ledger';
import { ledgerPath } from '../ledger/open';
import { appRoot } from '../paths';
import { checkBundleOut } from './out-path';
import { finishChunk, firedRules, redactEvent, type LineChunk } from './export-chunks';
import { inThreadSource, workerSource, type ChunkSource } from './export-pool';
import {
  BUNDLE_FORMAT,
  BUNDLE_FORMAT_VERSION,
  MANIFEST,
  REPORT,
  SIGNATURE,
  VERIFY_MD,
  runDir,
  type BundleManifest,
  type ManifestRun,
  type RedactionProfile,
} from './format';
import { reportPage } from './report';
import { outcomeOfRun } from '../ledger/outcome';
import type { Outcome } from '../../shared/outcome';
import { loadOrCreateKeyPair, signManifest } from './sign';
import { verifyMarkdown } from './verify-md';
import { EntryBuilder, smallEntry, storedEntry, writeZipFile, type ZipEntry } from './zip-write';

export interface PreviewRun {
  run_id: string;
  events: number;
  redacted_events: number;
  rules: Record<string, number>;
  /** Seqs of the events the profile changes (the first 1,000). */
  seqs: number[];
  seqs_truncated: boolean;
}

export interface BundlePreview {
  profile: RedactionProfile;
  rules: Record<string, number>;
  events_redacted: number;
  runs: PreviewRun[];
}

export interface ExportOptions {
  runIds: readonly string[];
  out: string;
  profile?: RedactionProfile;
  sign?: boolean;
  /** Where the signing key pair lives (default `$PROOFLOOP_HOME/keys` or `~/.proofloop/keys`). */
  keyDir?: string;
  /** Replace an existing file at `out` (default: refuse). */
  force?: boolean;
  now?: () => string;
  /** Worker threads that read and sort the events (default: 2 from 20,000 events on, else none). */
  workers?: number;
}

export interface ExportResult {
  file: string;
  bytes: number;
  sha256: string;
  manifest: BundleManifest;
}

const MAX_PREVIEW_SEQS = 1000;

export function appVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(path.join(appRoot(), 'package.json'), 'utf8')) as {
      version?: unknown;
    };
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/** The folder's own redaction rules, `<folder>/.proofloop/redact.json`, when it has some. */
export function folderRedactRules(folder: string): RedactRules | undefined {
  const file = path.join(folder, '.proofloop', 'redact.json');
  if (!existsSync(file)) return undefined;
  try {
    return parseRedactRules(readFileSync(file, 'utf8'), file);
  } catch (e) {
    throw new ProofloopError('invalid_input', (e as Error).message);
  }
}

function bundleRedactor(ledger: LedgerReader, profile: RedactionProfile): Redactor {
  return createRedactor(profile, { sha256: fastSha256, rules: folderRedactRules(ledger.folder) });
}

/** The seal an import recorded on an unchained run (runs.meta.seal), when it is well formed. */
export function sealOfRun(run: RunRow): z.infer<typeof SealSchema> | null {
  const r = SealSchema.safeParse(run.meta.seal);
  return r.success ? r.data : null;
}

function requireRuns(ledger: LedgerReader, runIds: readonly string[]): RunRow[] {
  if (runIds.length === 0) throw new ProofloopError('bad_args', 'name at least one run to export');
  const seen = new Set<string>();
  return runIds.map((id) => {
    if (seen.has(id)) throw new ProofloopError('bad_args', `run ${id} is named twice`);
    seen.add(id);
    const run = ledger.run(id);
    if (!run) throw new ProofloopError('not_found', `no run "${id}" in ${ledger.folder}`);
    if (!run.chained && !sealOfRun(run)) {
      throw new ProofloopError(
        'invalid_input',
        `run ${id} has no chain of its own and no seal from its import: open its folder again to seal it`,
      );
    }
    if (run.writer) {
      throw new ProofloopError(
        'conflict',
        `run ${id} is still being written (pid ${run.writer.pid}): export it when it ends`,
      );
    }
    return run;
  });
}

function diffCounts(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  const out = dict<number>();
  for (const [k, n] of Object.entries(after)) {
    const d = n - (before[k] ?? 0);
    if (d > 0) out[k] = d;
  }
  return out;
}

/** What the profile would redact, per rule and per run, without writing anything. */
export function previewBundle(
  ledger: LedgerReader,
  runIds: readonly string[],
  profile: RedactionProfile,
): BundlePreview {
  const runs = requireRuns(ledger, runIds);
  const redactor = bundleRedactor(ledger, profile);
  const out: PreviewRun[] = [];
  let eventsRedacted = 0;
  for (const run of runs) {
    const before = redactor.counts();
    const seqs: number[] = [];
    let events = 0;
    let redacted = 0;
    for (const e of ledger.iterate(run.run_id)) {
      events += 1;
      if (redactEvent(e, redactor).changed) {
        redacted += 1;
        if (seqs.length < MAX_PREVIEW_SEQS) seqs.push(e.seq);
      }
    }
    eventsRedacted += redacted;
    out.push({
      run_id: run.run_id,
      events,
      redacted_events: redacted,
      rules: diffCounts(redactor.counts(), before),
      seqs,
      seqs_truncated: redacted > seqs.length,
    });
  }
  return { profile, rules: redactor.counts(), events_redacted: eventsRedacted, runs: out };
}

/** Events per chunk: the unit of work handed to a worker and deflated as one piece. */
const CHUNK_EVENTS = 5000;
/** Chunks asked for ahead of the one being finished (bounds memory on very large runs). */
const READ_AHEAD = 8;
/** Exports of at least this many events use worker threads (their start-up costs ~50 ms). */
const WORKER_THRESHOLD = 20_000;

/** The promise, marked as handled: it is awaited later, maybe after an error elsewhere. */
function settled<T>(p: Promise<T>): Promise<T> {
  p.catch(() => undefined);
  return p;
}

interface Pipeline {
  source: ChunkSource;
  redactor: Redactor;
  /** Scans of chunks of events.jsonl in flight, with the entry they belong to. */
  scans: Promise<{ name: string; rules: string[] }>[];
}

/**
 * One run through the pipeline: chunks of lines come from the source (workers read and sort them
 * in parallel), the events the profile changes are redacted here, in order, the state is folded
 * over the redacted events, and each finished chunk goes to the scan and into events.jsonl (deflated
 * in zlib's thread pool meanwhile; report.html carries the same deflated bytes).
 */
async function exportRun(
  p: Pipeline,
  run: RunRow,
  dir: string,
  events: EntryBuilder,
): Promise<{ manifest: ManifestRun; state: RunState; redactions: string[] }> {
  const before = p.redactor.counts();
  const redactions: string[] = [];
  const folds: Promise<unknown>[] = [];
  let count = 0;
  let first: { seq: number; hash: string } | null = null;
  let last: { seq: number; hash: string } | null = null;
  const changedWhileExported = () =>
    new ProofloopError('conflict', `run ${run.run_id} changed while it was exported; try again`);

  const links = statedLinksOf(run);
  const stated = new Map(links.map((l) => [l.seq, l.hash]));
  const pending: Promise<LineChunk>[] = [];
  let nextFrom = 1;
  const fill = () => {
    while (nextFrom <= run.head_seq && pending.length < READ_AHEAD) {
      const to = Math.min(run.head_seq, nextFrom + CHUNK_EVENTS - 1);
      pending.push(p.source.read(run.run_id, nextFrom, to));
      nextFrom = to + 1;
    }
  };
  fill();
  while (pending.length > 0) {
    const c = await pending.shift()!;
    fill();
    if (!c.first || !c.last) continue;
    // Chunks are separate reads: each must link to the one before, as one iteration would.
    if (last && c.first.prev !== (stated.get(c.first.seq - 1) ?? last.hash)) throw changedWhileExported();
    first ??= { seq: c.first.seq, hash: c.first.hash };
    last = c.last;
    const texts = c.touched.map(({ event }) => {
      const { line, changed } = redactEvent(event, p.redactor);
      const text = toJsonLine(line);
      if (changed) redactions.push(`${line.seq} ${fastSha256(text)}`);
      return text;
    });
    const bytes = finishChunk(c, texts);
    p.scans.push(settled(p.source.scan(bytes).then((rules) => ({ name: events.name, rules }))));
    // Important: the state is folded over the redacted lines, so state.json holds nothing they don't.
    folds.push(settled(p.source.fold(run.run_id, bytes, false)));
    events.add(bytes);
    count += c.count;
  }
  if (last ? last.seq !== run.head_seq || last.hash !== run.head_hash : run.head_seq !== 0) {
    throw changedWhileExported();
  }
  await Promise.all(folds);
  const state = (await p.source.fold(run.run_id, new Uint8Array(0), true))!;
  return {
    state,
    redactions,
    manifest: {
      run_id: run.run_id,
      ...(digestRunIdOf(run) !== run.run_id ? { source_run_id: digestRunIdOf(run) } : {}),
      dir,
      source: run.source,
      status: run.status,
      task_id: run.task_id,
      variant: run.variant,
      events: count,
      first_seq: first?.seq ?? 0,
      last_seq: last?.seq ?? 0,
      first_hash: first?.hash ?? null,
      head_hash: last?.hash ?? run.head_hash,
      redacted_events: redactions.length,
      rules: diffCounts(p.redactor.counts(), before),
      ...(run.chained ? { chain: 'source' as const } : { chain: 'import' as const, seal: sealOfRun(run)! }),
      ...(links.length > 0
        ? { stated_links: links.map(({ seq, prev, hash }) => ({ seq, prev, hash })) }
        : {}),
    },
  };
}

function chunkSource(
  ledger: LedgerReader,
  runs: readonly RunRow[],
  profile: RedactionProfile,
  workers: number | undefined,
): ChunkSource {
  const total = runs.reduce((n, r) => n + r.head_seq, 0);
  const n = workers ?? (total >= WORKER_THRESHOLD ? 2 : 0);
  const dbFile = ledgerPath(ledger.folder);
  const pooled = n > 0 ? workerSource(n, { dbFile, profile, rules: folderRedactRules(ledger.folder) }) : null;
  return pooled ?? inThreadSource(dbFile, bundleRedactor(ledger, profile), profile);
}

/**
 * Writes an audit bundle (DESIGN.md, "Audit bundles"): redacted events.jsonl, final state and the
 * list of redacted lines per run, VERIFY.md, report.html, the manifest and, with `sign`, its
 * signature. The zip is written as `<out>.partial-<random>` and renamed only once complete and
 * scanned clean: no half-written bundle or bundle that still holds a secret is left under `out`.
 */
export async function exportBundle(ledger: LedgerReader, opts: ExportOptions): Promise<ExportResult> {
  const profile = opts.profile ?? 'share';
  const runIds = new Set(ledger.runs().map((r) => r.run_id));
  const out = await checkBundleOut(ledger.folder, runIds, opts.out, opts.force ?? false);
  const runs = requireRuns(ledger, opts.runIds);
  const now = opts.now ?? (() => new Date().toISOString());
  const createdAt = now();
  const redactor = bundleRedactor(ledger, profile);
  const p: Pipeline = {
    source: chunkSource(ledger, runs, profile, opts.workers),
    redactor,
    scans: [],
  };
  // Entries in zip order: per run events.jsonl, state.json, redactions.txt; then the rest.
  const entries: (ZipEntry | EntryBuilder)[] = [];
  const manifestRuns: ManifestRun[] = [];
  const states: { run_id: string; state: RunState; outcome: Outcome | null }[] = [];
  /** The small entries' text, for the output scan. */
  const scanned: { name: string; text: string }[] = [];
  const small = (name: string, text: string): ZipEntry => {
    scanned.push({ name, text });
    return smallEntry(name, Buffer.from(text, 'utf8'));
  };
  let eventsRedacted = 0;
  try {
    for (const [index, run] of runs.entries()) {
      const dir = runDir(index, run.run_id);
      const events = new EntryBuilder(`${dir}/events.jsonl`);
      entries.push(events);
      const r = await exportRun(p, run, dir, events);
      eventsRedacted += r.redactions.length;
      manifestRuns.push(r.manifest);
      states.push({ run_id: run.run_id, state: r.state, outcome: outcomeOfRun(ledger, run) });
      entries.push(
        small(`${dir}/state.json`, JSON.stringify(r.state, null, 2) + '\n'),
        small(`${dir}/redactions.txt`, r.redactions.length ? r.redactions.join('\n') + '\n' : ''),
      );
    }
  } catch (e) {
    await p.source.close();
    throw e;
  }

  const key = opts.sign ? loadOrCreateKeyPair(opts.keyDir) : null;
  const manifest: BundleManifest = {
    format: BUNDLE_FORMAT,
    format_version: BUNDLE_FORMAT_VERSION,
    app: { name: 'proofloop', version: appVersion() },
    created_at: createdAt,
    profile,
    redaction: { events_redacted: eventsRedacted, rules: redactor.counts() },
    runs: manifestRuns,
    files: {},
    signer: key ? { alg: 'ed25519', fingerprint: key.fingerprint } : null,
  };
  entries.push(small(VERIFY_MD, verifyMarkdown(manifest)));

  let zipEntries: ZipEntry[];
  let fired: Set<string>;
  let report: ReturnType<typeof reportPage>;
  try {
    zipEntries = await Promise.all(entries.map((e) => (e instanceof EntryBuilder ? e.finish() : e)));
    // report.html holds each run's events.jsonl as deflated for the zip (gzip, base64): stored.
    const built = new Map(zipEntries.map((e) => [e.name, e]));
    report = reportPage(
      manifest,
      states.map((s, i) => ({ ...s, events: built.get(`${manifestRuns[i]!.dir}/events.jsonl`)! })),
    );
    zipEntries.push(storedEntry(REPORT, report.pieces));
    fired = new Set<string>();
    for (const s of await Promise.all(p.scans)) for (const rule of s.rules) fired.add(`${s.name}: ${rule}`);
  } finally {
    await p.source.close();
  }
  for (const e of zipEntries) manifest.files[e.name] = { sha256: e.sha256, bytes: e.size };
  const manifestBytes = Buffer.from(JSON.stringify(manifest, null, 2) + '\n', 'utf8');
  const head: ZipEntry[] = [smallEntry(MANIFEST, manifestBytes)];
  const sigText = key ? JSON.stringify(signManifest(manifestBytes, key), null, 2) + '\n' : '';
  if (key) head.push(smallEntry(SIGNATURE, Buffer.from(sigText, 'utf8')));

  // Important: the bundle's own bytes pass every detector before it may exist under its name. The
  // events.jsonl chunks were scanned as they were made; here the rest: the small entries as they
  // are, report.html as decoded: all of it but its events, which decode to the exact bytes of the
  // runs' events.jsonl (their own deflate stream), scanned already.
  scanned.push(
    { name: MANIFEST, text: manifestBytes.toString('utf8') },
    { name: REPORT, text: report.scanText },
  );
  for (const e of head.slice(1)) scanned.push({ name: e.name, text: sigText });
  for (const { name, text } of scanned)
    for (const rule of firedRules(text, profile)) fired.add(`${name}: ${rule}`);
  if (fired.size > 0) {
    throw new ProofloopError(
      'invalid_input',
      `refusing to write ${out}: a detector still fires on the redacted output (${[...fired].slice(0, 10).join('; ')}); ` +
        'add a rule to .proofloop/redact.json or report this as a redaction bug',
    );
  }
  const partial = `${out}.partial-${randomBytes(6).toString('hex')}`;
  try {
    writeZipFile(partial, [...head, ...zipEntries], new Date(Date.parse(createdAt) || Date.now()));
    renameSync(partial, out);
  } catch (e) {
    rmSync(partial, { force: true });
    throw e;
  }
  const bytes = statSync(out).size;
  return { file: out, bytes, sha256: sha256Bytes(readFileSync(out)), manifest };
}
