/**
 * A source's own type name as the tail of an event kind: snake_case, [a-z0-9_], at most `max`
 * characters, so that `<prefix><tail>` fits KIND_RE (≤ 64). `fileHistorySnapshot`,
 * `file-history-snapshot` and `account/rateLimits/updated` become `file_history_snapshot` and
 * `account_rate_limits_updated`; an empty or symbol-only name becomes `unnamed`.
 */
export function kindPart(type: string, max: number): string {
  const s = type
    .slice(0, 4 * max)
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  return (s === '' ? 'unnamed' : s).slice(0, max).replace(/_+$/, '');
}
