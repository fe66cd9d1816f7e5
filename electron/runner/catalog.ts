import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import * as z from '../../shared/zod';
import { ProofloopError } from '../../shared/result';
import { sha256Hex } from '../crypto';

/** Tools the host knows how to execute. A policy may name others: they are simply never allowed. */
export const KNOWN_TOOLS = [
  'list_files',
  'read_file',
  'search',
  'apply_patch',
  'write_file',
  'run_command',
] as const;
export type ToolName = (typeof KNOWN_TOOLS)[number];
/** Tools that cannot have had an effect: an interrupted call of these may be run again on resume. */
export const READ_ONLY_TOOLS: ReadonlySet<string> = new Set(['list_files', 'read_file', 'search']);

const relPath = z.string().check(
  z.minLength(1),
  z.refine(
    (p) => !path.isAbsolute(p) && !p.split(/[\\/]/).includes('..'),
    'must be a relative path inside the workspace',
  ),
);
const edit = z.strictObject({ find: z.string().check(z.minLength(1)), replace: z.string() });
const command = z.string().check(z.trim(), z.minLength(1), z.maxLength(500));

/** Hints that script the simulated model for this task (the real model would not need them). */
export const SimHintsSchema = z.strictObject({
  explore: z.array(relPath).check(z.minLength(1), z.maxLength(20)),
  search: z.array(z.string().check(z.minLength(1), z.maxLength(100))).check(z.minLength(1), z.maxLength(20)),
  target: relPath,
  fix: edit,
  wrong_fix: z.optional(edit),
  secret_file: z.optional(relPath),
  slow_command: z.optional(command),
});

export const TaskSchema = z.strictObject({
  id: z
    .string()
    .check(z.regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'lowercase letters, digits and dashes, at most 64')),
  title: z.string().check(z.minLength(1), z.maxLength(200)),
  goal: z.string().check(z.minLength(1), z.maxLength(4000)),
  judge: z.strictObject({
    command,
    timeout_ms: z._default(z.int().check(z.positive(), z.maximum(600_000)), 30_000),
  }),
  sim: z.optional(SimHintsSchema),
});

const ms = z.int().check(z.positive(), z.maximum(3_600_000));
export const PolicySchema = z.strictObject({
  version: z.literal(1),
  /** Tools the model may use; anything else is denied by rule tool.not_allowed. */
  tools: z.array(z.string().check(z.minLength(1))).check(z.maxLength(50)),
  paths: z.strictObject({
    /** picomatch globs relative to the workspace; a leading ! excludes. */
    read: z._default(z.array(z.string().check(z.minLength(1))), ['**']),
    write: z._default(z.array(z.string().check(z.minLength(1))), []),
    deny: z._default(z.array(z.string().check(z.minLength(1))), []),
  }),
  /** Exact command lines run_command may run (argv split on whitespace, no shell). */
  commands: z._default(z.array(command).check(z.maxLength(50)), []),
  budget: z.strictObject({
    steps: z.int().check(z.positive(), z.maximum(10_000)),
    tokens: z.int().check(z.positive(), z.maximum(100_000_000)),
    wall_ms: ms,
  }),
  /** Per-tool timeouts in ms; `default` for tools not listed. */
  timeouts: z._default(z.record(z.string(), ms), {}),
  limits: z._default(
    z.strictObject({
      excerpt_bytes: z._default(z.int().check(z.minimum(64), z.maximum(65_536)), 2048),
      output_bytes: z._default(z.int().check(z.minimum(1024), z.maximum(64 * 1024 * 1024)), 1 << 20),
    }),
    { excerpt_bytes: 2048, output_bytes: 1 << 20 },
  ),
});

export type TaskDef = z.output<typeof TaskSchema>;
export type Policy = z.output<typeof PolicySchema>;
export type SimHints = z.output<typeof SimHintsSchema>;

export interface LoadedTask {
  task: TaskDef;
  policy: Policy;
  /** sha256 of the policy file's bytes. */
  policy_digest: string;
  dir: string;
  workspace: string;
}

export interface CatalogError {
  file: string;
  field: string;
  message: string;
}

export class CatalogProblem extends ProofloopError {
  constructor(readonly problem: CatalogError) {
    super('invalid_input', `${problem.file}: ${problem.field}: ${problem.message}`);
  }
}

function parseFile<S extends z.ZodMiniType>(file: string, schema: S): { value: z.output<S>; raw: string } {
  let raw: string;
  try {
    raw = readFileSync(file, 'utf8');
  } catch (e) {
    throw new CatalogProblem({
      file,
      field: '(file)',
      message: `cannot read: ${(e as NodeJS.ErrnoException).code ?? e}`,
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (e) {
    throw new CatalogProblem({ file, field: '(root)', message: `not valid JSON: ${(e as Error).message}` });
  }
  const r = schema.safeParse(json);
  if (!r.success) {
    const first = r.error.issues[0]!;
    const field = first.path.length ? first.path.map(String).join('.') : '(root)';
    const keys =
      first.code === 'unrecognized_keys' ? ` (${(first as { keys: string[] }).keys.join(', ')})` : '';
    throw new CatalogProblem({ file, field, message: first.message + keys });
  }
  return { value: r.data, raw };
}

/** Loads one task folder: task.json, tools.json and its workspace, or throws naming file and field. */
export function loadTaskDir(dir: string): LoadedTask {
  const taskFile = path.join(dir, 'task.json');
  const toolsFile = path.join(dir, 'tools.json');
  const { value: task } = parseFile(taskFile, TaskSchema);
  if (task.id !== path.basename(dir)) {
    throw new CatalogProblem({
      file: taskFile,
      field: 'id',
      message: `"${task.id}" must equal the folder name "${path.basename(dir)}"`,
    });
  }
  const { value: policy, raw } = parseFile(toolsFile, PolicySchema);
  const workspace = path.join(dir, 'workspace');
  if (!existsSync(workspace) || !statSync(workspace).isDirectory()) {
    throw new CatalogProblem({
      file: workspace,
      field: '(folder)',
      message: 'a task needs a workspace/ folder',
    });
  }
  return { task, policy, policy_digest: sha256Hex(raw), dir, workspace };
}

/** Every task folder of a catalog (a folder holding task.json), with the problems of those that fail. */
export function loadCatalog(catalogDir: string): { tasks: LoadedTask[]; errors: CatalogError[] } {
  const root = path.resolve(catalogDir);
  if (!existsSync(root) || !statSync(root).isDirectory()) {
    throw new ProofloopError('not_found', `task catalog ${root} is not a folder`);
  }
  const tasks: LoadedTask[] = [];
  const errors: CatalogError[] = [];
  for (const name of readdirSync(root).sort()) {
    const dir = path.join(root, name);
    if (!statSync(dir).isDirectory() || !existsSync(path.join(dir, 'task.json'))) continue;
    try {
      tasks.push(loadTaskDir(dir));
    } catch (e) {
      if (e instanceof CatalogProblem) errors.push(e.problem);
      else throw e;
    }
  }
  return { tasks, errors };
}

/** One task of a catalog by id. */
export function loadTask(catalogDir: string, taskId: string): LoadedTask {
  if (!/^[a-z0-9][a-z0-9-]{0,63}$/.test(taskId))
    throw new ProofloopError('bad_args', `"${taskId}" is not a task id`);
  const dir = path.join(path.resolve(catalogDir), taskId);
  if (!existsSync(path.join(dir, 'task.json'))) {
    throw new ProofloopError('not_found', `no task "${taskId}" in ${catalogDir} (no ${taskId}/task.json)`);
  }
  return loadTaskDir(dir);
}
