import { ZERO_HASH, chainLink, digestParts, type LedgerEvent } from '../../shared/protocol';
import { sha256Hex } from '../crypto';
import type { Finding, RunRow } from './types';

export interface VerifyReport {
  ok: boolean;
  run_id: string;
  events: number;
  head_seq: number;
  head_hash: string;
  chained: boolean;
  findings: Finding[];
}

/**
 * Incremental chain check over events in seq order, trusting nothing but the math: seq
 * continuity, each digest recomputed (a redacted event's carried digest is all there is to use),
 * each prev equal to the hash before it, each hash recomputed.
 */
export class ChainVerifier {
  private expectSeq = 1;
  private prevHash = ZERO_HASH;
  count = 0;
  readonly findings: Finding[] = [];

  /**
   * @param digestRunId the run id the digests cover when it is not the events' own: a run stored
   * under a new id (an import or a bundle whose id was taken) keeps its source's digests.
   */
  constructor(
    private readonly file: string | null = null,
    private readonly maxFindings = 1000,
    private readonly digestRunId: string | null = null,
  ) {}

  get head(): { seq: number; hash: string } {
    return { seq: this.expectSeq - 1, hash: this.prevHash };
  }

  push(e: LedgerEvent & { redacted?: boolean }, line: number | null = null): void {
    this.count += 1;
    this.checkSeq(e.seq, line);
    // A redacted event carries the digest of its original content; any other is recomputed.
    const digest =
      e.digest ?? digestParts(e.seq, this.digestRunId ?? e.run_id, e.kind, e.v, e.at, e.payload, sha256Hex);
    this.checkPrev(e.seq, e.prev, line);
    const hash = chainLink(e.prev, digest, sha256Hex);
    if (hash !== e.hash) {
      this.add({
        code: 'chain_broken',
        file: this.file,
        line,
        seq: e.seq,
        message: `seq ${e.seq}: content does not match its hash (altered after it was written)`,
      });
    }
    this.prevHash = e.hash;
    this.expectSeq = Math.max(this.expectSeq, e.seq + 1);
  }

  /**
   * A line whose content could not be checked (nested too deep to parse), by the chain fields it
   * states: its seq and its link back are checked, and the next line links to the hash it states.
   */
  link(seq: number, prev: string, hash: string, line: number | null = null): void {
    this.checkSeq(seq, line);
    this.checkPrev(seq, prev, line);
    this.prevHash = hash;
    this.expectSeq = Math.max(this.expectSeq, seq + 1);
  }

  private checkPrev(seq: number, prev: string, line: number | null): void {
    if (prev !== this.prevHash) {
      this.add({
        code: 'chain_broken',
        file: this.file,
        line,
        seq,
        message: `prev of seq ${seq} is not the hash of the event before it`,
      });
    }
  }

  private checkSeq(seq: number, line: number | null): void {
    if (seq !== this.expectSeq) {
      const code =
        seq < this.expectSeq
          ? seq === this.expectSeq - 1
            ? 'seq_duplicate'
            : 'seq_out_of_order'
          : 'seq_gap';
      this.add({
        code,
        file: this.file,
        line,
        seq: seq,
        message: `expected seq ${this.expectSeq}, found ${seq}`,
      });
    }
  }

  private add(f: Finding): void {
    if (this.findings.length < this.maxFindings) this.findings.push(f);
  }
}

export interface VerifyOptions {
  file?: string | null;
  expectedHead?: { seq: number; hash: string };
  /** See ChainVerifier. */
  digestRunId?: string | null;
  /** Lines of the run's source that are no stored event, by the chain fields they state (statedLinksOf). */
  statedLinks?: readonly StatedLink[];
}

/**
 * A run's events checked as they come (in seq order, in one go or page by page), with the lines
 * its import stated but did not store: what verifyEvents does over an iterable, for a reader that
 * gets its events a page at a time (engine.ts, verifyPaged).
 */
