/**
 * The names an import gives: a file's key in the folder, a file's run when its lines name none (by
 * its folder or its own name), a seed-000 file's by its folder, and a source's id made safe to
 * store.
 */
import path from 'node:path';

const RUN_ID_RE = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/;

/**
 * The run of a file whose lines do not name one: `<id>/events.jsonl` by its folder, any other
 * `<name>.jsonl` (a Claude Code session, a Codex rollout) by its own name.
 */
export function fileRun(key: string): string {
  const parts = key.split(/[\\/]/);
  const name = parts.at(-1) ?? key;
  if (name === 'events.jsonl') return parts.at(-2) || 'events';
  const base = name.replace(/\.jsonl$/i, '') || name;
  // A Claude Code subagent, `<session>/subagents/agent-<id>.jsonl`: named after its session too.
  if (parts.at(-2) === 'subagents' && parts.length >= 3) return `${parts.at(-3)}:${base}`;
  return base;
}

/** `runs/<id>/events.jsonl`: the run a seed 000 file is about, by its folder name. */
export function folderRun(key: string): string | null {
  const parts = key.split(/[\\/]/);
  const n = parts.length;
  if (n >= 3 && parts[n - 1] === 'events.jsonl' && parts[n - 3] === 'runs') return parts[n - 2] ?? null;
  return null;
}

export function sanitizeRunId(src: string): string {
  if (RUN_ID_RE.test(src)) return src;
  let id = src.replace(/[^A-Za-z0-9._:-]/g, '_').slice(0, 180);
  if (!/^[A-Za-z0-9]/.test(id)) id = `r${id}`;
  return id;
}

/**
 * A file's key: its path under the runs folder with `/` separators (what the import records it by,
 * and what run names are made from), or its absolute path when it lies outside the folder.
 */
export function keyOf(folder: string, abs: string): string {
  const rel = path.relative(folder, abs);
  if (rel && !rel.startsWith('..') && !path.isAbsolute(rel)) return rel.split(path.sep).join('/');
  return abs;
}
