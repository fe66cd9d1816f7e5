import type { IngestResult } from './runs';
import type { PreparedPart } from './run-keys';

/**
 * Group commit for the receiver: requests decoded while the event loop was busy (with a commit, most
 * often: an append blocks this thread until its fsync is done) are appended together, one
 * transaction per run and so one fsync for the group, and every one of them is answered after that
 * commit, never before. A request that arrives alone is committed alone, one turn of the event loop
 * later (setImmediate: after the sockets that were readable are read, so a request's neighbours
 * that arrived with it join it).
 *
 * Measured in bench/otlp.ts (requests of 100 spans, 150 events; a commit's BEGIN/COMMIT with its
 * fsync ~3 ms of this thread's time on this disk, ~30 µs a span when each request commits alone):
 * with 2 requests in flight the groups are of 1.0-1.1 (the sender's next request is sent after an
 * answer, while the other one is being appended); with 8 in flight, 2.6-3.4 requests a commit
 * while this thread also mapped and redacted, 1.1-1.3 since the decode thread does (requests pile
 * up behind that thread now, not behind this one's commits).
 */
export class GroupCommit {
  private pending: {
    parts: readonly PreparedPart[];
    records: number;
    done: (r: IngestResult | Error) => void;
  }[] = [];
  private closed = false;
  private scheduled = false;
  /** Requests and commits (groups) so far: the bench reports requests per commit. */
  readonly stats = { requests: 0, groups: 0 };

  constructor(
    /** LiveRuns (a runs folder: appends return committed) or EngineLiveRuns (a team ledger: they resolve committed). */
    private readonly runs: {
      ingestMany(requests: readonly (readonly PreparedPart[])[]): IngestResult[] | Promise<IngestResult[]>;
    },
    /** A group stops growing at this many records; the rest goes in the next one. */
    private readonly maxRecords = 4096,
  ) {}

  /** Resolves once the request's events are committed (or refused). */
  submit(parts: readonly PreparedPart[]): Promise<IngestResult> {
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(new Error('the receiver is closing'));
      let records = 0;
      for (const p of parts) records += p.records;
      this.pending.push({ parts, records, done: (r) => (r instanceof Error ? reject(r) : resolve(r)) });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Requests not yet appended are refused (not appended after the receiver let its writers go). */
  close(): void {
    this.closed = true;
    const left = this.pending.splice(0);
    for (const g of left) g.done(new Error('the receiver is closing'));
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    let n = 0;
    let records = 0;
    while (n < this.pending.length && (n === 0 || records + this.pending[n]!.records <= this.maxRecords)) {
      records += this.pending[n]!.records;
      n++;
    }
    const group = this.pending.splice(0, n);
    this.scheduled = this.pending.length > 0;
    if (this.scheduled) setImmediate(() => this.flush());
    this.stats.requests += group.length;
    this.stats.groups++;
    const fail = (e: unknown) => {
      for (const g of group) g.done(e instanceof Error ? e : new Error(String(e)));
    };
    let results: IngestResult[] | Promise<IngestResult[]>;
    try {
      results = this.runs.ingestMany(group.map((g) => g.parts));
    } catch (e) {
      return fail(e);
    }
    if (results instanceof Promise) {
      results.then((r) => group.forEach((g, i) => g.done(r[i]!)), fail);
      return;
    }
    const done = results;
    group.forEach((g, i) => g.done(done[i]!));
  }
}
