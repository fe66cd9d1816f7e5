import path from 'node:path';
import picomatch from 'picomatch';
import * as z from '../../shared/zod';
import { KNOWN_TOOLS, type Policy } from './catalog';

export interface Proposal {
  tool: string;
  args: unknown;
}

export interface Decision {
  allowed: boolean;
  /** The tools.json field (or host rule) that decided: tools, args, workspace, paths.deny, paths.read, paths.write, commands. */
  rule: string;
  reason: string;
}

const p = z.string().check(z.minLength(1), z.maxLength(1000));
export const toolArgs = {
  list_files: z.strictObject({ path: z.optional(p) }),
  read_file: z.strictObject({ path: p }),
  search: z.strictObject({ query: z.string().check(z.minLength(1), z.maxLength(200)), path: z.optional(p) }),
  write_file: z.strictObject({ path: p, content: z.string().check(z.maxLength(1 << 20)) }),
  apply_patch: z.strictObject({
    path: p,
    patch: z.string().check(z.minLength(1), z.maxLength(1 << 20)),
  }),
  run_command: z.strictObject({ command: z.string().check(z.minLength(1), z.maxLength(500)) }),
} as const;
export type ToolArgs = { [K in keyof typeof toolArgs]: z.output<(typeof toolArgs)[K]> };

const WRITE_TOOLS = new Set(['write_file', 'apply_patch']);

/** Collapses whitespace so `node  test.js` and `node test.js` are the same command line. */
export const normalizeCommand = (c: string): string => c.trim().split(/\s+/).join(' ');

/** A workspace-relative, forward-slash path, or null when it is absolute or climbs out with `..`. */
export function workspaceRelative(requested: string): string | null {
  if (requested.includes('\0') || path.isAbsolute(requested) || path.win32.isAbsolute(requested)) return null;
  const norm = path.posix.normalize(requested.replace(/\\/g, '/'));
  if (norm === '..' || norm.startsWith('../')) return null;
  return norm === '' ? '.' : norm.replace(/\/+$/, '') || '.';
}

/** A glob list where `!x` entries exclude: matches when some positive glob matches and no negative one does. */
export function globMatcher(globs: readonly string[]): (rel: string) => boolean {
  const pos = globs.filter((g) => !g.startsWith('!'));
  const neg = globs.filter((g) => g.startsWith('!')).map((g) => g.slice(1));
  const isPos = pos.length ? picomatch(pos, { dot: true }) : () => false;
  const isNeg = neg.length ? picomatch(neg, { dot: true }) : () => false;
  return (rel) => isPos(rel) && !isNeg(rel);
}

/**
 * The host's policy check of one proposal against tools.json. Pure: no file system. (The host also
 * resolves the path against the real workspace, which catches symbolic links leading out.)
 */
export class PolicyEngine {
  private readonly tools: ReadonlySet<string>;
  private readonly commands: ReadonlySet<string>;
  readonly canRead: (rel: string) => boolean;
  readonly canWrite: (rel: string) => boolean;
  readonly isDenied: (rel: string) => boolean;

  constructor(readonly policy: Policy) {
    this.tools = new Set(policy.tools);
    this.commands = new Set(policy.commands.map(normalizeCommand));
    this.canRead = globMatcher(policy.paths.read);
    this.canWrite = globMatcher(policy.paths.write);
    this.isDenied = policy.paths.deny.length ? globMatcher(policy.paths.deny) : () => false;
  }

  timeoutOf(tool: string): number {
    return this.policy.timeouts[tool] ?? this.policy.timeouts.default ?? 10_000;
  }

  /** Whether a listed or searched file may be shown to the model (read globs, minus deny). */
  visible(rel: string): boolean {
    return this.canRead(rel) && !this.isDenied(rel);
  }

  decide(proposal: Proposal): Decision {
    const { tool } = proposal;
    if (!(KNOWN_TOOLS as readonly string[]).includes(tool)) {
      return { allowed: false, rule: 'tools', reason: `"${tool}" is not a tool this host provides` };
    }
    if (!this.tools.has(tool))
      return { allowed: false, rule: 'tools', reason: `"${tool}" is not listed in tools.json tools` };
    const parsed = toolArgs[tool as keyof typeof toolArgs].safeParse(proposal.args);
    if (!parsed.success) {
      const i = parsed.error.issues[0]!;
      return { allowed: false, rule: 'args', reason: `${tool}: ${i.path.join('.') || 'args'}: ${i.message}` };
    }
    const args = parsed.data as Record<string, string | undefined>;
    if (tool === 'run_command') {
      const cmd = normalizeCommand(args.command!);
      return this.commands.has(cmd)
        ? { allowed: true, rule: 'commands', reason: `"${cmd}" is an allowed command` }
        : { allowed: false, rule: 'commands', reason: `"${cmd}" is not listed in tools.json commands` };
    }
    const requested = args.path ?? '.';
    const rel = workspaceRelative(requested);
    if (rel === null) {
      return { allowed: false, rule: 'workspace', reason: `path "${requested}" is outside the workspace` };
    }
    if (rel !== '.' && this.isDenied(rel)) {
      return { allowed: false, rule: 'paths.deny', reason: `path "${rel}" matches tools.json paths.deny` };
    }
    if (WRITE_TOOLS.has(tool)) {
      return this.canWrite(rel)
        ? { allowed: true, rule: 'paths.write', reason: `"${rel}" matches tools.json paths.write` }
        : { allowed: false, rule: 'paths.write', reason: `"${rel}" does not match tools.json paths.write` };
    }
    // list_files and search walk a folder; what they show is filtered by the read globs.
    if (tool === 'read_file' && !this.canRead(rel)) {
      return { allowed: false, rule: 'paths.read', reason: `"${rel}" does not match tools.json paths.read` };
    }
    return {
      allowed: true,
      rule: 'paths.read',
      reason: `${tool} of "${rel}" is within tools.json paths.read`,
    };
  }
}
