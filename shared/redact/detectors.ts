/**
 * Detectors of the redaction engine: pure regular expressions, no Node, no DOM.
 *
 * Why hand-written and not secretlint's `@secretlint/secretlint-rule-preset-recommend`: its rules
 * are written against `@secretlint/core`, whose API is asynchronous and per source file (a rule's
 * `file(source)` handler reports through `context.report` on a whole `SecretLintRawSource`, and the
 * runner resolves results as promises). Our engine calls detectors on every string of every JSON
 * payload, synchronously, inside the ledger's append transaction and in the exporter's hot loop
 * (goal: ≥ 50,000 events/s on 2 cores, i.e. ≤ 20 µs per event for the whole walk). An async, per-file
 * API with a promise per string cannot meet that (structural reason, not measured), and the ledger
 * path (`redactCredentials`) must stay synchronous. So the rules are mirrored here as plain RegExps
 * with a cheap trigger prefilter each.
 *
 * Mirrored (patterns re-derived from the ideas of): secretlint-rule-aws (access key id prefixes,
 * secret access key only next to its key name), -github (ghp_/gho_/ghu_/ghs_/ghr_, github_pat_),
 * -slack (xox?- tokens, incoming webhooks), -npm (npm_ + 36), -privatekey (whole PEM block),
 * -basicauth (scheme://user:pass@host), -openai and -anthropic (sk-proj-, sk-ant-). Added: Stripe,
 * Google API keys, JWTs, bearer/Authorization values, `password=`-style assignments, and the
 * `share` profile's personal data (e-mail, IPv4/IPv6, home directories).
 *
 * A detector's `pattern` is global. When it has a named group `secret`, only that group is replaced;
 * a named group `pre` must then cover everything from the match start up to the secret. Without
 * `secret` the whole match is replaced. Value classes exclude `[` so that placeholders
 * (`[REDACTED:rule#n]`) are never matched again.
 */

export interface Detector {
  /** Rule id, used in placeholders `[REDACTED:<id>#<n>]` and in per-rule counts. */
  id: string;
  description: string;
  /** Global RegExp; see the module comment for the `pre` / `secret` group convention. */
  pattern: RegExp;
  /** Cheap, non-global RegExp that must match somewhere for `pattern` to be worth running. */
  trigger: RegExp;
  /** Extra check on a match; false drops it. */
  validate?(match: RegExpExecArray): boolean;
}

/** Values that are never secrets: hex digests (sha1/git, sha256, sha512), UUIDs, ISO times. */
const PROTECTED_RE =
  /^(?:[0-9a-f]{40}|[0-9a-f]{64}|[0-9a-f]{128}|[0-9A-F]{40}|[0-9A-F]{64}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?)$/;

export function isProtectedValue(s: string): boolean {
  return s.length >= 10 && s.length <= 128 && PROTECTED_RE.test(s);
}

const PLACEHOLDER_RE = /^\[REDACTED:[^\]]+\]$/;

/** True for a whole-string placeholder such as `[REDACTED:github_token#2]`. */
export function isPlaceholder(s: string): boolean {
  return s.length > 12 && s.charCodeAt(0) === 91 /* [ */ && PLACEHOLDER_RE.test(s);
}

/** Values after `password=` & co. that are not secrets (references, empty markers, prose). */
const ASSIGNMENT_STOP_RE =
  /^(?:null|none|nil|undefined|true|false|empty|required|optional|redacted|string|str|bool|any|\*+|x+|\.+|-+|_+)$/i;

function assignmentValueOk(m: RegExpExecArray): boolean {
  const v = m.groups?.secret ?? '';
  if (v.length < 3 || /^\d+$/.test(v) || ASSIGNMENT_STOP_RE.test(v)) return false;
  // References, not values: $VAR, ${VAR}, %VAR%, process.env.X, os.environ[...].
  if (v.charCodeAt(0) === 36 /* $ */ || v.charCodeAt(0) === 37 /* % */) return false;
  if (/^(?:process\.env|os\.environ|env)\b/.test(v)) return false;
  // Code: `token = getToken()`, `password: this.password`.
  if (m.input.charCodeAt(m.index + m[0].length) === 40 /* ( */) return false;
  if (/^(?:this|self|req|config|opts|options|args|params)\./.test(v)) return false;
  return true;
}

const hasDigit = (m: RegExpExecArray): boolean => /\d/.test(m[0]);

