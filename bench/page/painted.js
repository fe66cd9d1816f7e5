// Runs in the page before any of its own scripts (bench/painted.ts installs it as an init script
// with the texts to watch in `window.__plPaintedTexts`). For each text, a promise of the page's
// epoch milliseconds at the end of the first frame that shows it in a visible element; and when the
// page first received a pointer press (`window.__plPressedAt`), which splits a click's time between
// the driver's delivering it and the page's answering it.
(() => {
  addEventListener(
    'pointerdown',
    () => {
      window.__plPressedAt ??= performance.timeOrigin + performance.now();
    },
    { capture: true },
  );
  const texts = window.__plPaintedTexts ?? [];
  const stamps = {};
  window.__plPainted = stamps;
  // Whether one of the deepest elements whose text holds `text` is visible: a loop over a stack,
  // not recursion, whatever the page's depth.
  const shownIn = (root, text) => {
    const stack = [root];
    while (stack.length) {
      const el = stack.pop();
      const deeper = [...el.children].filter((c) => c.textContent?.includes(text));
      if (deeper.length) stack.push(...deeper);
      else if (el.checkVisibility({ visibilityProperty: true }) && el.getClientRects().length > 0)
        return true;
    }
    return false;
  };
  for (const text of texts) {
    stamps[text] = new Promise((resolve) => {
      const check = () => {
        const body = document.body;
        if (!body?.textContent?.includes(text) || !shownIn(body, text)) return false;
        // A rAF callback runs before the frame's paint; a task queued from it runs after.
        requestAnimationFrame(() => setTimeout(() => resolve(performance.timeOrigin + performance.now())));
        return true;
      };
      const observer = new MutationObserver(() => {
        if (check()) observer.disconnect();
      });
      observer.observe(document, { childList: true, subtree: true, characterData: true, attributes: true });
    });
  }
})();
