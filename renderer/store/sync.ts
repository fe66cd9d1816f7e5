import { onConnected, subscribe } from '../api/api';
import { formatHash, parseHash, type Route } from './route';
import { useApp } from './index';
import { throttled } from './throttle';
import { afterPaint } from '../ui/afterPaint';

/** How long the steps pause before the URL hash shows the seq. */
const HASH_SETTLE_MS = 300;
/**
 * How often appends make the runs list be read again. A live run in this process pushes at every
 * append; reading the list at each (500 runs: 24 ms in the service, 290 KB for the page to parse
 * and render) kept both threads busy while the timeline and the state pane waited.
 */
const LIST_ON_APPEND_MS = 1000;

function routeOfState(): Route {
  const s = useApp.getState();
  if (s.view === 'diff' && s.diffLeft && s.diffRight)
    return { view: 'diff', left: s.diffLeft, right: s.diffRight };
  if (s.view === 'run' && s.runId) return { view: 'run', runId: s.runId, seq: s.seq || null };
  return { view: 'home' };
}

function applyRoute(route: Route): void {
  const s = useApp.getState();
  if (route.view === 'run') {
    if (route.runId !== s.runId || s.view !== 'run') s.selectRun(route.runId, route.seq);
    else if (route.seq && route.seq !== s.seq) s.setSeq(route.seq);
  } else if (route.view === 'diff') {
    if (route.left !== s.diffLeft || route.right !== s.diffRight || s.view !== 'diff')
      void s.openDiff(route.left, route.right);
  } else if (s.view !== 'home') s.goHome();
}

/** Wires pushes to the store and the store to the URL hash. Returns the teardown. */
export function startSync(): () => void {
  // The selected run's rows follow every append at once; its summary in the list within a second.
  const listSoon = throttled(() => void useApp.getState().loadRuns(), LIST_ON_APPEND_MS);
  const offs = [
    subscribe('runs.changed', () => void useApp.getState().loadRuns()),
    subscribe('events.appended', (p) => {
      useApp.getState().onAppended(p.run_id, p.from_seq, p.to_seq);
      listSoon();
    }),
    subscribe('folder.changed', () => {
      const st = useApp.getState();
      st.goHome();
      void st.loadFolder();
      void st.loadRuns();
    }),
    subscribe('ui.command', (p) => {
      const st = useApp.getState();
      if (p.command === 'open-run' && p.run_id) st.selectRun(p.run_id);
      else if (p.command === 'compare' && p.run_id) st.setCompareWith(p.run_id);
      else if (p.command === 'export-bundle') st.openExportDialog(p.run_id ?? null);
      else if (p.command === 'open-team-ledger') st.setTeamFormOpen(true);
    }),
    subscribe('job.progress', (p) => {
      useApp.getState().onJob(p);
      if (p.finished) void useApp.getState().loadRuns();
    }),
    // What the pushes would have said while the stream was not connected: the folder, the runs
    // and, through loadRuns, the selected run's new events and findings (syncSelectedRun). The
    // first connection reads again what the page read at start: unchanged, it renders nothing
    // (shareEqual in the slices).
    onConnected(() => {
      const st = useApp.getState();
      void st.loadFolder();
      void st.loadRuns();
    }),
  ];

  applyRoute(parseHash(window.location.hash));
  void useApp.getState().loadFolder();
  void useApp.getState().loadRuns();

  // The hash follows the store. A new view or run is a history entry at once; a step only replaces
  // the entry, and only once the steps pause: history.replaceState costs a same-document navigation
  // (milliseconds each, and Chromium throttles a page that makes hundreds of them).
  let last = window.location.hash;
  let pending = false;
  let stepTimer: ReturnType<typeof setTimeout> | null = null;
  const writeHash = () => {
    if (stepTimer !== null) clearTimeout(stepTimer);
    stepTimer = null;
    const next = formatHash(routeOfState());
    if (next === last) return;
    const a = parseHash(last) as { view: string; runId?: string };
    const b = parseHash(next) as { view: string; runId?: string };
    last = next;
    if (a.view !== b.view || a.runId !== b.runId) history.pushState(null, '', next);
    else history.replaceState(null, '', next);
  };
  const unsub = useApp.subscribe((st, prev) => {
    if (
      st.view !== prev.view ||
      st.runId !== prev.runId ||
      st.diffLeft !== prev.diffLeft ||
      st.diffRight !== prev.diffRight
    ) {
      if (pending) return;
      pending = true;
      // After the frame that shows the change: history.pushState is a same-document navigation,
      // ~7 ms of the click that opens a run (a CPU profile of its handler); the address bar can
      // follow a frame later (or 250 ms later, in a page that draws no frames).
      afterPaint(() => {
        pending = false;
        writeHash();
      }, 250);
    } else if (st.seq !== prev.seq && !pending) {
      if (stepTimer !== null) clearTimeout(stepTimer);
      stepTimer = setTimeout(writeHash, HASH_SETTLE_MS);
    }
  });
  // A reload or a closed window keeps the last step.
  window.addEventListener('pagehide', writeHash);
  const onHash = () => {
    if (window.location.hash === last) return;
    last = window.location.hash;
    applyRoute(parseHash(last));
  };
  window.addEventListener('hashchange', onHash);
  window.addEventListener('popstate', onHash);
  return () => {
    offs.forEach((off) => off());
    unsub();
    window.removeEventListener('hashchange', onHash);
    window.removeEventListener('popstate', onHash);
    window.removeEventListener('pagehide', writeHash);
    if (stepTimer !== null) clearTimeout(stepTimer);
  };
}
