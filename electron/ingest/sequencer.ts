import type { LineResult } from './block';
import { ZERO_HASH } from '../../shared/protocol';
import { dict } from '../../shared/dict';
import { ChainVerifier, type StatedLink } from '../ledger/verify';
import type { ImportedEvent } from '../ledger/ledger';
import type { Finding, FindingCode } from '../ledger/types';
import {
  digestEvent as fastDigest,
  digestEventCanonical,
  digestEventCanonicalBytes,
  linkHash as link,
} from '../crypto';
import type { Format, Parsed, ParsedBad, ParsedEvent } from './parse';
import type { Seal } from './importer';

/** What the importer carries between transactions, per run of a file (kept in `imports.state`). */
export interface FileRun {
  /** The ledger's run id (the file's, unless it had to be renamed). */
  id: string;
  /** The run id as the file names it. */
  src: string;
  seq: number;
  hash: string;
  fmt: Format;
  /** Facts the run's first event gave for `runs.meta` (MappedEvent.runMeta). */
  meta?: Record<string, unknown>;
  /**
   * ProofLoop lines of this run that are no event (too deep to parse), by the chain fields they
   * state (the first 1,000): the ledger's verify links over them as the import did.
   */
  links?: StatedLink[];
}

export interface FileState {
  format: Format | null;
  /** The run a seed000/proofloop file is about: its folder name (runs/<id>/) or its first line's run_id. */
  fileRun: string | null;
  runs: Record<string, FileRun>;
  lastSrc: string | null;
  /**
   * Seqs that lines which are no events (they do not parse, say) seem to hold, per source run, above
   * its head: a later gap over them is theirs, not a seq that no line holds.
   */
  held?: Record<string, number[]>;
  /** A truncated last line already reported (not consumed): where it starts. */
  tail?: { offset: number; line: number } | null;
  /** Where a last line imported without its newline ends (that newline is no line of its own). */
  open?: number | null;
  /** A `*.jsonl` that no format claims by its first record: not read. */
  unclaimed?: boolean;
  /** The seal's byte ranges so far (see Seal in importer.ts). */
  seal?: Seal['ranges'];
  /** Lines before each seal range's start (to name the first line that differs: seal-check.ts). */
  sealLines?: number[];
  /** The file's modification time (ms) when it was last imported or checked. */
  mtime?: number;
  /**
   * A rewrite already reported: the size and head digest it was reported for, and the first line
   * that differed (null: not known).
   */
  rewritten?: { size: number; head: string; line?: number | null } | null;
}

export const emptyState = (fileRun: string | null = null): FileState => ({
  format: null,
  fileRun,
  runs: dict(),
  lastSrc: null,
  tail: null,
  rewritten: null,
});

/**
 * A state read back from `imports.state`: its per-run records keyed by source run ids again in
 * objects without a prototype (a run named `constructor` or `__proto__` is a run like any other).
 */
export function reviveState(json: string): FileState {
  const st = JSON.parse(json) as FileState;
  st.runs = dict(st.runs);
  if (st.held) st.held = dict(st.held);
  return st;
}

/** An event ready for `Ledger.insertImported`, with the ledger run it goes to. */
export interface Row extends ImportedEvent {
  run_id: string;
}

export interface PendingFinding extends Finding {
  /** The file's run the finding belongs to (source id), resolved to a ledger id at commit. */
  src: string | null;
}

export interface SequencerOptions {
  file: string | null;
  /** Picks the ledger run id of a run first seen in this file. */
  resolveRunId: (src: string, fmt: Format) => string;
  /** verify: chained runs go through ChainVerifier and nothing is stored. */
  mode: 'import' | 'verify';
  /** The run of a file whose lines name none (a Claude Code session: its file's name). */
  defaultRun?: string;
}

/**
 * The ordered half of import: format consistency, run_id per file, seq continuity, the chain, and
 * seed 004's seq numbering. Parsing (formats.ts) needs no order and may run elsewhere.
 */
export class Sequencer {
  rows: Row[] = [];
  findings: PendingFinding[] = [];
  /** Runs first seen since the last drain, for the importer to create. */
  created: FileRun[] = [];
  /** Runs whose stated links (FileRun.links) grew since the last drain. */
  linked = new Set<FileRun>();
  /** verify mode: one ChainVerifier per chained run, and counts. */
  readonly verifiers = new Map<string, ChainVerifier>();
  readonly counts = new Map<string, number>();

  constructor(
    readonly state: FileState,
    private readonly opts: SequencerOptions,
  ) {}

  finding(
    code: FindingCode,
    line: number | null,
    seq: number | null,
    message: string,
    src: string | null,
    excerpt: string | null = null,
  ): void {
    this.findings.push({
      code,
      file: this.opts.file,
      line,
      seq,
      message,
      excerpt,
      src: src ?? this.state.fileRun ?? this.state.lastSrc,
    });
  }

