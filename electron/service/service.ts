import { EventEmitter } from 'node:events';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type * as z from '../../shared/zod';
import {
  contract,
  isMethodName,
  type MethodName,
  type PushName,
  type PushOf,
} from '../../shared/api/contract';
import { onRendererSurface, RENDERER_APPEND_KINDS } from '../../shared/api/surface';
import { err, ProofloopError, type Result } from '../../shared/result';
import { Ledger, repairMirrors } from '../ledger';
import type { LedgerEngine } from '../ledger/engine';
import { SqliteEngine } from '../ledger/sqlite-engine';
import { isPostgresUrl, openEngine } from '../ledger/open-engine';
import { followEngine } from './follow';
import { ingestFile, ingestFolder } from '../ingest';
import { ingestFolderInWorker, type ApartSummary } from '../ingest/background';
import { builtinTasksDir } from '../paths';
import type { ServiceContext } from './context';
import type { Handlers } from './handler';
import { bundleHandlers } from './bundle';
import { annotateHandler, checkFolder, ledgerHandlers } from './ledger';
import { runnerHandlers } from './runner';
import { stateHandlers } from './state';
import { watchFolder } from './watch';
import { Activity, attachSnapshotter, buildSnapshotsInBackground, type BackgroundProgress } from '../state';
import { noteWork } from '../lean';
import { FirstReads } from './first-reads';

const NOTHING = { files: 0, events: 0, findings: 0 };

/**
 * The opening import's progress as `job.progress` pushes, at most a few a second: one per block
 * read would be thousands for a 1 GB file, each re-rendering the page's job bar.
 */
function importProgress(folder: string, ctx: ServiceContext): Parameters<typeof ingestFolder>[1] {
  let last = 0;
  return (p) => {
    const finished = p.bytes >= p.total;
    const now = performance.now();
    if (!finished && now - last < 250) return;
    last = now;
    ctx.emit('job.progress', {
      job_id: 'import',
      label: `importing ${path.relative(folder, p.file) || p.file}`,
      done: p.bytes,
      total: p.total,
      finished,
    });
  };
}

export type PushListener = <P extends PushName>(channel: P, payload: PushOf<P>) => void;

export interface ServiceOptions {
  /** Task catalog directory; defaults to the built-in `tasks/`. */
  tasksDir?: string;
  /** Keep the open folder live (file watching, polling for other writers): the app and web mode. */
  watch?: boolean;
  /**
   * The local folder of a team ledger (run workspaces and artifacts, bundles written): the app's
   * user data, or the folder `serve --ledger` names; else the current directory.
   */
  teamFolder?: string;
}

/** A server URL as it is shown and remembered: its password taken out (asked again, or from ~/.pgpass). */
export function withoutPassword(url: string): string {
  try {
    const u = new URL(url);
    u.password = '';
    return u.toString();
  } catch {
    throw new ProofloopError('bad_args', 'the team ledger is not a URL: postgres://user@host:5432/db');
  }
}

function withPassword(url: string, password: string): string {
  const u = new URL(url);
  u.password = password;
  return u.toString();
}

/**
 * Who is calling. The renderer is untrusted: it reaches only the methods of its surface
 * (shared/api/surface.ts), appends only annotations, and may only open folders that a local caller
 * (the CLI, a native dialog, a menu, a drop on the window) opened or trusted first.
 */
export type CallOrigin = 'local' | 'renderer';

/** A caller's string as it appears in an error: bounded, so a huge argument is not echoed back. */
const shorten = (s: string, max = 120): string =>
  s.length > max ? `${s.slice(0, max)}… (${s.length} characters)` : s;

function describeIssues(error: z.core.$ZodError): string {
  return error.issues
    .map((i) => `${i.path.length ? i.path.join('.') : '(arguments)'}: ${i.message}`)
    .join('; ');
}

/**
 * The one implementation of the API. Electron IPC, HTTP (web mode) and the CLI only carry calls
 * to `call`, which validates arguments against the contract and returns a Result.
 */
