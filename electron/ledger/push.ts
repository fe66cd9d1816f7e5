import { ProofloopError } from '../../shared/result';
import { portableRun, type LedgerEngine } from './engine';
import { copyArtifacts } from './artifacts';

export interface PushResult {
  run_id: string;
  /** copied: new there; extended: there was a prefix; same: nothing to do; ahead: there is longer, this run its prefix. */
  action: 'copied' | 'extended' | 'same' | 'ahead';
  events: number;
  head_seq: number;
  head_hash: string;
  /** Recorded findings added there (those it lacked). */
  findings: number;
  /** Whether its meta there was replaced by this one's (it differed). */
  meta: boolean;
  /** Artifacts copied there (those it lacked). */
  artifacts: number;
  /** Artifacts the run names here that this side does not hold (or that no longer match their digest): not copied. */
  artifacts_missing: number;
}

const PAGE = 10_000;
const NOTHING = { meta: false, findings: 0 };

/**
 * Copies runs from one ledger to another as they are stored: the same seqs, payload bytes, hashes
 * and carried digests, and what its verify and inspection read besides (its meta: the id its
 * digests cover, the source lines its import stated; its recorded findings) and its artifacts (the
 * whole values its events moved out, its tool outputs), so a run verifies and inspects the same in
 * both (`proofloop push` and `pull`). A run
 * already there is continued only when it is a prefix of this one (its head hash is this run's
 * hash at that seq): pushing twice is a no-op, and a run whose chain differs is refused by name.
 */
export async function pushRuns(
  from: LedgerEngine,
  to: LedgerEngine,
  runIds: readonly string[],
): Promise<PushResult[]> {
  const out: PushResult[] = [];
  for (const id of runIds) {
    const src = await from.run(id);
    if (!src) throw new ProofloopError('not_found', `no run ${id} in ${from.location}`);
    const dst = await to.run(id);
    let start = 1;
    let action: PushResult['action'] = 'copied';
    if (dst) {
      const at = Math.min(dst.head_seq, src.head_seq);
      const mine = at === 0 ? null : (await from.readChained(id, at, 1))[0];
      const theirs = at === 0 ? null : (await to.readChained(id, at, 1))[0];
      if (mine?.hash !== theirs?.hash) {
        throw new ProofloopError(
          'conflict',
          `run ${id} differs from the run ${id} at ${to.location}: at seq ${at} its hash is ${theirs?.hash.slice(0, 16)}… there and ${mine?.hash.slice(0, 16)}… here; refused`,
        );
      }
      if (dst.head_seq >= src.head_seq) {
        const same = dst.head_seq === src.head_seq;
        // A longer run there keeps its own record: this one's is of a prefix.
        const rec = same ? await to.putRecord(portableRun(src), await from.findings(id)) : NOTHING;
        out.push({
          run_id: id,
          action: same ? 'same' : 'ahead',
          events: 0,
          head_seq: dst.head_seq,
          head_hash: dst.head_hash,
          ...rec,
          // A run pushed before its artifacts moved with it gets them now.
          ...(await copyArtifacts(from, to, id)),
        });
        continue;
      }
      start = dst.head_seq + 1;
      action = dst.head_seq === 0 ? 'copied' : 'extended';
    }
    const run = portableRun(src);
    let n = 0;
    if (!dst) await to.putChained(run, []);
    // From the last seq read on: an imported run may lack seqs (lines that were no event), so each
    // page says where the head it continues is, not only its first seq.
    let head = start - 1;
    for (let seq = start; seq <= src.head_seq;) {
      const events = await from.readChained(id, seq, PAGE);
      if (events.length === 0) break;
      await to.putChained(run, events, head);
      n += events.length;
      head = events[events.length - 1]!.seq;
      seq = head + 1;
    }
    const after = await to.run(id);
    if (after?.head_hash !== src.head_hash || after.head_seq !== src.head_seq) {
      throw new ProofloopError(
        'io',
        `run ${id}: after the copy its head at ${to.location} is seq ${after?.head_seq}, not seq ${src.head_seq} as here`,
      );
    }
    const rec = await to.putRecord(run, await from.findings(id));
    out.push({
      run_id: id,
      action,
      events: n,
      head_seq: src.head_seq,
      head_hash: src.head_hash,
      ...rec,
      ...(await copyArtifacts(from, to, id)),
    });
  }
  return out;
}
