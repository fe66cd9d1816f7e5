import type { NewEvent } from '../../shared/protocol';
import type { RunState } from '../../shared/state';
import type { CreateRunOptions, ImportedEvent } from './ledger';
import { canonicalJson } from '../../shared/protocol';
import { ProofloopError } from '../../shared/result';
import { sha256Bytes } from '../crypto';
import type { Finding, ReadQuery, RunRow, StoredEvent } from './types';
import { RunVerifier, digestRunIdOf, statedLinksOf, withRecorded, type VerifyReport } from './verify';

/**
 * The ledger behind one asynchronous interface, whatever engine keeps it: the embedded SQLite
 * ledger of a runs folder (sqlite-engine.ts, the default) or a team's PostgreSQL server
 * (postgres/engine.ts). Asynchronous because a networked engine needs it; the SQLite engine answers
 * from its synchronous Ledger at once.
 *
 * What both engines promise (test/integration/ledger-conformance.int.spec.ts holds them to it):
 * - a run's seq starts at 1 and grows by exactly 1; each event's hash chains to the one before;
 * - a run has one writer at a time: a second is refused by name (`conflict`), and a writer that
 *   lost its run (its lease expired and another took it) is refused at its next append;
 * - an append returns once it is durable, and what it returned is never lost;
 * - the cross-run feed gives every committed event exactly once, whatever order transactions
 *   commit in.
 */
export interface LedgerEngine {
  readonly engine: 'sqlite' | 'postgres';
  /** Where it is, for people: a folder, or the server URL without its password. */
  readonly location: string;

  createRun(runId: string, opts?: CreateRunOptions): Promise<void>;
  /** The run's one writer; `create`: made if missing (else not_found). */
  writer(runId: string, opts?: EngineWriterOptions): Promise<EngineWriter>;

  runs(): Promise<RunRow[]>;
  run(runId: string): Promise<RunRow | undefined>;
  /** Events of a run in seq order (from, to, kinds, limit as ReadQuery says). */
  read(runId: string, q?: ReadQuery): Promise<StoredEvent[]>;
  /** The run's events after `afterSeq`, gap-free, at most `limit`: how a live view follows one run. */
  tail(runId: string, afterSeq: number, limit?: number): Promise<StoredEvent[]>;
  event(runId: string, seq: number): Promise<StoredEvent | undefined>;
  /**
   * Recomputes every digest and link of the run (past the source lines its import stated but did
   * not store, meta.stated_links) and compares the end with the run's head; the problems recorded
   * at its import come first (withRecorded): the verdict of `proofloop verify <run>`.
   */
  verify(runId: string): Promise<VerifyReport>;
  /** The problems recorded for the run when it was imported (bad lines, gaps), in the order found. */
  findings(runId: string): Promise<Finding[]>;
  /** The state reconstructed at `seq` (nearest snapshot plus folds). */
  stateAt(runId: string, seq: number): Promise<{ seq: number; state: RunState; via: string }>;

  /**
   * New events of every run after `cursor` ('' for the start), in an order where an event of a
   * transaction that commits late is never skipped: at most `limit` events and the cursor to ask from next.
   */
  feed(cursor: string, limit?: number): Promise<FeedPage>;
  /**
   * The cursor after every event the feed would give now: where a reader that wants only what comes
   * next starts, without reading the ledger's past page by page.
   */
  feedEnd(): Promise<string>;

  /**
   * Stores already-chained events of a run that came from elsewhere (push, pull, import): the run is
   * created with `run`'s facts when missing; its head must be at `after` (by default the first
   * event's seq − 1) and the events after it, else `conflict`. A caller states `after` when the run
   * it copies has no events in between: an imported run keeps its lines' seqs, and a line that was
   * no event leaves a gap (at seq 1, or where a page of a push begins). Their hashes are stored as
   * given; they are not re-chained.
   */
  putChained(run: PortableRun, events: readonly ImportedEvent[], after?: number): Promise<void>;
  /**
   * What moves with a run besides its events (push, pull), in one transaction: its meta replaced
   * when it differs (the id its digests cover, the lines its import stated), and each of its
   * recorded findings not there yet (counted: a finding recorded twice is there twice). The run
   * must exist. Returns what changed: nothing, the second time.
   */
  putRecord(run: PortableRun, findings: readonly Finding[]): Promise<{ meta: boolean; findings: number }>;
  /** Events of a run as stored (payload text, hash, carried digest, source), seq from..from+limit-1: what push and pull move. */
  readChained(runId: string, from: number, limit: number): Promise<ImportedEvent[]>;

  /**
   * The digests (sha256 hex) of the artifacts this ledger holds for a run: the whole values its
   * events moved out (an import's, in `source.artifacts`), the tool outputs and requests a run of
   * the runner stored. What push and pull move besides events.
   */
  artifactDigests(runId: string): Promise<string[]>;
  /** A run's artifact as stored (redacted), checked against its digest; null when this ledger has none. */
  artifact(runId: string, digest: string): Promise<string | null>;
  /**
   * Stores artifacts of a run that came from elsewhere (push, pull), each refused unless it matches
   * its digest (`invalid_input`); the run must exist. Returns how many the run did not have.
   */
  putArtifacts(runId: string, items: readonly ArtifactItem[]): Promise<number>;