export class ProofloopService {
  private current: Ledger | null = null;
  /** The open ledger through the engine interface: the folder's SQLite, or a team's server. */
  private engineNow: LedgerEngine | null = null;
  /** Set when the open ledger is a team's server (engineNow is then that engine). */
  private team: { engine: LedgerEngine; folder: string } | null = null;
  private info: z.output<(typeof contract)['folder.open']['result']> | null = null;
  private readonly pushes = new EventEmitter();
  private readonly handlers: Handlers;
  /** events.append as the renderer has it: event_annotated on an existing run, nothing else. */
  private readonly annotate: Handlers['events.append'];
  private readonly trusted = new Set<string>();
  private readonly recent: string[] = [];
  private readonly detach: (() => void)[] = [];
  private watching = false;
  private snapshotting = false;
  readonly ctx: ServiceContext;

  constructor(private readonly opts: ServiceOptions = {}) {
    this.pushes.setMaxListeners(100);
    const ctx: ServiceContext = {
      engine: () => {
        if (!this.engineNow) throw new ProofloopError('not_found', 'no runs folder is open: open one first');
        return this.engineNow;
      },
      sqlite: () => this.current,
      ledger: () => {
        if (this.team) {
          throw new ProofloopError(
            'bad_args',
            `this needs a runs folder's ledger; the open ledger is the team ledger ${this.team.engine.location}`,
          );
        }
        if (!this.current) throw new ProofloopError('not_found', 'no runs folder is open: open one first');
        return this.current;
      },
      folder: () => this.team?.folder ?? ctx.ledger().folder,
      emit: (channel, payload) => this.pushes.emit('push', channel, payload),
      tasksDir: () => this.opts.tasksDir ?? builtinTasksDir(),
    };
    this.ctx = ctx;
    this.handlers = {
      'folder.open': ({ folder }) => this.openFolder(folder ?? process.cwd()),
      'folder.current': () => this.info,
      'folder.recent': () => [...this.recent],
      'ledger.open': ({ url, password }) => this.openTeam(url, { password }),
      ...ledgerHandlers(ctx),
      ...bundleHandlers(ctx),
      ...runnerHandlers(ctx),
      ...stateHandlers(ctx),
    };
    this.annotate = annotateHandler(ctx);
  }