  /** The results of one block of complete lines, the first being line `after + 1`. */
  pushLines(results: readonly LineResult[], after: number): void {
    let n = after;
    for (const r of results) {
      n += 1;
      if (r.t === 'blank') continue;
      if (r.t === 'not_utf8') this.finding('not_utf8', n, null, r.message, null);
      else if (r.t === 'multi') for (const p of r.list) this.push(p, n);
      else this.push(r, n);
    }
  }

  /** A line over the length bound: skipped without ever being held whole. */
  tooLong(line: number, bytes: number, seq: number | null = null): void {
    // The seq its first bytes name is held by this line: a gap over it is not "no line holds it".
    if (seq !== null) this.hold(this.state.fileRun ?? this.state.lastSrc ?? '', seq);
    this.finding('line_too_long', line, seq, `a line of ${bytes} bytes is over the bound; skipped`, null);
  }

  push(p: Parsed, line: number): void {
    const st = this.state;
    if (p.t === 'bad') {
      if (p.link && p.seq !== null && this.linkThrough(p, p.seq, p.link, line)) return;
      const src = p.src && st.runs[p.src] ? p.src : null;
      if (p.seq !== null) this.hold(p.src ?? st.fileRun ?? st.lastSrc ?? '', p.seq);
      this.finding(p.code, line, p.seq, p.message, src, p.excerpt);
      return;
    }
    if (st.format === null) st.format = p.fmt;
    const src = p.src || st.fileRun || this.opts.defaultRun || '';
    if (p.fmt === 'proofloop' || p.fmt === 'seed000') {
      if (st.fileRun === null) st.fileRun = src;
      else if (src !== st.fileRun) {
        this.finding(
          'run_id_mismatch',
          line,
          p.seq,
          `run_id "${src}" in a file of run "${st.fileRun}": not imported`,
          st.fileRun,
        );
        return;
      }
    }
    let run = st.runs[src];
    if (!run) {
      run = { id: this.opts.resolveRunId(src, p.fmt), src, seq: 0, hash: ZERO_HASH, fmt: p.fmt };
      if (p.runMeta) run.meta = p.runMeta;
      st.runs[src] = run;
      this.created.push(run);
    }
    st.lastSrc = src;
    this.counts.set(src, (this.counts.get(src) ?? 0) + 1);
    if (p.seq === 0) p.seq = run.seq + 1;
    if (this.opts.mode === 'verify' && p.fmt === 'proofloop' && p.prev !== null && p.hash !== null) {
      if (p.invalid !== null) this.finding('invalid_event', line, p.seq, p.invalid, src);
      this.verifyChained(p, run, line);
      return;
    }
    const expect = run.seq + 1;
    if (p.seq !== expect) {
      if (p.seq > expect) this.gap(src, expect, p.seq, line);
      else {
        const dup = p.seq === run.seq;
        this.finding(
          dup ? 'seq_duplicate' : 'seq_out_of_order',
          line,
          p.seq,
          `expected seq ${expect}, found ${p.seq}: ${dup ? 'a duplicate' : 'out of order'}, not imported`,
          src,
        );
        return;
      }
    }
    if (p.invalid !== null)
      this.finding('invalid_event', line, p.seq, `${p.invalid} (stored as written)`, src);
    if (p.rounded !== null) {
      this.finding(
        'number_rounded',
        line,
        p.seq,
        `integers beyond 2^53 cannot be held exactly by a JSON number and are stored rounded: ${p.rounded.slice(0, 3).join(', ')}`,
        src,
      );
    }
    let hash: string;
    let digest = p.digest;
    if (p.fmt === 'proofloop') {
      const digestOk = digest !== null;
      hash = p.hash ?? link(run.hash, digest ?? '');
      // The ledger stores no prev (it is the hash of the stored event before): a break is a finding.
      if (p.prev !== run.hash) {
        this.finding(
          'chain_broken',
          line,
          p.seq,
          `prev of seq ${p.seq} is not the hash of the event before it`,
          src,
        );
      }
      if (!p.hashOk && digestOk) {
        this.finding(
          'chain_broken',
          line,
          p.seq,
          `seq ${p.seq}: content does not match its hash (altered after it was written)`,
          src,
        );
      }
    } else {
      // Unchained formats are sealed: chained as ProofLoop would have, over the run id as the
      // source names it (the one rule for stored ids: a run stored under another id keeps its
      // source's digests, and meta.source_run_id says which id they cover). The parser digested
      // lines that name their run; the others (the file's run) and redacted ones are digested here.
      // An unredacted payload's stored text is its canonical JSON.
      if (digest === null || p.src !== src)
        digest =
          p.orig !== null
            ? fastDigest(p.seq, src, p.kind, p.v, p.at, p.orig)
            : p.origUtf8 !== undefined
              ? digestEventCanonicalBytes(p.seq, src, p.kind, p.v, p.at, p.origUtf8)
              : digestEventCanonical(p.seq, src, p.kind, p.v, p.at, p.json);
      hash = link(run.hash, digest);
    }
    run.seq = p.seq;
    run.hash = hash;
    if (st.held?.[src]) this.unhold(src, p.seq);
    this.rows.push({
      run_id: run.id,
      seq: p.seq,
      kind: p.kind,
      v: p.v,
      at: p.at,
      payloadJson: p.json,
      hash,
      // The original digest is kept only where the stored payload is not what was hashed.
      digest: p.redacted ? digest : null,
      line,
      source: p.source,
    });
  }