export const CREDENTIAL_DETECTORS: readonly Detector[] = [
  {
    id: 'private_key',
    description: 'PEM private key block (RSA, EC, DSA, OPENSSH, PKCS#8, encrypted, PGP), the whole block',
    pattern:
      /-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----|[\s\S]*$)/g,
    trigger: /PRIVATE KEY/,
  },
  {
    id: 'aws_access_key_id',
    description: 'AWS access key id (AKIA…, ASIA…, ABIA…, ACCA… + 16)',
    pattern: /(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])/g,
    trigger: /A(?:KIA|SIA|BIA|CCA)/,
  },
  {
    id: 'github_token',
    description: 'GitHub token: classic ghp_/gho_/ghu_/ghs_/ghr_ and fine-grained github_pat_',
    pattern:
      /(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{22,251})(?![A-Za-z0-9_])/g,
    trigger: /gh[pousr]_|github_pat_/,
  },
  {
    id: 'anthropic_api_key',
    description: 'Anthropic API key (sk-ant-…)',
    pattern: /(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,}/g,
    trigger: /sk-ant-/,
  },
  {
    id: 'openai_api_key',
    description: 'OpenAI project, service-account or admin key (sk-proj-, sk-svcacct-, sk-admin-)',
    pattern: /(?<![A-Za-z0-9_-])sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}/g,
    trigger: /sk-(?:proj|svcacct|admin)-/,
  },
  {
    id: 'sk_api_key',
    description: 'Other sk- API keys (OpenAI legacy, DeepSeek, …): sk- and ≥ 20 letters/digits with a digit',
    pattern: /(?<![A-Za-z0-9_-])sk-[A-Za-z0-9]{20,}(?![A-Za-z0-9_-])/g,
    trigger: /(?<![A-Za-z0-9_-])sk-/,
    validate: hasDigit,
  },
  {
    id: 'slack_webhook',
    description: 'Slack incoming webhook / workflow URL (the path after hooks.slack.com/)',
    pattern:
      /(?<pre>https?:\/\/hooks\.slack\.com\/)(?<secret>(?:services|workflows|triggers)\/[A-Za-z0-9_/+-]{8,})/g,
    trigger: /hooks\.slack\.com/,
  },
  {
    id: 'slack_token',
    description: 'Slack token (xoxa-, xoxb-, xoxp-, xoxr-, xoxs-)',
    pattern: /(?<![A-Za-z0-9_-])xox[abprs]-[A-Za-z0-9-]{10,}/g,
    trigger: /xox[abprs]-/,
  },
  {
    id: 'stripe_key',
    description: 'Stripe secret or restricted key (sk_live_, rk_live_, sk_test_, rk_test_)',
    pattern: /(?<![A-Za-z0-9_])[sr]k_(?:live|test)_[A-Za-z0-9]{10,}(?![A-Za-z0-9_])/g,
    trigger: /[sr]k_(?:live|test)_/,
  },
  {
    id: 'google_api_key',
    description: 'Google API key (AIza + 35)',
    pattern: /(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])/g,
    trigger: /AIza/,
  },
  {
    id: 'npm_token',
    description: 'npm access token (npm_ + 36)',
    pattern: /(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9_])/g,
    trigger: /npm_/,
  },
  {
    id: 'jwt',
    description: 'JSON Web Token (eyJ….eyJ….signature)',
    pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*(?![A-Za-z0-9_-])/g,
    trigger: /eyJ/,
  },
  {
    id: 'url_password',
    description: 'Password in a URL (scheme://user:password@host): only the password',
    pattern: /(?<pre>:\/\/[^\s:/?#@[\]"'<>\\]*:)(?<secret>[^\s/?#@[\]"'<>\\]+)(?=@)/g,
    trigger: /:\/\/[^\s/@]*:[^\s/]*@/,
  },
  {
    id: 'authorization_header',
    description: 'Value of an Authorization / Proxy-Authorization header (after its scheme)',
    pattern:
      /(?<pre>(?<![A-Za-z0-9_-])(?:proxy-)?authorization["']?\s*[:=]\s*["']?(?:(?:bearer|basic|token|digest|bot|apikey)\s+)?)(?<secret>[^\s"'[\],;\\]{8,})/gi,
    trigger: /authorization/i,
  },
  {
    id: 'bearer_token',
    description: 'Bearer token (Bearer <token>)',
    pattern: /(?<pre>(?<![A-Za-z0-9_-])bearer\s+)(?<secret>[A-Za-z0-9._~+/-]{16,}=*)/gi,
    trigger: /bearer/i,
  },
  {
    id: 'aws_secret_access_key',
    description: 'AWS secret access key: 40 base64 characters, only when assigned to an AWS secret key name',
    pattern:
      /(?<pre>(?<![A-Za-z0-9])(?:(?:aws_?)?secret_?access_?key|aws_?secret(?:_?key)?)["']?\s*(?:[:=]>?)\s*["']?)(?<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])/gi,
    trigger: /secret/i,
  },
  {
    id: 'secret_assignment',
    description: 'Value assigned to password / passwd / secret / token / api_key / access_key / private_key',
    pattern:
      /(?<pre>(?<![A-Za-z0-9])(?:password|passwd|passphrase|secret(?:[_-]?key)?|(?:auth[_-]?)?token|api[_-]?key|access[_-]?key|private[_-]?key)["']?\s*(?::=|=>|[:=])\s*["']?)(?<secret>[^\s"'`&,;()<>{}[\]\\]+)/gi,
    trigger: /pass|secret|token|api[_-]?key|access[_-]?key|private[_-]?key/i,
    validate: assignmentValueOk,
  },
];

function ipv4Ok(m: RegExpExecArray): boolean {
  // Loopback and the unspecified address identify nobody.
  return !m[0].startsWith('127.') && m[0] !== '0.0.0.0' && m[0] !== '255.255.255.255';
}

function ipv6Ok(m: RegExpExecArray): boolean {
  const s = m[0];
  const dbl = s.indexOf('::');
  if (dbl !== -1 && s.indexOf('::', dbl + 1) !== -1) return false;
  const groups = s.split(':').filter((g) => g.length > 0);
  if (groups.length === 0 || groups.some((g) => g.length > 4)) return false;
  if (dbl === -1 ? groups.length !== 8 : groups.length > 7) return false;
  if (dbl !== -1 && groups.length < 2) return false; // ::1, fe80:: and the like identify nobody
  if (dbl === -1 && (s.startsWith(':') || s.endsWith(':'))) return false;
  return /\d/.test(s);
}

export const SHARE_DETECTORS: readonly Detector[] = [
  {
    id: 'email',
    description: 'E-mail address',
    pattern:
      /(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,24}(?![A-Za-z0-9-])/g,
    trigger: /[A-Za-z0-9]@[A-Za-z0-9]/,
  },
  {
    id: 'ipv4',
    description: 'IPv4 address (not version strings like 1.2.3, not loopback)',
    pattern:
      /(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?!\.?\d|\w)/g,
    trigger: /\d\.\d{1,3}\.\d{1,3}\.\d/,
    validate: ipv4Ok,
  },
  {
    id: 'ipv6',
    description: 'IPv6 address (full or compressed, not loopback, not times like 08:00:00)',
    pattern: /(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w:])/g,
    // Same as /::|(?:[0-9A-Fa-f]{1,4}:){7}/ (a first group can be cut to its last digit), but it
    // starts at a ':' instead of at every hex digit: 8x faster on hash-heavy text (unit-tested alike).
    trigger: /:(?::|(?<=[0-9A-Fa-f]:)(?:[0-9A-Fa-f]{1,4}:){6})/,
    validate: ipv6Ok,
  },
  {
    id: 'home_path',
    description: 'User name in a home directory path (/home/<user>, /Users/<user>, C:\\Users\\<user>)',
    pattern:
      /(?<pre>(?<![\w.-])(?:\/home\/|\/Users\/|[A-Za-z]:(?:\\{1,2}|\/)[Uu]sers(?:\\{1,2}|\/)))(?<secret>[^/\\\s"'`:*?<>|[\]]+)/g,
    trigger: /\/home\/|\/Users\/|:(?:\\{1,2}|\/)[Uu]sers/,
  },
];

/** The key-based rule: a string under one of these keys is replaced whole. */
export const SENSITIVE_KEY_RULE = 'sensitive_key';
/** The share profile's reduction of long full-text fields. */
export const FULL_TEXT_RULE = 'full_text';

/**
 * Matches a normalized key (camelCase split to snake_case, lower case, `-` → `_`) that holds a
 * secret: the name itself or its last `_` segments. `tokens`, `max_tokens`, `token_count`,
 * `tokens_before` do not match.
 */
const SENSITIVE_KEY_RE =
  /(?:^|_)(?:api_?key|token|secret|secret_key|password|passwd|passphrase|authorization|cookie|private_key|access_key)$/;

const FULL_TEXT_KEYS = new Set([
  'content',
  'text',
  'prompt',
  'output',
  'stdout',
  'stderr',
  'file_text',
  'excerpt',
  'patch',
  'result',
]);

export function normalizeKey(key: string): string {
  let k = key;
  if (/[A-Z]/.test(k)) k = k.replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2').replace(/([a-z0-9])([A-Z])/g, '$1_$2');
  return k.toLowerCase().replace(/[-\s.]+/g, '_');
}

export function isSensitiveKey(key: string): boolean {
  return SENSITIVE_KEY_RE.test(normalizeKey(key));
}

export function isFullTextKey(key: string): boolean {
  return FULL_TEXT_KEYS.has(normalizeKey(key));
}
