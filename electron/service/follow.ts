import type { LedgerEngine } from '../ledger/engine';
import type { ServiceContext } from './context';

/** Pages of the feed read per look: a burst beyond it is read at the next look. */
const MAX_PAGES = 20;

/**
 * Keeps a team ledger live for the app and web mode, as watch.ts keeps a runs folder: the engine's
 * cross-run feed (engine.ts: every committed event exactly once, whatever order the transactions of
 * other machines commit in) is read every `pollMs`, and each run's new seqs are pushed as one
 * `events.appended` (the page then reads them and the runs list). It starts at the feed's end
 * (feedEnd): what was there before the page opened is not news, and a ledger of millions of events
 * was read page by page, 10,000 events a query, before the first push.
 */
export function followEngine(
  engine: LedgerEngine,
  ctx: Pick<ServiceContext, 'emit'>,
  opts: { pollMs?: number } = {},
): { stop: () => void } {
  let cursor = '';
  let stopped = false;
  let busy = false;
  let caughtUp = false;

  const look = async () => {
    if (stopped || busy) return;
    busy = true;
    try {
      if (!caughtUp) {
        cursor = await engine.feedEnd();
        caughtUp = true;
        return;
      }
      const ranges = new Map<string, { from: number; to: number }>();
      for (let i = 0; i < MAX_PAGES; i++) {
        const page = await engine.feed(cursor);
        if (stopped) return;
        cursor = page.cursor;
        if (page.events.length === 0) break;
        for (const e of page.events) {
          const r = ranges.get(e.run_id);
          if (!r) ranges.set(e.run_id, { from: e.seq, to: e.seq });
          else {
            r.from = Math.min(r.from, e.seq);
            r.to = Math.max(r.to, e.seq);
          }
        }
      }
      for (const [run_id, r] of ranges)
        ctx.emit('events.appended', { run_id, from_seq: r.from, to_seq: r.to });
    } catch {
      // The server is unreachable for now (a restart, a failover): the next look goes on from the cursor.
    } finally {
      busy = false;
    }
  };
  void look();
  const timer = setInterval(() => void look(), opts.pollMs ?? 500);
  timer.unref();
  return {
    stop: () => {
      stopped = true;
      clearInterval(timer);
    },
  };
}