  /**
   * A ProofLoop line whose content could not be taken as an event (nested too deep to walk) but
   * that states its chain fields: its link back is checked with the `prev` it states and the next
   * line links to the `hash` it states, so one such line breaks no link after it. Its finding says
   * that its own content could not be checked. False when it cannot stand in its run's chain (not a
   * ProofLoop file, another run's id, a seq out of order): the line is then a finding as any other.
   */
  private linkThrough(
    p: ParsedBad,
    seq: number,
    link: { prev: string; hash: string },
    line: number,
  ): boolean {
    const st = this.state;
    // A file whose first line is this one has no format yet: the chain fields it states say it is
    // ProofLoop's (a seed file has none).
    if (st.format === null) st.format = 'proofloop';
    if (st.format !== 'proofloop') return false;
    const src = p.src || st.fileRun || this.opts.defaultRun || '';
    if (st.fileRun !== null && src !== st.fileRun) return false;
    let run = st.runs[src];
    if (run && seq !== run.seq + 1) return false;
    if (!run) {
      if (seq !== 1) return false;
      run = { id: this.opts.resolveRunId(src, 'proofloop'), src, seq: 0, hash: ZERO_HASH, fmt: 'proofloop' };
      st.runs[src] = run;
      st.fileRun ??= src;
      this.created.push(run);
    }
    st.lastSrc = src;
    if (this.opts.mode === 'verify') {
      let v = this.verifiers.get(src);
      if (!v) this.verifiers.set(src, (v = new ChainVerifier(this.opts.file)));
      v.link(seq, link.prev, link.hash, line);
      run.seq = v.head.seq;
      run.hash = v.head.hash;
    } else {
      if (link.prev !== run.hash)
        this.finding(
          'chain_broken',
          line,
          seq,
          `prev of seq ${seq} is not the hash of the event before it`,
          src,
        );
      run.seq = seq;
      run.hash = link.hash;
      if ((run.links ??= []).length < 1000) run.links.push({ seq, prev: link.prev, hash: link.hash });
      this.linked.add(run);
    }
    this.finding(
      p.code,
      line,
      seq,
      `${p.message}: its own content could not be checked; the chain links over it by the prev and hash it states`,
      src,
      p.excerpt,
    );
    return true;
  }

  /** A seq a line that is no event seems to hold (kept until the run passes it; at most 1,000). */
  private hold(src: string, seq: number): void {
    const held = (this.state.held ??= dict());
    const list = (held[src] ??= []);
    if (list.length < 1000 && seq > (this.state.runs[src]?.seq ?? 0)) list.push(seq);
  }

  private unhold(src: string, upTo: number): void {
    const held = this.state.held!;
    const list = held[src]!.filter((s) => s > upTo);
    if (list.length > 0) held[src] = list;
    else delete held[src];
  }

  /** seqs from..to-1 are not in the ledger: a gap only for those that no line holds. */
  private gap(src: string, from: number, to: number, line: number): void {
    const held = new Set((this.state.held?.[src] ?? []).filter((s) => s >= from && s < to));
    if (held.size >= to - from) return;
    const missing: string[] = [];
    let s = from;
    while (s < to && missing.length < 5) {
      while (s < to && held.has(s)) s++;
      if (s >= to) break;
      let e = s;
      while (e + 1 < to && !held.has(e + 1)) e++;
      missing.push(e > s ? `${s}–${e}` : `${s}`);
      s = e + 1;
    }
    const heldNote =
      held.size > 0 ? ` (${held.size} more are on lines that are no events: see their findings)` : '';
    this.finding(
      'seq_gap',
      line,
      to,
      `expected seq ${from}, found ${to}: no line holds seq ${missing.join(', ')}${heldNote}`,
      src,
    );
  }

  private verifyChained(p: ParsedEvent, run: FileRun, line: number): void {
    let v = this.verifiers.get(p.src);
    if (!v) {
      v = new ChainVerifier(this.opts.file);
      this.verifiers.set(p.src, v);
    }
    v.push(
      {
        seq: p.seq,
        run_id: p.src,
        kind: p.kind,
        v: p.v,
        at: p.at,
        payload: p.payload,
        prev: p.prev!,
        hash: p.hash!,
        digest: p.digest!,
      },
      line,
    );
    run.seq = v.head.seq;
    run.hash = v.head.hash;
  }

  drain(): { rows: Row[]; findings: PendingFinding[]; created: FileRun[]; linked: FileRun[] } {
    // A run's meta goes to the runs table once: it is not carried in the file's stored state.
    const created = this.created.map((r) => ({ ...r }));
    for (const r of this.created) delete r.meta;
    const out = { rows: this.rows, findings: this.findings, created, linked: [...this.linked] };
    this.rows = [];
    this.findings = [];
    this.created = [];
    this.linked.clear();
    return out;
  }
}