  close(): Promise<void>;
}

/** An artifact as stored: its sha256 (hex) and its text. */
export interface ArtifactItem {
  digest: string;
  text: string;
}

/** Refuses an artifact whose text does not hash to its digest (push and pull store only what they can check). */
export function checkArtifact(runId: string, a: ArtifactItem): Buffer {
  const bytes = Buffer.from(a.text, 'utf8');
  if (!/^[0-9a-f]{64}$/.test(a.digest) || sha256Bytes(bytes) !== a.digest)
    throw new ProofloopError(
      'invalid_input',
      `artifact ${a.digest.slice(0, 16)}… of run ${runId} does not match its digest: not stored`,
    );
  return bytes;
}

export interface EngineWriterOptions {
  label?: string;
  create?: CreateRunOptions | false;
  /**
   * The format of a read-only run a live receiver chains as it arrives (the OTLP receiver's runs,
   * 'otlp'): only such a writer may continue a run that was not executed (Ledger.writer's `live`).
   */
  live?: string;
  /** PostgreSQL: how long the lease lasts without an append or a renewal (ms). */
  leaseMs?: number;
  /**
   * PostgreSQL, for tests: each append's transaction is held open this many ms (a function: it may
   * differ per append) before it commits, as a slow client or network would hold it.
   */
  holdOpenMs?: () => number;
}

export interface EngineWriter {
  readonly runId: string;
  /** The fencing token of this writer's lease: every append carries it, a stale one is refused. */
  readonly fence: string;
  append(
    kind: string,
    payload: Record<string, unknown>,
    opts?: { v?: number; at?: string },
  ): Promise<StoredEvent>;
  /** One transaction: all the items or none. */
  appendBatch(items: readonly NewEvent[]): Promise<StoredEvent[]>;
  close(): Promise<void>;
}

export interface FeedEvent {
  run_id: string;
  seq: number;
  kind: string;
  hash: string;
}

export interface FeedPage {
  events: FeedEvent[];
  cursor: string;
}

/** What moves with a run between ledgers besides its events. */
export interface PortableRun {
  run_id: string;
  source: RunRow['source'];
  format: string;
  chained: boolean;
  origin: string | null;
  created_at: string;
  meta: Record<string, unknown>;
}

export function portableRun(r: RunRow): PortableRun {
  return {
    run_id: r.run_id,
    source: r.source,
    format: r.format,
    chained: r.chained,
    origin: r.origin,
    created_at: r.created_at,
    meta: r.meta,
  };
}

/** An event as putChained takes it. */
export function toImported(e: StoredEvent): ImportedEvent {
  return {
    seq: e.seq,
    kind: e.kind,
    v: e.v,
    at: e.at,
    payloadJson: JSON.stringify(e.payload),
    hash: e.hash,
    digest: e.redacted ? (e.digest ?? null) : null,
    line: e.source?.line ?? null,
    source: e.source ? JSON.stringify(sourceMeta(e.source)) : null,
  };
}

function sourceMeta(s: NonNullable<StoredEvent['source']>): Record<string, unknown> {
  const { line: _line, ...rest } = s;
  return rest;
}

/** verify() of either engine: the run's events read in pages, checked as they come. */
export async function verifyPaged(
  engine: Pick<LedgerEngine, 'read' | 'findings'>,
  run: RunRow,
  page = 5000,
): Promise<VerifyReport> {
  const v = new RunVerifier(run.run_id, {
    expectedHead: { seq: run.head_seq, hash: run.head_hash },
    digestRunId: digestRunIdOf(run),
    statedLinks: statedLinksOf(run),
  });
  for (let from = 1; ; from += page) {
    const events = await engine.read(run.run_id, { from, to: from + page - 1 });
    for (const e of events) v.push(e);
    if (events.length < page) break;
  }
  return withRecorded(v.finish(), await engine.findings(run.run_id), run.chained);
}

/** A finding as compared between ledgers: every field but the run it belongs to. */
export function findingKey(f: Finding): string {
  return JSON.stringify([f.code, f.file, f.line, f.seq, f.message, f.excerpt ?? null]);
}

/** The findings of `want` that `have` lacks, counted (a finding twice in `want` and once in `have`: once). */
export function missingFindings(want: readonly Finding[], have: readonly Finding[]): Finding[] {
  const count = new Map<string, number>();
  for (const f of have) count.set(findingKey(f), (count.get(findingKey(f)) ?? 0) + 1);
  const out: Finding[] = [];
  for (const f of want) {
    const k = findingKey(f);
    const n = count.get(k) ?? 0;
    if (n > 0) count.set(k, n - 1);
    else out.push(f);
  }
  return out;
}

/** Whether two metas say the same (compared as canonical JSON: key order does not matter). */
export function sameMeta(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  return canonicalJson(a) === canonicalJson(b);
}
