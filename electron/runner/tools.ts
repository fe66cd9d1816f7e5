import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
  openSync,
  fsyncSync,
  closeSync,
  renameSync,
} from 'node:fs';
import path from 'node:path';
import { applyPatch } from 'diff';
import { resolveInside } from '../fs/paths';
import { ProofloopError } from '../../shared/result';
import type { Decision, PolicyEngine, ToolArgs } from './policy';
import { normalizeCommand, workspaceRelative } from './policy';
import { runCommandLine } from './exec';

/** A file a tool wrote: its text before (null: it did not exist) and after. */
export interface FileChange {
  path: string;
  before: string | null;
  after: string;
}

export interface ToolResult {
  status: 'ok' | 'error' | 'timeout';
  output: string;
  exit_code?: number | null;
  timeout_ms?: number;
  change?: FileChange;
}

const SKIP_DIRS = new Set(['.git', 'node_modules']);
const MAX_LIST = 2000;
const MAX_MATCHES = 200;
const MAX_SEARCH_FILE = 1 << 20;

/**
 * The host's second check, against the real workspace: a path that the policy allowed must still
 * resolve inside it (symbolic links included). Returns a denial, or null when the call may run.
 */
export function confine(workspace: string, tool: string, args: unknown): Decision | null {
  if (tool === 'run_command') return null;
  const requested = (args as { path?: string }).path ?? '.';
  try {
    resolveInside(workspace, requested);
    return null;
  } catch (e) {
    if (e instanceof ProofloopError && e.code === 'forbidden_path') {
      return { allowed: false, rule: 'workspace', reason: e.message.replace(workspace, '<workspace>') };
    }
    throw e;
  }
}

/** Files under `dir` (workspace-relative, sorted), not following symbolic links, visible to the model. */
function walk(workspace: string, dir: string, engine: PolicyEngine, out: string[]): void {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return;
  }
  for (const name of names) {
    if (out.length >= MAX_LIST) return;
    const abs = path.join(dir, name);
    const rel = path.relative(workspace, abs).split(path.sep).join('/');
    const st = lstatSync(abs);
    if (st.isDirectory()) {
      if (!SKIP_DIRS.has(name) && !engine.isDenied(rel)) walk(workspace, abs, engine, out);
    } else if ((st.isFile() || st.isSymbolicLink()) && engine.visible(rel)) {
      out.push(rel);
    }
  }
}

function readText(abs: string, maxBytes: number): string {
  const st = statSync(abs);
  if (!st.isFile()) throw new ProofloopError('bad_args', 'not a file');
  const data = readFileSync(abs);
  const text = data.subarray(0, maxBytes).toString('utf8');
  return data.length > maxBytes ? `${text}\n…[${data.length - maxBytes} more bytes not read]` : text;
}

function writeChecked(workspace: string, rel: string, abs: string, afterText: string): FileChange {
  const beforeText = existsSync(abs) ? readFileSync(abs, 'utf8') : null;
  mkdirSync(path.dirname(abs), { recursive: true });
  // Re-check just before the write: the parent folders now exist, links included.
  const again = resolveInside(workspace, rel);
  // Important: write a temporary file and rename it over, so a host killed mid-write leaves the old
  // or the new file, never a truncated one (resume relies on the file being one or the other).
  const tmp = `${again}.proofloop-${process.pid}.tmp`;
  const fd = openSync(tmp, 'w', existsSync(again) ? statSync(again).mode & 0o777 : 0o644);
  try {
    writeFileSync(fd, afterText);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, again);
  return { path: rel, before: beforeText, after: afterText };
}

/** Executes one allowed call inside the workspace. Errors of the tool are results, not throws. */
export async function executeTool(
  workspace: string,
  engine: PolicyEngine,
  tool: string,
  rawArgs: unknown,
): Promise<ToolResult> {
  const maxBytes = engine.policy.limits.output_bytes;
  try {
    switch (tool) {
      case 'list_files': {
        const a = rawArgs as ToolArgs['list_files'];
        const root = resolveInside(workspace, a.path ?? '.');
        const files: string[] = [];
        walk(workspace, root, engine, files);
        return { status: 'ok', output: files.join('\n') + (files.length >= MAX_LIST ? '\n…' : '') };
      }
      case 'read_file': {
        const a = rawArgs as ToolArgs['read_file'];
        return { status: 'ok', output: readText(resolveInside(workspace, a.path), maxBytes) };
      }
      case 'search': {
        const a = rawArgs as ToolArgs['search'];
        const root = resolveInside(workspace, a.path ?? '.');
        const files: string[] = [];
        if (statSync(root).isDirectory()) walk(workspace, root, engine, files);
        else files.push(path.relative(workspace, root).split(path.sep).join('/'));
        const hits: string[] = [];
        for (const rel of files) {
          const abs = resolveInside(workspace, rel);
          const st = statSync(abs);
          if (!st.isFile() || st.size > MAX_SEARCH_FILE) continue;
          const lines = readFileSync(abs, 'utf8').split('\n');
          lines.forEach((line, i) => {
            if (hits.length < MAX_MATCHES && line.includes(a.query))
              hits.push(`${rel}:${i + 1}: ${line.trim()}`);
          });
        }
        return { status: 'ok', output: hits.length ? hits.join('\n') : `no match for "${a.query}"` };
      }
      case 'write_file': {
        const a = rawArgs as ToolArgs['write_file'];
        const rel = workspaceRelative(a.path)!;
        const change = writeChecked(workspace, rel, resolveInside(workspace, rel), a.content);
        return { status: 'ok', output: `wrote ${Buffer.byteLength(a.content)} bytes to ${rel}`, change };
      }
      case 'apply_patch': {
        const a = rawArgs as ToolArgs['apply_patch'];
        const rel = workspaceRelative(a.path)!;
        const abs = resolveInside(workspace, rel);
        const current = existsSync(abs) ? readFileSync(abs, 'utf8') : '';
        let next: string | false;
        try {
          next = applyPatch(current, a.patch);
        } catch (e) {
          return { status: 'error', output: `patch is not a unified diff: ${(e as Error).message}` };
        }
        if (next === false) return { status: 'error', output: `patch does not apply to ${rel}` };
        const change = writeChecked(workspace, rel, abs, next);
        return { status: 'ok', output: `patched ${rel}`, change };
      }
      case 'run_command': {
        const a = rawArgs as ToolArgs['run_command'];
        const timeout = engine.timeoutOf('run_command');
        const r = await runCommandLine(workspace, normalizeCommand(a.command), {
          timeoutMs: timeout,
          maxBytes,
        });
        if (r.timed_out)
          return { status: 'timeout', output: r.output, timeout_ms: timeout, exit_code: r.exit_code };
        const tail = r.dropped ? `\n…[${r.dropped} bytes of output dropped]` : '';
        return {
          status: r.exit_code === 0 ? 'ok' : 'error',
          output: r.output + tail,
          exit_code: r.exit_code,
        };
      }
      default:
        return { status: 'error', output: `unknown tool ${tool}` };
    }
  } catch (e) {
    const code = e instanceof ProofloopError ? e.code : ((e as NodeJS.ErrnoException).code ?? 'error');
    const msg = (e as Error).message.split(workspace).join('<workspace>');
    return { status: 'error', output: `${tool} failed (${code}): ${msg}` };
  }
}