export class RunVerifier {
  private readonly v: ChainVerifier;
  private readonly links: readonly StatedLink[];
  private li = 0;
  constructor(
    private readonly runId: string,
    private readonly opts: VerifyOptions = {},
  ) {
    this.v = new ChainVerifier(opts.file ?? null, undefined, opts.digestRunId ?? null);
    this.links = opts.statedLinks ?? [];
  }

  push(e: LedgerEvent & { redacted?: boolean }): void {
    let linked = false;
    for (; this.li < this.links.length && this.links[this.li]!.seq < e.seq; this.li++) {
      const l = this.links[this.li]!;
      this.v.link(l.seq, l.prev, l.hash);
      linked = true;
    }
    // A stored event's prev is the hash of the stored event before it: past a stated link, the
    // event links to the hash that line states.
    this.v.push(linked ? { ...e, prev: this.v.head.hash } : e);
  }

  finish(): VerifyReport {
    // Links past the last stored event link nothing stored to them (the run's head is that event);
    // the import checked their own link back.
    const { v, opts } = this;
    const head = v.head;
    if (opts.expectedHead && (opts.expectedHead.seq !== head.seq || opts.expectedHead.hash !== head.hash)) {
      v.findings.push({
        code: 'head_mismatch',
        file: opts.file ?? null,
        line: null,
        seq: head.seq,
        message: `run head is seq ${opts.expectedHead.seq} ${opts.expectedHead.hash.slice(0, 12)}…, events end at seq ${head.seq} ${head.hash.slice(0, 12)}…`,
      });
    }
    return {
      ok: v.findings.length === 0,
      run_id: this.runId,
      events: v.count,
      head_seq: head.seq,
      head_hash: head.hash,
      chained: true,
      findings: v.findings,
    };
  }
}

export function verifyEvents(
  runId: string,
  events: Iterable<LedgerEvent & { redacted?: boolean }>,
  opts: VerifyOptions = {},
): VerifyReport {
  const r = new RunVerifier(runId, opts);
  for (const e of events) r.push(e);
  return r.finish();
}

/**
 * A stored run's verdict: the problems recorded when it was imported (the findings table) first,
 * then what checking its stored events found that they do not already say (an imported gap or
 * broken link shows up again when the stored events are checked: said once). The one rule of
 * `proofloop verify <run>` on either engine.
 */
export function withRecorded(
  report: VerifyReport,
  recorded: readonly Finding[],
  chained: boolean,
): VerifyReport {
  const known = new Set(recorded.map((f) => `${f.code}@${f.seq}`));
  const findings = [...recorded, ...report.findings.filter((f) => !known.has(`${f.code}@${f.seq}`))];
  return { ...report, chained, ok: findings.length === 0, findings };
}

/** A line that is no stored event, by the chain fields it states (a ProofLoop line too deep to parse). */
export interface StatedLink {
  seq: number;
  prev: string;
  hash: string;
}

/** The stated links an import recorded on a run (runs.meta.stated_links), in seq order. */
export function statedLinksOf(run: Pick<RunRow, 'meta'>): StatedLink[] {
  const list = (run.meta as { stated_links?: unknown }).stated_links;
  if (!Array.isArray(list)) return [];
  return (list as StatedLink[])
    .filter((l) => typeof l?.seq === 'number' && typeof l.prev === 'string' && typeof l.hash === 'string')
    .sort((a, b) => a.seq - b.seq);
}

/**
 * The run id a stored run's digests cover: its source's when it was stored under a new id (an
 * imported run whose id was taken, meta.source_run_id; a bundle's, meta.bundle.renamed_from).
 */
export function digestRunIdOf(run: Pick<RunRow, 'run_id' | 'meta'>): string {
  const meta = run.meta as { source_run_id?: unknown; bundle?: { renamed_from?: unknown } };
  const from = meta.bundle?.renamed_from ?? meta.source_run_id;
  return typeof from === 'string' && from.length > 0 ? from : run.run_id;
}
