import type { FormatView, Interpreted, Usage, ViewContext } from './types';
import { seed000View } from './seed000';
import { seed004View } from './seed004';
import { claudeCodeView } from './claude-code';
import { codexView } from './codex';
import { sweAgentView } from './swe-agent';
import { atifView } from './atif';
import { openHandsView } from './openhands';
import { inspectView } from './inspect';

export type { FormatView, Interpreted, Usage, ViewContext } from './types';
export type { SourceRef } from './source-ref';

/**
 * The on-read views of the source formats, by the name their adapter stores on the run
 * (electron/ingest/formats/registry.ts). A format without a view (ProofLoop's own) reads as it is.
 */
const views: Record<string, FormatView> = {
  [seed000View.name]: seed000View,
  [seed004View.name]: seed004View,
  [claudeCodeView.name]: claudeCodeView,
  [codexView.name]: codexView,
  [sweAgentView.name]: sweAgentView,
  [atifView.name]: atifView,
  [openHandsView.name]: openHandsView,
  [inspectView.name]: inspectView,
};

/** Whether runs of this format begin with their first record (see FormatView.session). */
export function isSessionFormat(fmt: string | null | undefined): boolean {
  return !!fmt && Object.prototype.hasOwnProperty.call(views, fmt) && views[fmt]!.session === true;
}

/** The v1 reading of a stored payload of format `fmt`, or null when it reads as it is. */
export function interpret(
  fmt: string | null | undefined,
  kind: string,
  payload: Record<string, unknown>,
  ctx: ViewContext,
): Interpreted | null {
  if (!fmt) return null;
  const view = Object.prototype.hasOwnProperty.call(views, fmt) ? views[fmt] : undefined;
  return view ? view.interpret(kind, payload, ctx) : null;
}

/** The session a run of format `fmt` is part of (FormatView.sessionOf), from its source's run id. */
export function sessionOf(fmt: string | null | undefined, sourceRunId: string): string | null {
  if (!fmt) return null;
  const view = Object.prototype.hasOwnProperty.call(views, fmt) ? views[fmt] : undefined;
  return view?.sessionOf ? view.sessionOf(sourceRunId) : null;
}

/** The tokens a stored event of format `fmt` reports (FormatView.usage), or null. */
export function usageOf(
  fmt: string | null | undefined,
  kind: string,
  payload: Record<string, unknown>,
  ctx: ViewContext,
): Usage | null {
  if (!fmt) return null;
  const view = Object.prototype.hasOwnProperty.call(views, fmt) ? views[fmt] : undefined;
  return view?.usage ? view.usage(kind, payload, ctx) : null;
}
