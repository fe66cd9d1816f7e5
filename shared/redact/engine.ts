/**
 * The redaction engine: deep-walks JSON values and replaces secrets by stable placeholders
 * `[REDACTED:<rule>#<n>]` (same value → same placeholder for the life of one redactor, so one
 * bundle's diffs stay readable). Pure TypeScript: runs in Node, the renderer and the report page.
 *
 * The input is never mutated. Unchanged subtrees are shared with the input (copy-on-write): when
 * `changed` is false, `value` is the input itself.
 */
import {
  CREDENTIAL_DETECTORS,
  FULL_TEXT_RULE,
  SENSITIVE_KEY_RULE,
  SHARE_DETECTORS,
  isFullTextKey,
  isPlaceholder,
  isProtectedValue,
  isSensitiveKey,
  normalizeKey,
  type Detector,
} from './detectors';
import { parseJsonPath, type PathPattern, type RedactRules } from './rules';

/** credentials: secrets only (the ledger). share: also personal data and long full texts (export). */
export type RedactProfile = 'credentials' | 'share';

export interface RedactorOptions {
  /** Hex sha256 of a string; the share profile records it for reduced full-text fields. */
  sha256?: (s: string) => string;
  /** User rules, from parseRedactRules. */
  rules?: RedactRules;
  /** Full-text fields longer than this many characters are reduced (share profile). Default 200. */
  fullTextLimit?: number;
}

export interface RedactContext {
  /** Path of the value inside the event, for user rules' `paths` (e.g. ['payload'] for a payload). */
  path?: readonly string[];
}

export interface RedactResult<T> {
  value: T;
  /** Whether anything was replaced or dropped; when false, `value` is the input itself. */
  changed: boolean;
  /** Replacements made by this call. */
  hits: number;
}

/** What a long full-text field becomes in the share profile. */
export interface ReducedText {
  redacted: string;
  sha256?: string;
  length: number;
}

export interface Redactor {
  readonly profile: RedactProfile;
  redactValue<T>(value: T, ctx?: RedactContext): RedactResult<T>;
  /** Redacts one free-standing text (no key context). */
  redactText(text: string): RedactResult<string>;
  /**
   * False only when redactValue would surely leave this string alone, found under `key` (an array's
   * items under their array's key, as redactValue walks them; undefined: at the top): a walk that
   * finds every string and key left alone need not redact (prepareItem asks while it sorts keys).
   */
  mayRedactString(s: string, key: string | undefined): boolean;
  /** False only when redactValue would surely leave this key's name alone. */
  mayRedactKey(k: string): boolean;
  /** Replacements per rule id since the redactor was created (or last forgot). */
  counts(): Record<string, number>;
  /** Forgets placeholders and counts, keeping what was compiled: numbering starts again at #1. */
  forget(): void;
}

export interface SecretFinding {
  rule: string;
  /** Offset of the secret in the scanned text. */
  index: number;
}

interface CompiledUserRule {
  id: string;
  re: RegExp | null;
  keys: Set<string> | null;
  paths: PathPattern[] | null;
  drop: boolean;
}

const DROP: unique symbol = Symbol('drop');
type Dropped = typeof DROP;

function triggerOf(detectors: readonly Detector[]): RegExp {
  return new RegExp(detectors.map((d) => `(?:${d.trigger.source})`).join('|'), 'i');
}

const CREDENTIAL_TRIGGER = triggerOf(CREDENTIAL_DETECTORS);
const SHARE_LIST: readonly Detector[] = [...CREDENTIAL_DETECTORS, ...SHARE_DETECTORS];
const SHARE_TRIGGER = triggerOf(SHARE_LIST);

function ruleId(name: string): string {
  // Ids appear in placeholders and in a bundle manifest's per-rule counts (/^[A-Za-z0-9_.:-]{1,100}$/).
  return (
    name
      .trim()
      .replace(/[^A-Za-z0-9_.-]+/g, '_')
      .slice(0, 100) || 'rule'
  );
}

const keyNorm = (k: string): string => normalizeKey(k);

function setOwn(obj: Record<string, unknown>, k: string, v: unknown): void {
  if (k === '__proto__')
    Object.defineProperty(obj, k, { value: v, enumerable: true, writable: true, configurable: true });
  else obj[k] = v;
}

/** Key classification, cached: most payloads reuse a small set of key names. */
const KEY_SENSITIVE = 1;
const KEY_FULL_TEXT = 2;
const keyClassCache = new Map<string, number>();
function keyClass(k: string): number {
  let c = keyClassCache.get(k);
  if (c === undefined) {
    c = (isSensitiveKey(k) ? KEY_SENSITIVE : 0) | (isFullTextKey(k) ? KEY_FULL_TEXT : 0);
    if (keyClassCache.size > 10_000) keyClassCache.clear();
    keyClassCache.set(k, c);
  }
  return c;
}

