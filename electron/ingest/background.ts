import type { Ledger } from '../ledger';
import type { ActivityCell } from '../state/activity';
import type { BackgroundProgress } from '../state/background';
import { startWorker } from '../workers';
import { ingestFolder, type IngestControl, type IngestProgress, type IngestSummary } from './index';
import { parsedBlocks } from './source';

/**
 * What the first commit reads: ~170 lines of a Claude Code session, more than its first screen.
 * As in the parallel reader's blocks: a page opened at a seq the first commit lacks shows the
 * run's head until it is imported, and stays there (the big-lines e2e test's seq 2 is in it).
 */
const FIRST_BLOCK = 256 << 10;
/** What this thread imports before a worker takes over (see ingestFolderInWorker). */
export const SMALL_IMPORT = 4 << 20;

/**
 * A folder's import for a process that also serves a page (serve, the app): in a worker thread
 * with its own SQLite connection, so the thread that answers the page never waits for the
 * import's work. In that thread a block of MBs, a commit or the seal's hashing ran to its end
 * before any request was answered: with a 256 MB session a call waited 62 ms at the median and
 * 396 ms at p95, up to 0.5 s, under load (bench/sessions.ts, call_during_import_ms). WAL lets this
 * thread read what the import has committed while it writes; the watcher's poll of the runs table
 * (pollSoon after each commit) pushes the new rows, as it does for any other writer.
 *
 * Where no worker can be started (a bundle without it), or the worker fails, the import runs here,
 * from the progress the worker committed: nothing is imported twice (importer.ts).
 */
export type FolderWorkerMessage =
  | { t: 'progress'; file: string; bytes: number; total: number }
  | { t: 'commit' }
  | { t: 'done'; summary: IngestSummary }
  | ({ t: 'snapshots' } & BackgroundProgress)
  | { t: 'error'; message: string };

export interface ApartOptions {
  /** Progress of the snapshots the worker builds after the import. */
  onSnapshots?: (p: BackgroundProgress) => void;
  /** Given the worker's end, once it has started (it may outlive the import, building snapshots). */
  onWorker?: (ended: Promise<void>) => void;
  /** The page's activity: the worker's snapshots wait while the page is being used. */
  activity?: ActivityCell;
}

/** The summary, and whether the worker builds the runs' snapshots after it (then this thread need not). */
export type ApartSummary = IngestSummary & { snapshotsApart?: boolean };

export async function ingestFolderInWorker(
  ledger: Ledger,
  onProgress?: IngestProgress,
  control: IngestControl = {},
  apart: ApartOptions = {},
): Promise<ApartSummary> {
  // The first commit is made here: a worker takes ~0.3–0.6 s to load its bundle on a busy
  // machine, and the page waits for those first rows. The import stops after it (losing nothing:
  // a stop drops only what is not committed) and the worker goes on from the stored progress.
  //
  // A small folder (a few sessions) is imported here whole: starting the worker (its bundle, its
  // SQLite connection, its heap) cost more time and memory than the import itself: 5 small Claude
  // Code sessions, first messages ~1 s later and ~40 MB more peak RSS with it (bench/peer.ts). The
  // import goes on here while what it has read, with the rest of the file it reads, stays under
  // SMALL_IMPORT; past that (a large file at once), after its next commit, the worker takes over.
  const first = new AbortController();
  const signals = control.signal ? [control.signal, first.signal] : [first.signal];
  const read = new Map<string, number>();
  let readHere = 0;
  // Whether the block just told of was committed: the importer commits a block, then tells its
  // progress (a progress says "finished" only once it is committed), so the hand-over to the
  // worker is decided there, right after a commit, when nothing read is left uncommitted.
  let committed = false;
  let big = false;
  const head = await ingestFolder(
    ledger,
    (p) => {
      readHere += p.bytes - (read.get(p.file) ?? 0);
      read.set(p.file, p.bytes);
      // What is read here and the rest of this file: a large file goes to the worker at once.
      if (readHere + (p.total - p.bytes) >= SMALL_IMPORT) big = true;
      if (committed && big) first.abort();
      committed = false;
      onProgress?.(p);
    },
    {
      signal: AbortSignal.any(signals),
      // Small blocks, parsed here: no read-ahead, no parse workers started for them.
      source: parsedBlocks,
      blockSize: FIRST_BLOCK,
      onCommit: () => {
        control.onCommit?.();
        committed = true;
      },
    },
  );
  if (!head.aborted || control.signal?.aborted) return head;
  const rest = await inWorker(ledger, onProgress, control, apart);
  return { ...rest, events: head.events + rest.events, findings: head.findings + rest.findings };
}

function inWorker(
  ledger: Ledger,
  onProgress: IngestProgress | undefined,
  control: IngestControl,
  apart: ApartOptions,
): Promise<ApartSummary> {
  const here = () => ingestFolder(ledger, onProgress, control);
  if (control.signal?.aborted) return here();
  let worker;
  try {
    worker = startWorker(import.meta.url, './folder-worker.ts', './import-worker.js', {
      workerData: { folder: ledger.folder, activity: apart.activity },
    });
  } catch {
    worker = null;
  }
  if (!worker) return here();
  const w = worker;
  apart.onWorker?.(new Promise<void>((ended) => w.once('exit', () => ended())));
  return new Promise<ApartSummary>((resolve) => {
    let done = false;
    // Listened to until the worker ends: closing the folder also stops its snapshots.
    const onAbort = () => w.postMessage('abort');
    control.signal?.addEventListener('abort', onAbort, { once: true });
    w.on('message', (m: FolderWorkerMessage) => {
      if (m.t === 'progress') onProgress?.({ file: m.file, bytes: m.bytes, total: m.total });
      else if (m.t === 'commit') control.onCommit?.();
      else if (m.t === 'snapshots') apart.onSnapshots?.(m);
      else if (m.t === 'done') {
        // Every commit is made: the caller may close its own connection; the worker's is its own.
        done = true;
        resolve({ ...m.summary, snapshotsApart: !m.summary.aborted });
      }
    });
    // Without a summary (the worker failed, or threw), the import goes on in this thread from
    // what the worker committed.
    w.once('exit', () => {
      control.signal?.removeEventListener('abort', onAbort);
      if (!done) resolve(here());
    });
    w.on('error', () => undefined); // 'exit' follows
  });
}
