/**
 * User redaction rules: `<folder>/.proofloop/redact.json`. The caller reads the file; this module
 * only validates its text and compiles it.
 */
import * as z from '../zod';

export const RedactRuleSchema = z.strictObject({
  name: z.string().check(z.trim(), z.minLength(1, 'must be a non-empty string')),
  /** A regular expression source (no slashes); matches are masked or their field dropped. */
  pattern: z.optional(z.string().check(z.minLength(1, 'must be a non-empty regular expression source'))),
  /** RegExp flags besides `g` (always on): any of i, m, s, u, v. */
  flags: z.optional(
    z.string().check(z.regex(/^[imsuv]*$/, 'only the flags i, m, s, u, v are allowed (g is implied)')),
  ),
  /** Key names (case-insensitive, `-` and `_` equivalent) whose values the rule applies to. */
  keys: z.optional(
    z
      .array(z.string().check(z.minLength(1, 'must be a non-empty key name')))
      .check(z.minLength(1, 'must list at least one key')),
  ),
  /** JSON paths (`payload.args.query`, `$.payload.items[*].id`) whose values the rule applies to. */
  paths: z.optional(
    z
      .array(z.string().check(z.minLength(1, 'must be a non-empty path')))
      .check(z.minLength(1, 'must list at least one path')),
  ),
  /** mask (default): replace by a placeholder; drop: remove the field. */
  action: z.optional(z.enum(['mask', 'drop'])),
});

export const RedactRulesFileSchema = z.strictObject({
  $schema: z.optional(z.string()),
  rules: z.array(RedactRuleSchema),
  /** Values never redacted: exact strings, or regular expression sources prefixed `re:`. */
  allow: z.optional(z.array(z.string())),
});

export type RedactRule = z.infer<typeof RedactRuleSchema>;
export interface RedactRules {
  rules: RedactRule[];
  allow: string[];
}

/** A path segment; `*` matches any key or index. */
export type PathPattern = readonly string[];

const SEGMENT_RE = /\[(\d+|\*)\]|\[(?:"([^"]*)"|'([^']*)')\]|\.?([^.[\]]+)/gy;

/** Parses `payload.args.query`, `$.payload.args.query`, `a.items[0].b`, `a[*].b`, `a["x.y"]`. */
export function parseJsonPath(path: string): PathPattern | null {
  let s = path.trim();
  if (s.startsWith('$')) s = s.slice(1);
  if (s.startsWith('.')) s = s.slice(1);
  if (s.length === 0) return null;
  const out: string[] = [];
  SEGMENT_RE.lastIndex = 0;
  let m: RegExpExecArray | null;
  let pos = 0;
  while (pos < s.length && (m = SEGMENT_RE.exec(s)) !== null) {
    if (m.index !== pos) return null;
    out.push(m[1] ?? m[2] ?? m[3] ?? m[4] ?? '');
    pos = SEGMENT_RE.lastIndex;
  }
  return pos === s.length && out.length > 0 ? out : null;
}

function describeRule(raw: unknown, index: number): string {
  const rules = (raw as { rules?: unknown })?.rules;
  const rule = Array.isArray(rules) ? (rules[index] as { name?: unknown } | undefined) : undefined;
  const name =
    rule && typeof rule === 'object' && typeof rule.name === 'string'
      ? ` (${JSON.stringify(rule.name)})`
      : '';
  return `rule ${index + 1}${name}`;
}

function fieldPath(path: readonly PropertyKey[]): string {
  let s = '';
  for (const p of path) s += typeof p === 'number' ? `[${p}]` : s ? `.${String(p)}` : String(p);
  return s;
}

/** Builds the message `<file>: rule N ("name"): field: problem` (N counts from 1). */
function issueMessage(fileName: string, raw: unknown, path: readonly PropertyKey[], message: string): string {
  if (path[0] === 'rules' && typeof path[1] === 'number') {
    const rest = fieldPath(path.slice(2));
    return `${fileName}: ${describeRule(raw, path[1])}: ${rest ? rest + ': ' : ''}${message}`;
  }
  const where = fieldPath(path);
  return `${fileName}: ${where ? where + ': ' : ''}${message}`;
}

/**
 * Validates the text of a redact.json. Returns the rules, or throws an Error whose message names the
 * file, the rule (1-based index and name) and the field, e.g.
 * `redact.json: rule 2 ("customer ids"): pattern: invalid regular expression: …`.
 */
export function parseRedactRules(jsonText: string, fileName: string): RedactRules {
  let raw: unknown;
  try {
    raw = JSON.parse(jsonText);
  } catch (e) {
    throw new Error(`${fileName}: invalid JSON: ${(e as Error).message}`);
  }
  const parsed = RedactRulesFileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    let message = issue.message;
    if (issue.code === 'unrecognized_keys')
      message = `unknown field(s) ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
    throw new Error(issueMessage(fileName, raw, issue.path, message));
  }
  const { rules, allow = [] } = parsed.data;
  const seen = new Set<string>();
  rules.forEach((rule, i) => {
    const fail = (field: string, message: string): never => {
      throw new Error(issueMessage(fileName, raw, ['rules', i, field], message));
    };
    if (seen.has(rule.name)) fail('name', `duplicate rule name ${JSON.stringify(rule.name)}`);
    seen.add(rule.name);
    if (rule.pattern === undefined && rule.keys === undefined && rule.paths === undefined) {
      throw new Error(
        issueMessage(fileName, raw, ['rules', i], 'needs at least one of pattern, keys, paths'),
      );
    }
    if (rule.flags !== undefined && rule.pattern === undefined) fail('flags', 'flags need a pattern');
    if (rule.pattern !== undefined) {
      let re: RegExp;
      try {
        re = new RegExp(rule.pattern, (rule.flags ?? '') + 'g');
      } catch (e) {
        return fail('pattern', `invalid regular expression: ${(e as Error).message}`);
      }
      if (re.exec('') !== null) fail('pattern', 'matches the empty string');
    }
    rule.paths?.forEach((p, j) => {
      if (parseJsonPath(p) === null) fail(`paths[${j}]`, `invalid JSON path ${JSON.stringify(p)}`);
    });
  });
  allow.forEach((a, j) => {
    if (!a.startsWith('re:')) return;
    try {
      new RegExp(a.slice(3));
    } catch (e) {
      throw new Error(`${fileName}: allow[${j}]: invalid regular expression: ${(e as Error).message}`);
    }
  });
  return { rules, allow };
}