class RedactorImpl implements Redactor {
  private readonly detectors: readonly Detector[];
  private readonly trigger: RegExp;
  private readonly share: boolean;
  private readonly fullTextLimit: number;
  private readonly sha256: ((s: string) => string) | undefined;
  private readonly allowExact: Set<string>;
  private readonly allowRe: RegExp[];
  /** Pattern rules without keys/paths: applied to every string. */
  private readonly globalRules: CompiledUserRule[];
  /** Rules with keys and/or paths: applied to the values they select. */
  private readonly selectRules: CompiledUserRule[];
  private readonly usesPaths: boolean;
  private readonly placeholders = new Map<string, Map<string, string>>();
  private readonly totals = new Map<string, number>();
  private path: string[] = [];
  /** Whether a key name can hold anything the detectors look for (most keys repeat). */
  private readonly keyTriggers = new Map<string, boolean>();
  /** Whether redactKey changes a key name (it depends on the name alone; most keys repeat). */
  private readonly keyChanges = new Map<string, boolean>();
  private callHits = 0;

  forget(): void {
    // V8's Map#clear allocates a new table even for an empty map; the ledger forgets before every
    // event, and most events have nothing to forget (measured ~0.35 µs an event).
    if (this.placeholders.size > 0) this.placeholders.clear();
    if (this.totals.size > 0) this.totals.clear();
  }

  constructor(
    readonly profile: RedactProfile,
    options: RedactorOptions,
  ) {
    this.share = profile === 'share';
    this.detectors = this.share ? SHARE_LIST : CREDENTIAL_DETECTORS;
    this.trigger = this.share ? SHARE_TRIGGER : CREDENTIAL_TRIGGER;
    this.fullTextLimit = options.fullTextLimit ?? 200;
    this.sha256 = options.sha256;
    const allow = options.rules?.allow ?? [];
    this.allowExact = new Set(allow.filter((a) => !a.startsWith('re:')));
    this.allowRe = allow.filter((a) => a.startsWith('re:')).map((a) => new RegExp(a.slice(3)));
    const compiled: CompiledUserRule[] = (options.rules?.rules ?? []).map((r) => ({
      id: ruleId(r.name),
      re: r.pattern !== undefined ? new RegExp(r.pattern, (r.flags ?? '') + 'g') : null,
      keys: r.keys ? new Set(r.keys.map(keyNorm)) : null,
      paths: r.paths ? r.paths.map((p) => parseJsonPath(p) ?? []) : null,
      drop: r.action === 'drop',
    }));
    this.globalRules = compiled.filter((r) => r.re && !r.keys && !r.paths);
    this.selectRules = compiled.filter((r) => r.keys || r.paths);
    this.usesPaths = compiled.some((r) => r.paths);
  }

