import path from 'node:path';
import { watch } from 'chokidar';
import type { Ledger } from '../ledger';
import { ingestFolder } from '../ingest';
import type { ServiceContext } from './context';

const SKIP = new Set(['.proofloop', 'node_modules', '.git']);

/**
 * Keeps an open folder live for the app and web mode:
 * - JSONL runs that other agents write into the folder are imported as they grow (chokidar sees
 *   the change; the import reads only the new bytes);
 * - runs that other processes append to the same ledger (a CLI run, `proofloop append`) are noticed
 *   by a cheap poll of the runs table, since pushes only travel inside one process.
 * Either way the UI gets `events.appended` / `runs.changed`. Returns the stop function, and
 * `pollSoon`, which an import calls after each commit so its rows reach the page at once rather
 * than at the next poll.
 */
export function watchFolder(
  ledger: Ledger,
  ctx: ServiceContext,
  opts: { pollMs?: number; ingest?: () => Promise<unknown> } = {},
): { stop: () => void; pollSoon: () => void } {
  const ingest = opts.ingest ?? (() => ingestFolder(ledger));
  const heads = new Map<string, { seq: number; status: string }>();
  const snapshot = () =>
    ledger.db.prepare('SELECT run_id, head_seq, status FROM runs').all() as {
      run_id: string;
      head_seq: number;
      status: string;
    }[];
  for (const r of snapshot()) heads.set(r.run_id, { seq: r.head_seq, status: r.status });

  // In-process appends are pushed by the service already: only remember them here.
  const offAppend = ledger.onAppend((runId, events) => {
    const last = events.at(-1);
    if (last) heads.set(runId, { seq: last.seq, status: heads.get(runId)?.status ?? 'running' });
  });

  let stopped = false;
  const poll = () => {
    if (stopped) return;
    let changed = false;
    try {
      for (const r of snapshot()) {
        const was = heads.get(r.run_id);
        if (!was) changed = true;
        else if (was.status !== r.status) changed = true;
        if (r.head_seq > (was?.seq ?? 0)) {
          ctx.emit('events.appended', {
            run_id: r.run_id,
            from_seq: (was?.seq ?? 0) + 1,
            to_seq: r.head_seq,
          });
        }
        heads.set(r.run_id, { seq: r.head_seq, status: r.status });
      }
    } catch {
      return; // the ledger closed under us: the folder is being switched
    }
    if (changed) ctx.emit('runs.changed', { run_ids: [] });
  };
  const timer = setInterval(poll, opts.pollMs ?? 1000);
  timer.unref();
  // Commits come every CHUNK rows or CHUNK_MS: one look per burst, after the commit has returned.
  let soon: NodeJS.Timeout | null = null;
  const pollSoon = () => {
    if (stopped || soon) return;
    soon = setTimeout(() => {
      soon = null;
      poll();
    }, 20);
  };

  // One import at a time; a change during an import asks for one more.
  let importing = false;
  let again = false;
  let debounce: NodeJS.Timeout | null = null;
  const runImport = async () => {
    if (importing) {
      again = true;
      return;
    }
    importing = true;
    try {
      do {
        again = false;
        await ingest();
        poll();
      } while (again && !stopped);
    } catch {
      // A file that cannot be read now is tried again on its next change; findings are recorded.
    } finally {
      importing = false;
    }
  };
  // What the import reads (scan.ts): events.jsonl, and any *.jsonl a format claims (a Claude Code
  // session, a Codex rollout), so a session another program is writing is followed too; and the
  // whole-file sources (an eval log, a .traj, an ATIF or OpenHands .json, a conversation folder's
  // event files), imported when they appear or change.
  const isRunFile = (file: string) => /\.(jsonl|json|traj|eval)$/i.test(file);
  // Asked on every change of an events.jsonl: the source column only, not ledger.run's whole summary.
  const sourceOf = ledger.db.prepare('SELECT source FROM runs WHERE run_id = ?').pluck();
  const isOwnMirror = (file: string) => {
    const rel = path.relative(ledger.folder, file).split(path.sep);
    return rel.length === 2 && rel[1] === 'events.jsonl' && sourceOf.get(rel[0]!) === 'executed';
  };
  const watcher = watch(ledger.folder, {
    ignoreInitial: true,
    followSymlinks: false,
    depth: 32,
    ignored: (p, stats) => {
      const rel = path.relative(ledger.folder, p);
      const parts = rel.split(path.sep);
      if (parts.some((part) => SKIP.has(part))) return true;
      // A real agent's home in an executed run: the runner imports its transcripts itself, redacted
      // (runner/scrub.ts), once the agent has exited (ingest/scan.ts skips it too).
      if (parts.length >= 2 && parts[1] === 'home' && sourceOf.get(parts[0]!) === 'executed') return true;
      return Boolean(stats?.isFile()) && !isRunFile(p);
    },
  });
  // A burst of changes makes one import, 200 ms after the last.
  const importSoon = () => {
    if (stopped) return;
    if (debounce) clearTimeout(debounce);
    debounce = setTimeout(() => void runImport(), 200);
  };
  const onFile = (file: string) => {
    if (isRunFile(file) && !isOwnMirror(file)) importSoon();
  };
  watcher.on('add', onFile).on('change', onFile);
  // chokidar reads a new directory, then watches it: a file made between the two is never reported
  // (paulmillr/chokidar#1422), and an agent makes its run's folder and first file back to back. A
  // new directory asks for an import too, and one more a second later, once chokidar watches it.
  let recheck: NodeJS.Timeout | null = null;
  watcher.on('addDir', (dir) => {
    const top = path.relative(ledger.folder, dir).split(path.sep)[0]!;
    // An executed run's own folders (its workspace) are the runner's: nothing there to import.
    if (stopped || sourceOf.get(top) === 'executed') return;
    importSoon();
    if (recheck) clearTimeout(recheck);
    recheck = setTimeout(importSoon, 1000);
  });
  // Files written between the folder's opening import and the watcher being ready were seen by its
  // initial scan, which reports nothing: import once more when it is ready.
  watcher.on('ready', () => void runImport());
  watcher.on('error', () => undefined);

  const stop = () => {
    stopped = true;
    clearInterval(timer);
    if (soon) clearTimeout(soon);
    if (debounce) clearTimeout(debounce);
    if (recheck) clearTimeout(recheck);
    offAppend();
    void watcher.close();
  };
  return { stop, pollSoon };
}
