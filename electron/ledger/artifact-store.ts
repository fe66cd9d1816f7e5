import { closeSync, constants, fsyncSync, lstatSync, renameSync, writeSync } from 'node:fs';
import path from 'node:path';
import { threadId } from 'node:worker_threads';
import { confine, mkdirConfined, openConfined, readConfined } from '../fs/confine';
import { HASH_RE } from '../../shared/protocol/chain';
import { redactCredentials } from '../../shared/redact';
import { sha256Bytes } from '../crypto';

/** Text after the one redaction engine, with how many credentials it replaced. */
export function redactText(text: string): { text: string; hits: number } {
  const r = redactCredentials(text);
  return { text: typeof r.value === 'string' ? r.value : text, hits: r.hits };
}

/** The first `maxBytes` bytes of (already redacted) text, cut on a character boundary. */
export function boundedExcerpt(text: string, maxBytes: number): string {
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= maxBytes) return text;
  let end = maxBytes;
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end -= 1;
  return `${buf.subarray(0, end).toString('utf8')}\n…[${buf.length - end} more bytes in the artifact]`;
}

export interface ArtifactRef {
  /** sha256 of the stored bytes: the artifact's file name. */
  digest: string;
  bytes: number;
  /** Whether the stored content is the redacted form of what the tool produced. */
  redacted: boolean;
}

export const artifactsDir = (runDir: string): string => path.join(runDir, 'artifacts');

/**
 * `runDir` is `<folder>/<run_id>` (a run id holds no separator): the artifact's path segments under
 * the folder, which is what confinement is relative to.
 */
const place = (runDir: string, ...rest: string[]) =>
  [path.dirname(runDir), [path.basename(runDir), 'artifacts', ...rest]] as const;

/**
 * Stores content once, content-addressed, readable by the owner only: `<run>/artifacts/<sha256>`.
 * The content passes the redaction engine first, so a secret never reaches the disk; the digest is
 * of what is stored. Written to a temporary file and renamed, so a crash never leaves a torn one.
 * `redacted`: the content has passed the engine already (an imported payload's values): not again.
 */
export function storeArtifact(
  runDir: string,
  content: string,
  opts: { redacted?: boolean } = {},
): ArtifactRef & { text: string } {
  const { text, hits } = opts.redacted ? { text: content, hits: 0 } : redactText(content);
  const data = Buffer.from(text, 'utf8');
  const digest = sha256Bytes(data);
  const [folder, segs] = place(runDir, digest);
  const file = confine(folder, segs, 'artifact');
  if (!lstatSync(file, { throwIfNoEntry: false })) {
    mkdirConfined(folder, segs.slice(0, -1), 'artifacts folder');
    // Per thread: import workers of one process may store the same value at once.
    const [, tmpSegs] = place(runDir, `${digest}.${process.pid}.${threadId}.tmp`);
    const tmp = confine(folder, tmpSegs, 'artifact');
    const fd = openConfined(
      folder,
      tmpSegs,
      constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC,
      'artifact',
    );
    try {
      writeSync(fd, data);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  }
  return { digest, bytes: data.length, redacted: hits > 0, text };
}

/**
 * An artifact's text, or null when it is missing or does not match its digest. A link at the run
 * folder, `artifacts` or the file is refused with forbidden_path, never followed.
 */
export function readArtifact(runDir: string, digest: string): string | null {
  if (!HASH_RE.test(digest)) return null;
  const [folder, segs] = place(runDir, digest);
  let data: Buffer;
  try {
    data = readConfined(folder, segs, 'artifact');
  } catch (e) {
    if ((e as { code?: string }).code === 'forbidden_path') throw e;
    return null;
  }
  return sha256Bytes(data) === digest ? data.toString('utf8') : null;
}
