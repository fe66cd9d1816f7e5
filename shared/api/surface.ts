import type { MethodName, PushName } from './contract';

/**
 * The renderer's surface: the methods the UI calls (grep renderer/ for them), and nothing else.
 * The renderer is untrusted (a compromised page, a leaked web-mode token): IPC registers, the
 * preload exposes and HTTP answers only these; the CLI and the main process (local callers) have
 * the whole contract. `events.append` is here for annotations only: from the renderer the service
 * accepts `event_annotated` on an existing run and refuses every kind only the host writes.
 */
export const RENDERER_METHODS = [
  'folder.open',
  'folder.current',
  'folder.recent',
  'ledger.open',
  'runs.list',
  'run.get',
  'run.findings',
  'runs.details',
  'run.spans',
  'folder.findings',
  'events.read',
  'events.search',
  'events.append',
  'artifact.read',
  'tasks.list',
  'agents.list',
  'run.start',
  'run.rerun',
  'run.resume',
  'state.at',
  'state.changes',
  'runs.diff',
  'bundle.preview',
  'bundle.export',
  'bundle.verify',
  'bundle.open',
] as const satisfies readonly MethodName[];

const renderer: ReadonlySet<string> = new Set(RENDERER_METHODS);
export const onRendererSurface = (method: string): boolean => renderer.has(method);

/** The one kind the renderer may append: a person's note on an event. */
export const RENDERER_APPEND_KINDS: ReadonlySet<string> = new Set(['event_annotated']);

/**
 * Every push, by name: the renderer subscribes to them without building the contract's zod
 * schemas at start (which cost the page ~100-200 ms of CPU before its first rows).
 */
export const RENDERER_PUSHES = [
  'folder.changed',
  'ui.command',
  'events.appended',
  'runs.changed',
  'job.progress',
] as const satisfies readonly PushName[];
// A push added to the contract but not listed here does not compile.
const everyPush: Exclude<PushName, (typeof RENDERER_PUSHES)[number]> extends never ? true : never = true;
void everyPush;
