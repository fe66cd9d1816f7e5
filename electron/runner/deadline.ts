/**
 * Calls `expired(used)` once `ms` have passed since `t0` (performance.now() time), never before:
 * libuv's loop clock is cached in whole ms, so a plain setTimeout can fire a hair early (29,999 of
 * 30,000 ms), and a budget_exhausted event must never state used < limit. The timer re-arms for
 * what is left until the time is really spent.
 */
export function deadline(t0: number, ms: number, expired: (usedMs: number) => void): { cancel(): void } {
  let timer: NodeJS.Timeout;
  const check = (): void => {
    const used = performance.now() - t0;
    if (used >= ms) expired(Math.floor(used));
    else timer = setTimeout(check, Math.ceil(ms - used));
  };
  timer = setTimeout(check, Math.max(0, Math.ceil(ms - (performance.now() - t0))));
  return { cancel: () => clearTimeout(timer) };
}