  /**
   * Opens a runs folder: its ledger, mirror repair, then import of JSONL runs written by others.
   * `only`: a command about one run, which reads that run's source alone. `background`: returns as
   * soon as the ledger is open and imports afterwards (`opening` settles when that is done), its
   * runs and rows pushed as they commit, so the app and web mode show a 1 GB session's first rows
   * while it is read instead of after. Closing the folder stops that import cleanly.
   */
  async openFolder(folder: string, opts: { only?: string; background?: boolean } = {}) {
    const abs = checkFolder(folder);
    this.trustFolder(abs);
    if (this.current?.folder !== abs) {
      await this.closeFolder();
      this.current = Ledger.open(abs);
      this.engineNow = new SqliteEngine(this.current);
      this.stopImports = new AbortController();
      this.detach.push(attachSnapshotter(this.current));
      this.current.onAppend((runId, events) => {
        if (events.length === 0) return;
        this.ctx.emit('events.appended', {
          run_id: runId,
          from_seq: events[0]!.seq,
          to_seq: events.at(-1)!.seq,
        });
      });
    }
    const ledger = this.current;
    // A command about one run reads that run's source only, not the whole folder.
    const one = opts.only !== undefined ? ledger.run(opts.only) : undefined;
    if (one) {
      const imported =
        one.source === 'imported' && one.origin
          ? await ingestFile(ledger, path.resolve(abs, one.origin)).catch(() => ({
              files: 0,
              events: 0,
              findings: 0,
            }))
          : { files: 0, events: 0, findings: 0 };
      this.info = {
        folder: abs,
        runs_root: ledger.runsRoot,
        runs: ledger.runCount(),
        imported,
        mirrors_repaired: [],
      };
      return this.info;
    }
    const repaired = repairMirrors(ledger);
    // Live: the watcher's poll pushes runs and rows as the opening import commits them (each
    // commit asks it to look at once), so a big file's first rows show while it is still read.
    if (this.opts.watch) this.startWatching();
    const info = {
      folder: abs,
      runs_root: ledger.runsRoot,
      runs: 0,
      imported: NOTHING,
      mirrors_repaired: repaired,
    };
    const progress = importProgress(abs, this.ctx);
    const importing = this.ingestOnce(ledger, progress, opts.background).then((r) => {
      const { aborted, snapshotsApart, ...imported } = r;
      // Stopped, or the folder closed as it ended: the ledger is not to be read any more.
      if (aborted || this.current !== ledger) return { ...info, imported };
      const done = { ...info, runs: ledger.runCount(), imported };
      this.info = done;
      // The import's worker builds them after it, off this thread (ingest/background.ts).
      if (this.opts.watch && !snapshotsApart) this.startSnapshots(ledger);
      if (imported.events > 0) this.ctx.emit('runs.changed', { run_ids: [] });
      return done;
    });
    if (!opts.background) return await importing;
    this.info = { ...info, runs: ledger.runCount() };
    this.opening = importing.then(
      () => undefined,
      (e: Error) => {
        // Not thrown into nobody's hands: said once, and the folder stays open for what was imported.
        process.stderr.write(`proofloop: importing ${abs}: ${e.message}\n`);
      },
    );
    this.firstReads.began(this.opening);
    return this.info;
  }

  /**
   * Opens a team ledger (postgres://…) in place of a runs folder: every method then reads and
   * writes it through the engine interface, and a live app or web mode follows its cross-run feed.
   * `password`: for this connection only (the URL shown and remembered has none; a server that
   * needs one and gets none here takes it from ~/.pgpass or PGPASSWORD, as libpq does).
   * `folder`: where this process keeps local files (workspaces, artifacts, bundles).
   */
  async openTeam(url: string, opts: { password?: string; folder?: string } = {}) {
    if (!isPostgresUrl(url)) {
      throw new ProofloopError(
        'bad_args',
        'a team ledger is a postgres:// URL: postgres://user@host:5432/db',
      );
    }
    const shown = withoutPassword(url);
    const conn = opts.password ? withPassword(url, opts.password) : url;
    // Connected (and migrated) before the open ledger is closed: a refused connection leaves it open.
    const engine = await openEngine(conn);
    const local = path.resolve(opts.folder ?? this.opts.teamFolder ?? process.cwd());
    try {
      mkdirSync(local, { recursive: true });
    } catch (e) {
      await engine.close();
      throw new ProofloopError(
        'io',
        `cannot use ${local} as the team ledger's local folder: ${(e as Error).message}`,
      );
    }
    await this.closeFolder();
    this.team = { engine, folder: local };
    this.engineNow = engine;
    this.remember(shown);
    this.info = {
      folder: shown,
      runs_root: local,
      runs: (await engine.runs()).length,
      imported: NOTHING,
      mirrors_repaired: [],
      engine: 'postgres',
    };
    if (this.opts.watch) this.startFollowing();
    return this.info;
  }

  /** Follows the team ledger's cross-run feed: other processes' appends reach the page as pushes. */
  private startFollowing(): void {
    if (this.watching || !this.team) return;
    this.watching = true;
    const follow = followEngine(this.team.engine, this.ctx);
    this.detach.push(() => {
      follow.stop();
      this.watching = false;
    });
  }

  /** The background opening import (see openFolder), settled when it ends or is stopped. */
  opening: Promise<void> = Promise.resolve();

