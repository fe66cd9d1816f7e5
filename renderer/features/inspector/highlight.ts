import { useEffect } from 'react';

const NAME = 'search-hit';

/**
 * Marks every occurrence of `text` (case-insensitive) in the element's text with the CSS Custom
 * Highlight API: the DOM is not touched, so the payload's components keep their nodes. Returns
 * how many were marked. Browsers without the API mark nothing.
 */
export function markText(root: Element | null, text: string): number {
  const reg = typeof CSS !== 'undefined' && 'highlights' in CSS ? CSS.highlights : null;
  if (!reg) return 0;
  reg.delete(NAME);
  if (!root || !text) return 0;
  const needle = text.toLowerCase();
  const ranges: Range[] = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n && ranges.length < 1000; n = walker.nextNode()) {
    const hay = (n.textContent ?? '').toLowerCase();
    for (
      let at = hay.indexOf(needle);
      at >= 0 && ranges.length < 1000;
      at = hay.indexOf(needle, at + needle.length)
    ) {
      const r = new Range();
      r.setStart(n, at);
      r.setEnd(n, at + needle.length);
      ranges.push(r);
    }
  }
  if (ranges.length > 0) reg.set(NAME, new Highlight(...ranges));
  return ranges.length;
}

/** Highlights `text` in the element with this test id whenever `deps` change (the event shown, its mode). */
export function useHighlight(testId: string, text: string | null, deps: readonly unknown[]): void {
  useEffect(() => {
    // After the payload's blocks have rendered (a readable block may switch mode in between).
    const t = setTimeout(() => {
      const el = document.querySelector(`[data-testid="${testId}"]`);
      const n = markText(el, text ?? '');
      el?.setAttribute('data-hits', String(n));
    }, 0);
    return () => clearTimeout(t);
  }, [testId, text, ...deps]);
}
