/**
 * Runs `fn` once the next frame is painted: a requestAnimationFrame callback runs before the
 * frame's paint, a task queued from it after. A page that draws no frames (hidden) runs it after
 * `fallbackMs` instead, if given. Returns the cancel.
 */
export function afterPaint(fn: () => void, fallbackMs?: number): () => void {
  let done = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const once = () => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    fn();
  };
  const frame = requestAnimationFrame(() => {
    timer = setTimeout(once, 0);
  });
  const fallback = fallbackMs === undefined ? undefined : setTimeout(once, fallbackMs);
  return () => {
    done = true;
    cancelAnimationFrame(frame);
    clearTimeout(timer);
    clearTimeout(fallback);
  };
}
