/**
 * Runs `fn` once the next frame is painted: a requestAnimationFrame callback runs before the
 * frame's paint, a task queued from it after. A page that draws no frames (hidden) runs it after
 * `fallbackMs` instead, if given.
 */
export function afterPaint(fn: () => void, fallbackMs?: number): void {
  let fallback: ReturnType<typeof setTimeout> | undefined;
  let done = false;
  const once = () => {
    if (done) return;
    done = true;
    clearTimeout(fallback);
    fn();
  };
  requestAnimationFrame(() => setTimeout(once, 0));
  if (fallbackMs !== undefined) fallback = setTimeout(once, fallbackMs);
}