  counts(): Record<string, number> {
    return Object.fromEntries([...this.totals.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  redactValue<T>(value: T, ctx?: RedactContext): RedactResult<T> {
    this.callHits = 0;
    this.path = ctx?.path ? [...ctx.path] : [];
    const out = this.walk(value, undefined, null);
    const v = (out === DROP ? undefined : out) as T;
    return { value: v, changed: v !== value, hits: this.callHits };
  }

  redactText(text: string): RedactResult<string> {
    return this.redactValue(text);
  }

  mayRedactString(s: string, key: string | undefined): boolean {
    // User rules select by key, path or pattern: whatever they may do, the walk decides.
    if (this.globalRules.length > 0 || this.selectRules.length > 0) return true;
    if (s.length === 0) return false;
    if (key !== undefined) {
      const kc = keyClass(key);
      if (kc & KEY_SENSITIVE) return true;
      if (this.share && kc & KEY_FULL_TEXT && s.length > this.fullTextLimit) return true;
    }
    return this.trigger.test(s);
  }

  mayRedactKey(k: string): boolean {
    if (this.globalRules.length > 0 || this.selectRules.length > 0) return true;
    let c = this.keyChanges.get(k);
    if (c === undefined) {
      // redactKey's replacements without its placeholders: a detector replaces a match whose secret
      // secretOf keeps and the allow list does not (none replaced in `k`, none in what follows).
      let hit = false;
      if (this.trigger.test(k)) {
        for (const d of this.detectors) {
          if (!d.trigger.test(k)) continue;
          replaceMatches(k, d.pattern, (m) => {
            const found = secretOf(d, m);
            if (found !== null && !this.allowed(found.secret)) hit = true;
            return null;
          });
        }
      }
      c = hit;
      if (this.keyChanges.size > 10_000) this.keyChanges.clear();
      this.keyChanges.set(k, c);
    }
    return c;
  }

  private allowed(s: string): boolean {
    if (this.allowExact.size > 0 && this.allowExact.has(s)) return true;
    for (const re of this.allowRe) if (re.test(s)) return true;
    return false;
  }

  private placeholder(rule: string, secret: string): string {
    let byValue = this.placeholders.get(rule);
    if (byValue === undefined) {
      byValue = new Map();
      this.placeholders.set(rule, byValue);
    }
    let p = byValue.get(secret);
    if (p === undefined) {
      p = `[REDACTED:${rule}#${byValue.size + 1}]`;
      byValue.set(secret, p);
    }
    this.hit(rule);
    return p;
  }

  private hit(rule: string): void {
    this.callHits++;
    this.totals.set(rule, (this.totals.get(rule) ?? 0) + 1);
  }

  private walk(node: unknown, key: string | undefined, scoped: CompiledUserRule[] | null): unknown {
    if (typeof node === 'string') return this.redactString(node, key, scoped);
    if (node === null || typeof node !== 'object') return node;
    if (Array.isArray(node)) {
      let out: unknown[] | null = null;
      for (let i = 0; i < node.length; i++) {
        const v: unknown = node[i];
        if (this.usesPaths) this.path.push(String(i));
        // Array elements inherit their array's key: `set-cookie: [...]`, `content: [...]`.
        const nv = this.child(v, key, scoped, false);
        if (this.usesPaths) this.path.pop();
        if (nv !== v) {
          out ??= node.slice(0, i);
          if (nv !== DROP) out.push(nv);
        } else if (out) out.push(v);
      }
      return out ?? node;
    }
    const obj = node as Record<string, unknown>;
    const keys = Object.keys(obj);
    let out: Record<string, unknown> | null = null;
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]!;
      const v = obj[k];
      if (this.usesPaths) this.path.push(k);
      const nv = this.child(v, k, scoped, true);
      if (this.usesPaths) this.path.pop();
      // Keys can hold secrets too (a map keyed by token or e-mail): they get the text detectors.
      const rk = this.redactKey(k);
      if (nv !== v || rk !== k) {
        if (!out) {
          out = {};
          for (let j = 0; j < i; j++) setOwn(out, keys[j]!, obj[keys[j]!]);
        }
        if (nv !== DROP) setOwn(out, rk, nv);
      } else if (out) setOwn(out, k, v);
    }
    return out ?? node;
  }

  /** Applies user rules that select this field (by key or path), then walks it. */
  private child(
    v: unknown,
    key: string | undefined,
    scoped: CompiledUserRule[] | null,
    isField: boolean,
  ): unknown {
    let sc = scoped;
    if (this.selectRules.length > 0) {
      const nk = isField && key !== undefined ? keyNorm(key) : undefined;
      for (const r of this.selectRules) {
        const selected =
          (nk !== undefined && r.keys?.has(nk) === true) || (r.paths !== null && this.pathMatches(r.paths));
        if (!selected) continue;
        if (r.re === null) {
          if (r.drop) {
            this.hit(r.id);
            return DROP;
          }
          return this.maskWhole(r.id, v);
        }
        if (r.drop) {
          if (containsMatch(v, r.re)) {
            this.hit(r.id);
            return DROP;
          }
        } else sc = sc ? [...sc, r] : [r];
      }
    }
    return this.walk(v, key, sc);
  }

  private pathMatches(patterns: PathPattern[]): boolean {
    const p = this.path;
    outer: for (const pat of patterns) {
      if (pat.length !== p.length) continue;
      for (let i = 0; i < pat.length; i++) if (pat[i] !== '*' && pat[i] !== p[i]) continue outer;
      return true;
    }
    return false;
  }

  private maskWhole(rule: string, v: unknown): unknown {
    if (v === null || v === undefined) return v;
    const s = typeof v === 'string' ? v : JSON.stringify(v);
    if (s === '' || isPlaceholder(s) || this.allowed(s)) return v;
    return this.placeholder(rule, s);
  }

  private redactString(s: string, key: string | undefined, scoped: CompiledUserRule[] | null): unknown {
    if (s.length === 0) return s;
    if (key !== undefined) {
      const kc = keyClass(key);
      if (kc & KEY_SENSITIVE) {
        if (isPlaceholder(s) || isProtectedValue(s) || this.allowed(s)) return s;
        return this.placeholder(SENSITIVE_KEY_RULE, s);
      }
      if (this.share && kc & KEY_FULL_TEXT && s.length > this.fullTextLimit && !this.allowed(s)) {
        this.hit(FULL_TEXT_RULE);
        const reduced: ReducedText = this.sha256
          ? { redacted: FULL_TEXT_RULE, sha256: this.sha256(s), length: s.length }
          : { redacted: FULL_TEXT_RULE, length: s.length };
        return reduced;
      }
    }
    let out = s;
    if (this.trigger.test(s)) {
      for (const d of this.detectors) if (d.trigger.test(out)) out = this.apply(d, out);
    }
    for (const r of this.globalRules) {
      const res = this.applyUser(r, out);
      if (res === DROP) return DROP;
      out = res;
    }
    if (scoped) {
      for (const r of scoped) {
        const res = this.applyUser(r, out);
        if (res === DROP) return DROP;
        out = res;
      }
    }
    return out;
  }

  private redactKey(k: string): string {
    let t = this.keyTriggers.get(k);
    if (t === undefined) {
      t = this.trigger.test(k);
      if (this.keyTriggers.size > 10_000) this.keyTriggers.clear();
      this.keyTriggers.set(k, t);
    }
    if (!t) return k;
    let out = k;
    for (const d of this.detectors) if (d.trigger.test(out)) out = this.apply(d, out);
    return out;
  }

  private apply(d: Detector, s: string): string {
    return replaceMatches(s, d.pattern, (m) => {
      const found = secretOf(d, m);
      if (found === null || this.allowed(found.secret)) return null;
      return { start: found.start, length: found.secret.length, text: this.placeholder(d.id, found.secret) };
    });
  }

  private applyUser(r: CompiledUserRule, s: string): string | Dropped {
    const re = r.re!;
    re.lastIndex = 0;
    if (r.drop) {
      const hit = re.test(s);
      re.lastIndex = 0;
      if (hit) {
        this.hit(r.id);
        return DROP;
      }
      return s;
    }
    return replaceMatches(s, re, (m) =>
      isPlaceholder(m[0]) || this.allowed(m[0])
        ? null
        : { start: m.index, length: m[0].length, text: this.placeholder(r.id, m[0]) },
    );
  }
}

/**
 * `s` with the non-empty matches of the global `re` that `replacement` takes replaced: it gives
 * the span to replace (the whole match or a part of it) and its text, or null to keep the match.
 * `s` itself when nothing was replaced.
 */
function replaceMatches(
  s: string,
  re: RegExp,
  replacement: (m: RegExpExecArray) => { start: number; length: number; text: string } | null,
): string {
  re.lastIndex = 0;
  let out = '';
  let last = 0;
  let replaced = false;
  let m: RegExpExecArray | null;
  while ((m = re.exec(s)) !== null) {
    if (m[0].length === 0) {
      re.lastIndex++;
      continue;
    }
    const r = replacement(m);
    if (r === null) continue;
    out += s.slice(last, r.start) + r.text;
    last = r.start + r.length;
    replaced = true;
  }
  re.lastIndex = 0;
  return replaced ? out + s.slice(last) : s;
}

/** The secret a detector's match stands for and where it starts, or null when the match holds none. */
function secretOf(d: Detector, m: RegExpExecArray): { start: number; secret: string } | null {
  const secret = m.groups?.secret ?? m[0];
  if (secret.length === 0 || (d.validate && !d.validate(m)) || isProtectedValue(secret)) return null;
  return { start: m.index + (m.groups?.pre?.length ?? 0), secret };
}

function containsMatch(v: unknown, re: RegExp): boolean {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  if (s === undefined) return false;
  re.lastIndex = 0;
  const hit = re.test(s);
  re.lastIndex = 0;
  return hit;
}

/** Creates a redactor; its placeholders are stable per distinct value for its whole life. */
export function createRedactor(profile: RedactProfile = 'share', options: RedactorOptions = {}): Redactor {
  return new RedactorImpl(profile, options);
}

/**
 * Runs every credential detector (or the detectors given) over a whole text, e.g. an exported
 * bundle's own output, and returns what fired, in text order. Placeholders never fire.
 */
export function scanForSecrets(
  text: string,
  detectors: readonly Detector[] = CREDENTIAL_DETECTORS,
): SecretFinding[] {
  const found: SecretFinding[] = [];
  if (detectors === CREDENTIAL_DETECTORS && !CREDENTIAL_TRIGGER.test(text)) return found;
  for (const d of detectors) {
    if (!d.trigger.test(text)) continue;
    const re = d.pattern;
    re.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = re.exec(text)) !== null) {
      if (m[0].length === 0) {
        re.lastIndex++;
        continue;
      }
      const hit = secretOf(d, m);
      if (hit !== null) found.push({ rule: d.id, index: hit.start });
    }
    re.lastIndex = 0;
  }
  // Several detectors can fire on one secret (Authorization: Bearer <jwt>): keep the first.
  found.sort((a, b) => a.index - b.index);
  return found.filter((f, i) => i === 0 || found[i - 1]!.index !== f.index);
}
