/**
 * The redaction engine. `redactCredentials` is the ledger's entry: credentials are replaced before
 * anything is appended. Export uses `createRedactor('share', …)` and checks its own output with
 * `scanForSecrets`.
 */
import { createRedactor, type Redactor } from './engine';

export {
  createRedactor,
  scanForSecrets,
  type RedactContext,
  type RedactProfile,
  type RedactResult,
  type Redactor,
  type RedactorOptions,
  type ReducedText,
  type SecretFinding,
} from './engine';
export {
  CREDENTIAL_DETECTORS,
  FULL_TEXT_RULE,
  SENSITIVE_KEY_RULE,
  SHARE_DETECTORS,
  isPlaceholder,
  isProtectedValue,
  isSensitiveKey,
  type Detector,
} from './detectors';
export {
  RedactRulesFileSchema,
  parseJsonPath,
  parseRedactRules,
  type RedactRule,
  type RedactRules,
} from './rules';

/**
 * Replaces credentials anywhere in a JSON value (deep). Placeholders are numbered per call (`#1` for
 * the first distinct value of each rule), so the same input always gives the same output. The input
 * is never mutated; when `hits` is 0 the value returned is the input itself.
 */
export function redactCredentials<T>(value: T): { value: T; hits: number } {
  const redactor = credentialsRedactor();
  redactor.forget();
  const r = redactor.redactValue(value);
  return { value: r.value, hits: r.hits };
}

/** The redactor redactCredentials uses (to ask what it may replace: Redactor.mayRedactString, mayRedactKey). */
export function credentialsRedactor(): Redactor {
  // One redactor for every call (building one cost more than redacting a typical payload).
  ledgerRedactor ??= createRedactor('credentials');
  return ledgerRedactor;
}

let ledgerRedactor: Redactor | null = null;
