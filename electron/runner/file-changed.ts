import { createTwoFilesPatch } from 'diff';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sha256Hex } from '../crypto';
import { boundedExcerpt, redactText } from '../ledger/artifact-store';

/** How much of a change's patch the event keeps (the files themselves are in the workspace). */
const PATCH_BYTES = 4096;

/**
 * The `file_changed` event of a call that changed a file (`path` relative to the workspace; null
 * text: no file), or null when it did not: the digests before and after, and the change as a
 * unified patch, redacted and bounded. Made alike by both runners, for the host's own tools
 * (session.ts) and for a real agent's, seen through its hooks (real-run.ts).
 */
export function fileChanged(
  callId: string,
  path: string,
  before: string | null,
  after: string | null,
): { kind: 'file_changed'; payload: Record<string, unknown> } | null {
  if (before === after) return null;
  const patch = redactText(createTwoFilesPatch(`a/${path}`, `b/${path}`, before ?? '', after ?? '')).text;
  return {
    kind: 'file_changed',
    payload: {
      call_id: callId,
      path,
      before: before === null ? null : sha256Hex(before),
      after: after === null ? null : sha256Hex(after),
      patch: boundedExcerpt(patch, PATCH_BYTES),
    },
  };
}

/** A workspace file's text, or null when there is none (or it cannot be read), for `fileChanged`. */
export function textOf(workspace: string, path: string): string | null {
  try {
    return readFileSync(join(workspace, path), 'utf8');
  } catch {
    return null;
  }
}
