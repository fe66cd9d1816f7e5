import { randomBytes } from 'node:crypto';
import {
  closeSync,
  createWriteStream,
  existsSync,
  fsyncSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import path from 'node:path';
import yazl from 'yazl';
import { toJsonLine, type LedgerEvent } from '../../shared/protocol';
import {
  SHARE_DETECTORS,
  createRedactor,
  parseRedactRules,
  scanForSecrets,
  type RedactRules,
  type Redactor,
} from '../../shared/redact';
import { ProofloopError } from '../../shared/result';
import { evolve, initialState, type RunState } from '../../shared/state';
import { sha256Bytes } from '../crypto';
import type { LedgerReader, RunRow } from '../ledger';
import { appRoot } from '../paths';
import { digestEvent, sha256Hex as fastSha256 } from '../crypto';
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
import { renderReport } from './report';
import { loadOrCreateKeyPair, signManifest } from './sign';
import { verifyMarkdown } from './verify-md';

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

function requireRuns(ledger: LedgerReader, runIds: readonly string[]): RunRow[] {
  if (runIds.length === 0) throw new ProofloopError('bad_args', 'name at least one run to export');
  const seen = new Set<string>();
  return runIds.map((id) => {
    if (seen.has(id)) throw new ProofloopError('bad_args', `run ${id} is named twice`);
    seen.add(id);
    const run = ledger.run(id);
    if (!run) throw new ProofloopError('not_found', `no run "${id}" in ${ledger.folder}`);
    if (!run.chained) {
      throw new ProofloopError(
        'invalid_input',
        `run ${id} is unchained (seed format): a bundle needs a hash chain`,
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
  const out: Record<string, number> = {};
  for (const [k, n] of Object.entries(after)) {
    const d = n - (before[k] ?? 0);
    if (d > 0) out[k] = d;
  }
  return out;
}

/**
 * The bundle form of one stored event: the payload through the export redactor; when it changed,
 * the line carries the original digest so `hash = sha256(prev + digest)` still links.
 */
function redactEvent(e: LedgerEvent, redactor: Redactor): { line: LedgerEvent; changed: boolean } {
  const r = redactor.redactValue(e.payload, { path: ['payload'] });
  const base: LedgerEvent = {
    seq: e.seq,
    run_id: e.run_id,
    kind: e.kind,
    v: e.v,
    at: e.at,
    payload: e.payload,
    prev: e.prev,
    hash: e.hash,
  };
  // An event the ledger already holds redacted (a run opened from a bundle) keeps its carried digest.
  if (e.digest !== undefined) base.digest = e.digest;
  if (!r.changed) return { line: base, changed: e.digest !== undefined };
  base.payload = r.value;
  base.digest = e.digest ?? digestEvent(e.seq, e.run_id, e.kind, e.v, e.at, e.payload);
  return { line: base, changed: true };
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

interface Entry {
  name: string;
  data: Buffer;
  /** What the output scan reads instead of `data` (report.html: without lines scanned in events.jsonl). */
  scanText?: string;
}

/** The rules of the share profile's own detectors (e-mail, IP, home paths) that fire in a text. */
function scanShare(text: string): string[] {
  return [...new Set(scanForSecrets(text, SHARE_DETECTORS).map((f) => f.rule))];
}

const SCAN_CHUNK = 4 * 1024 * 1024;

/**
 * Every detector over every entry, as the bytes that go into the zip. Returns "entry: rule" for each
 * that fires (rule names only: never the value).
 */
function scanEntries(entries: readonly Entry[], profile: RedactionProfile): string[] {
  const fired = new Set<string>();
  for (const entry of entries) {
    // Chunks end at a newline: a JSONL line, where every value sits, is never split.
    let start = 0;
    const buf = entry.scanText !== undefined ? Buffer.from(entry.scanText, 'utf8') : entry.data;
    while (start < buf.length) {
      let end = Math.min(buf.length, start + SCAN_CHUNK);
      if (end < buf.length) {
        const nl = buf.indexOf(10, end);
        end = nl < 0 ? buf.length : nl + 1;
      }
      const text = buf.toString('utf8', start, end);
      for (const f of scanForSecrets(text)) fired.add(`${entry.name}: ${f.rule}`);
      if (profile === 'share') for (const rule of scanShare(text)) fired.add(`${entry.name}: ${rule}`);
      start = end;
    }
  }
  return [...fired];
}

function zipOptions(e: Entry, mtime: Date) {
  // Large entries get a fast deflate level: export throughput matters more than a few percent of size.
  return { mtime, mode: 0o100644, compressionLevel: e.data.length > 1 << 20 ? 1 : 6 };
}

async function writeZip(entries: readonly Entry[], file: string, mtime: Date): Promise<void> {
  const zip = new yazl.ZipFile();
  for (const e of entries) zip.addBuffer(e.data, e.name, zipOptions(e, mtime));
  zip.end();
  await new Promise<void>((resolve, reject) => {
    const out = createWriteStream(file, { flags: 'wx', mode: 0o644 });
    out.on('error', reject);
    zip.outputStream.on('error', reject);
    out.on('close', resolve);
    zip.outputStream.pipe(out);
  });
}

/**
 * Writes an audit bundle (DESIGN.md, "Audit bundles"): redacted events.jsonl, final state and the
 * list of redacted lines per run, VERIFY.md, report.html, the manifest and, with `sign`, its
 * signature. The zip is written as `<out>.partial-<random>` and renamed only once complete and
 * scanned clean: no half-written bundle or bundle that still holds a secret is left under `out`.
 */
export async function exportBundle(ledger: LedgerReader, opts: ExportOptions): Promise<ExportResult> {
  const profile = opts.profile ?? 'share';
  const out = path.resolve(opts.out);
  if (existsSync(out)) {
    if (!opts.force)
      throw new ProofloopError('conflict', `${out} exists: choose another name or replace it (--force)`);
    if (statSync(out).isDirectory()) throw new ProofloopError('bad_args', `${out} is a folder`);
  }
  if (!existsSync(path.dirname(out)))
    throw new ProofloopError('not_found', `folder ${path.dirname(out)} does not exist`);
  const runs = requireRuns(ledger, opts.runIds);
  const now = opts.now ?? (() => new Date().toISOString());
  const createdAt = now();
  const redactor = bundleRedactor(ledger, profile);

  const entries: Entry[] = [];
  const manifestRuns: ManifestRun[] = [];
  const reportRuns: { run_id: string; lines: string[]; state: unknown }[] = [];
  let eventsRedacted = 0;

  runs.forEach((run, index) => {
    const dir = runDir(index, run.run_id);
    const before = redactor.counts();
    const lines: string[] = [];
    const redactions: string[] = [];
    let state: RunState = initialState(run.run_id);
    let first: LedgerEvent | null = null;
    let last: LedgerEvent | null = null;
    for (const e of ledger.iterate(run.run_id)) {
      const { line, changed } = redactEvent(e, redactor);
      const text = toJsonLine(line);
      lines.push(text);
      if (changed) redactions.push(`${line.seq} ${fastSha256(text)}`);
      state = evolve(state, line);
      first ??= line;
      last = line;
    }
    if (last && (last.seq !== run.head_seq || last.hash !== run.head_hash)) {
      throw new ProofloopError('conflict', `run ${run.run_id} changed while it was exported; try again`);
    }
    eventsRedacted += redactions.length;
    const rules = diffCounts(redactor.counts(), before);
    const eventsData = Buffer.from(lines.length ? lines.join('\n') + '\n' : '', 'utf8');
    entries.push(
      { name: `${dir}/events.jsonl`, data: eventsData },
      { name: `${dir}/state.json`, data: Buffer.from(JSON.stringify(state, null, 2) + '\n', 'utf8') },
      {
        name: `${dir}/redactions.txt`,
        data: Buffer.from(redactions.length ? redactions.join('\n') + '\n' : '', 'utf8'),
      },
    );
    manifestRuns.push({
      run_id: run.run_id,
      dir,
      source: run.source,
      status: run.status,
      task_id: run.task_id,
      variant: run.variant,
      events: lines.length,
      first_seq: first?.seq ?? 0,
      last_seq: last?.seq ?? 0,
      first_hash: first?.hash ?? null,
      head_hash: last?.hash ?? run.head_hash,
      redacted_events: redactions.length,
      rules,
    });
    reportRuns.push({ run_id: run.run_id, lines, state });
  });

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
  entries.push({ name: VERIFY_MD, data: Buffer.from(verifyMarkdown(manifest), 'utf8') });
  const report = renderReport(manifest, reportRuns);
  entries.push({ name: REPORT, data: Buffer.from(report.html, 'utf8'), scanText: report.scanText });
  for (const e of entries) manifest.files[e.name] = { sha256: sha256Bytes(e.data), bytes: e.data.length };
  const manifestBytes = Buffer.from(JSON.stringify(manifest, null, 2) + '\n', 'utf8');
  entries.unshift({ name: MANIFEST, data: manifestBytes });
  if (key)
    entries.splice(1, 0, {
      name: SIGNATURE,
      data: Buffer.from(JSON.stringify(signManifest(manifestBytes, key), null, 2) + '\n'),
    });

  const partial = `${out}.partial-${randomBytes(6).toString('hex')}`;
  try {
    // zlib deflates in the thread pool while this thread scans the very same bytes.
    const written = writeZip(entries, partial, new Date(Date.parse(createdAt) || Date.now()));
    let fired: string[];
    try {
      // Important: the bundle's own bytes pass every detector before it may exist under its name.
      fired = scanEntries(entries, profile);
    } finally {
      await written.catch(() => undefined);
    }
    await written;
    if (fired.length > 0) {
      throw new ProofloopError(
        'invalid_input',
        `refusing to write ${out}: a detector still fires on the redacted output (${fired.slice(0, 10).join('; ')}); ` +
          'add a rule to .proofloop/redact.json or report this as a redaction bug',
      );
    }
    // Durable before it takes the target name: a crash leaves the old file or the whole new one.
    const fd = openSync(partial, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(partial, out);
  } catch (e) {
    rmSync(partial, { force: true });
    throw e;
  }
  const bytes = statSync(out).size;
  return { file: out, bytes, sha256: sha256Bytes(readFileSync(out)), manifest };
}