  /** Stops the imports of the open folder (see closeFolder); a new one per folder. */
  private stopImports = new AbortController();
  /** Imports of this folder still running, the opening one's and the watcher's. */
  private running = 0;
  /** The import workers of the open folder, each settled when it has ended (see closeFolder). */
  private workers: Promise<void>[] = [];
  /** One folder import at a time in this process (the opening one, and the watcher's). */
  private importing: Promise<unknown> = Promise.resolve();
  /** When the page last called: the snapshots, a cache, are built only while it is quiet. */
  private readonly activity = Activity.create();
  /** `apart`: in a worker thread (background.ts), for an import that a page must not wait behind. */
  private ingestOnce(ledger: Ledger, onProgress?: Parameters<typeof ingestFolder>[1], apart = false) {
    const control = { signal: this.stopImports.signal, onCommit: () => this.pollSoon?.() };
    const run = async (): Promise<ApartSummary> => {
      if (!apart) return ingestFolder(ledger, onProgress, control);
      // Begun after the ticks that follow, in which serve listens and prints its URL: begun at
      // once, the import's first reads and parsing came before them (~10 ms on 5 small sessions).
      await new Promise((resolve) => setImmediate(resolve));
      return ingestFolderInWorker(ledger, onProgress, control, {
        onSnapshots: (p) => this.snapshotProgress(p),
        onWorker: (ended) => this.workers.push(ended),
        activity: this.activity.shared,
      });
    };
    this.running += 1;
    const next = this.importing.then(run, run).finally(() => (this.running -= 1));
    this.importing = next.catch(() => undefined);
    return next;
  }
  /** Set while the folder is watched: looks at the runs table soon (after an import's commit). */
  private pollSoon: (() => void) | null = null;

  /** From now on keep the open folder (and any opened later) live: see watch.ts. */
  keepLive(): void {
    this.opts.watch = true;
    if (this.team) this.startFollowing();
    if (this.current) {
      this.startWatching();
      // Building snapshots would compete with an import under way; its end starts them.
      if (this.running === 0) this.startSnapshots(this.current);
    }
  }

  /**
   * Snapshots are a cache: a live app or web mode builds them after the import, a slice at a time
   * between calls, so the runs are browsable at once. A CLI command does not wait for them: the
   * first state lookup past a run's snapshots folds and stores them (stateAt).
   */
  private startSnapshots(ledger: Ledger): void {
    if (this.snapshotting) return;
    this.snapshotting = true;
    const snapshots = buildSnapshotsInBackground(ledger, {
      onProgress: (p) => this.snapshotProgress(p),
      busy: () => this.activity.busy(),
    });
    this.detach.push(() => {
      snapshots.cancel();
      this.snapshotting = false;
    });
  }

  private snapshotProgress(p: BackgroundProgress): void {
    this.ctx.emit('job.progress', {
      job_id: `snapshots:${p.run_id}`,
      label: `indexing states of ${p.run_id}`,
      done: p.done,
      total: p.total,
      finished: p.done >= p.total,
    });
  }

  private startWatching(): void {
    if (this.watching || !this.current) return;
    this.watching = true;
    const ledger = this.current;
    const watch = watchFolder(ledger, this.ctx, { ingest: () => this.ingestOnce(ledger) });
    this.pollSoon = watch.pollSoon;
    this.detach.push(() => {
      watch.stop();
      this.pollSoon = null;
      this.watching = false;
    });
  }

  /** Marks a folder as one the renderer may open (picked in a dialog, recent, dropped). */
  trustFolder(folder: string): void {
    const abs = path.resolve(folder);
    this.trusted.add(abs);
    this.remember(abs);
  }

  /** Puts a folder, or a team ledger's URL without its password, first in the recent list. */
  remember(entry: string): void {
    const i = this.recent.indexOf(entry);
    if (i >= 0) this.recent.splice(i, 1);
    this.recent.unshift(entry);
    this.recent.length = Math.min(this.recent.length, 10);
  }

