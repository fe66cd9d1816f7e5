import type { Virtualizer, VirtualizerOptions } from '@tanstack/react-virtual';

/**
 * Virtualizer options that never read a size while React commits. TanStack Virtual reads the
 * scroll element's client size as it attaches and each new row's offsetHeight as it mounts: each
 * read forces a layout of the DOM just written, and the re-render the reading causes writes again,
 * so opening a run laid the page out several times in one task (Chromium traces of the click that
 * opens a run: ~20 ms in `measureElement`, ~8 ms in the scroll element's size, of a ~40 ms task).
 * Here sizes come from ResizeObservers, which report after the frame's own layout; until the
 * first report, the window's size stands for the scroll element's and the estimate (or the last
 * size known) for a row's. Rows must then be laid out in the normal flow between two spacers, not
 * placed at their estimated offsets, so that a row measured late is still drawn where it belongs.
 */
export const sizesAfterLayout = <S extends Element, I extends Element>(): Pick<
  VirtualizerOptions<S, I>,
  'initialRect' | 'observeElementRect' | 'measureElement'
> => ({
  initialRect: { width: window.innerWidth, height: window.innerHeight },
  observeElementRect(v, cb) {
    const el = v.scrollElement;
    if (!el) return () => undefined;
    const observer = new ResizeObserver(([entry]) => {
      const box = entry?.contentBoxSize?.[0];
      if (box) cb({ width: Math.round(box.inlineSize), height: Math.round(box.blockSize) });
    });
    observer.observe(el);
    return () => observer.disconnect();
  },
  measureElement(el, entry, v) {
    const box = entry?.borderBoxSize?.[0];
    if (box) return Math.round(box.blockSize);
    const index = v.indexFromElement(el);
    return v.itemSizeCache.get(v.options.getItemKey(index)) ?? v.options.estimateSize(index);
  },
});

/** The rows to draw, with the heights of the spacers above and below them in the flow. */
export function flowRows<S extends Element, I extends Element>(v: Virtualizer<S, I>) {
  const items = v.getVirtualItems();
  const before = items[0]?.start ?? 0;
  const after = items.length ? v.getTotalSize() - items[items.length - 1]!.end : 0;
  return { items, before, after };
}
