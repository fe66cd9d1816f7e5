import { parentPort, workerData } from 'node:worker_threads';
import { Ledger } from '../ledger';
import { Activity, type ActivityCell } from '../state/activity';
import { buildSnapshotsInBackground } from '../state/background';
import { ingestFolder } from './index';
import { lowerThreadPriority } from '../workers';
import type { FolderWorkerMessage } from './background';

/**
 * A folder's import in a thread of its own, on its own connection to the folder's ledger (see
 * background.ts), then the snapshots its runs lack, which the parent would otherwise build a slice
 * at a time between the page's requests. 'abort' from the parent stops either between two steps,
 * as closing the folder does.
 */
const port = parentPort!;
// Ten nice levels below the thread answering the page (and the browser), and so are the parse
// workers started from here, which inherit it.
lowerThreadPriority(10);
const stop = new AbortController();
let cancelSnapshots = (): void => undefined;
port.on('message', (m: unknown) => {
  if (m !== 'abort') return;
  stop.abort();
  cancelSnapshots();
});
const post = (m: FolderWorkerMessage): void => port.postMessage(m);
let ledger: Ledger | null = null;
try {
  const data = workerData as { folder: string; activity?: ActivityCell };
  const activity = data.activity ? Activity.of(data.activity) : null;
  ledger = Ledger.open(data.folder, { appendHelper: false });
  let last = 0;
  const summary = await ingestFolder(
    ledger,
    (p) => {
      // The parent passes progress on at most every 250 ms; a message per block is more than that.
      const now = performance.now();
      if (p.bytes < p.total && now - last < 100) return;
      last = now;
      post({ t: 'progress', ...p });
    },
    { signal: stop.signal, onCommit: () => post({ t: 'commit' }) },
  );
  post({ t: 'done', summary });
  if (!summary.aborted && !stop.signal.aborted) {
    const job = buildSnapshotsInBackground(ledger, {
      onProgress: (p) => post({ t: 'snapshots', ...p }),
      busy: activity ? () => activity.busy() : undefined,
    });
    cancelSnapshots = job.cancel;
    await job.done;
  }
} catch (e) {
  post({ t: 'error', message: (e as Error).message });
} finally {
  ledger?.close();
  port.close();
}