  /**
   * Closes the open folder. An import still running (the opening one in the background, or the
   * watcher's) is stopped between two blocks and waited for before the ledger closes, so nothing
   * writes to a closed database and the last commit's progress row matches its events: the next
   * open goes on from there. With no import running the ledger is closed before this returns.
   */
  closeFolder(): Promise<void> {
    const ledger = this.current;
    const team = this.team;
    this.stopImports.abort();
    for (const d of this.detach.splice(0)) d();
    this.current = null;
    this.engineNow = null;
    this.team = null;
    this.info = null;
    if (team) return team.engine.close().catch(() => undefined);
    // An import's worker may still be building snapshots: stopped too, and waited for.
    const workers = this.workers.splice(0);
    if (!ledger) return Promise.all(workers).then(() => undefined);
    if (this.running === 0 && workers.length === 0) {
      ledger.close();
      return Promise.resolve();
    }
    return Promise.all([this.importing, ...workers]).then(() => ledger.close());
  }

  onPush(fn: PushListener): () => void {
    this.pushes.on('push', fn);
    return () => this.pushes.off('push', fn);
  }

  /** When a call of `method` may read (FirstReads.ready): the web transport takes its push count then. */
  readable(method: string): Promise<void> {
    return this.firstReads.ready(method);
  }
  private readonly firstReads = new FirstReads();

  /** Validates `rawArgs` against the contract, runs the handler, and never throws. */
  async call(method: string, rawArgs: unknown, origin: CallOrigin = 'local'): Promise<Result<unknown>> {
    if (origin === 'renderer') this.activity.touch();
    await this.readable(method);
    if (!isMethodName(method)) return err('bad_args', `unknown method "${shorten(method)}"`);
    if (origin === 'renderer' && !onRendererSurface(method)) {
      return err('forbidden', `${method} is not available to the window: use the proofloop CLI`);
    }
    const spec = contract[method];
    const parsed = spec.args.safeParse(rawArgs ?? {});
    if (!parsed.success) {
      return err('bad_args', `${method}: ${describeIssues(parsed.error)}`);
    }
    if (origin === 'renderer' && method === 'events.append') {
      const kind = (parsed.data as { kind: string }).kind;
      if (!RENDERER_APPEND_KINDS.has(kind)) {
        return err(
          'forbidden',
          `events.append: the window may append only event_annotated; ${kind} is written by the host`,
        );
      }
    }
    if (origin === 'renderer' && method === 'folder.open') {
      const wanted = path.resolve((parsed.data as { folder?: string }).folder ?? '');
      if (!this.trusted.has(wanted)) {
        return err(
          'forbidden_path',
          `folder ${wanted} was not chosen by the user: open it from the File menu or the command line`,
        );
      }
    }
    if (
      origin === 'renderer' &&
      method === 'run.start' &&
      (parsed.data as { config_dir?: string }).config_dir
    ) {
      // Important: a configuration folder brings its own hooks, which the agent runs as commands.
      return err(
        'forbidden',
        'run.start: the window may not name a configuration folder (its hooks run as commands): use proofloop run --config',
      );
    }
    try {
      const handler = (
        origin === 'renderer' && method === 'events.append' ? this.annotate : this.handlers[method]
      ) as (a: unknown) => unknown;
      return { ok: true, value: await handler(parsed.data) };
    } catch (e) {
      if (e instanceof ProofloopError) return err(e.code, e.message);
      return err('internal', `${method}: ${(e as Error).message}`);
    } finally {
      noteWork();
    }
  }

  /** Like `call` for in-process callers (CLI, main): throws the error instead of returning it. */
  async invoke<M extends MethodName>(
    method: M,
    args: z.input<(typeof contract)[M]['args']>,
  ): Promise<z.output<(typeof contract)[M]['result']>> {
    const r = await this.call(method, args);
    if (!r.ok) throw new ProofloopError(r.error.code, r.error.message);
    return r.value as z.output<(typeof contract)[M]['result']>;
  }
}
