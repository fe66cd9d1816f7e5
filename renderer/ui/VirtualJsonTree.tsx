import { memo, useCallback, useMemo, useRef, useState } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import { flowRows, sizesAfterLayout } from './virtual';
import {
  childPath,
  MAX_CHILDREN,
  RedactedText,
  redactedObject,
  Scalar,
  type Marks,
  type RedactedObject,
} from './JsonTree';

/** Pixel height of one unwrapped line (font-size 12px × line-height 1.5). */
const LINE_HEIGHT = 18;

type Name = string | number | null;

/** One line of the tree as shown: a value, an opening line of an object or array, its end, or "show more". */
export type Line =
  | { t: 'leaf'; key: string; path: string; depth: number; name: Name; value: unknown; cls: string }
  | {
      t: 'redacted';
      key: string;
      path: string;
      depth: number;
      name: Name;
      cls: string;
      red: RedactedObject;
    }
  | {
      t: 'head';
      key: string;
      path: string;
      depth: number;
      name: Name;
      cls: string;
      open: boolean;
      array: boolean;
      count: number;
    }
  | { t: 'end'; key: string; depth: number; array: boolean }
  | { t: 'more'; key: string; owner: string; depth: number; next: number; rest: number };

/**
 * The lines of the tree's open part, in order: what the nested tree would draw, one line each.
 * Open = toggled by the person, else above `openDepth` or holding a change (`marks.within`).
 * Toggles and "show more" are keyed by line key, so they survive the steps that close a branch.
 */
export function flattenJson(
  value: unknown,
  openDepth: number,
  marks: Marks | undefined,
  toggled: ReadonlyMap<string, boolean>,
  limits: ReadonlyMap<string, number>,
): Line[] {
  const out: Line[] = [];
  const walk = (name: Name, v: unknown, path: string, key: string, depth: number): void => {
    const changed = marks?.exact.has(path) ?? false;
    const inside = marks?.within.has(path) ?? false;
    const cls = `j-node j-line${changed ? ' j-changed' : ''}${inside ? ' j-within' : ''}`;
    if (v === null || typeof v !== 'object') {
      out.push({ t: 'leaf', key, path, depth, name, value: v, cls });
      return;
    }
    const red = redactedObject(v);
    if (red) {
      out.push({ t: 'redacted', key, path, depth, name, cls, red });
      return;
    }
    const array = Array.isArray(v);
    const entries: [string | number, unknown][] = array
      ? (v as unknown[]).map((x, i) => [i, x])
      : Object.entries(v as Record<string, unknown>);
    const open = toggled.get(key) ?? (depth < openDepth || inside);
    out.push({ t: 'head', key, path, depth, name, cls, open, array, count: entries.length });
    if (!open) return;
    const limit = limits.get(key) ?? MAX_CHILDREN;
    const shown = entries.length > limit ? entries.slice(0, limit) : entries;
    const paths = shown.map(([k, x]) => childPath(path, k, v, x));
    // Items of a list are keyed by their id path (so a sliding list keeps its lines), unless ids repeat.
    const unique = !array || new Set(paths).size === paths.length;
    shown.forEach(([k, x], i) => walk(k, x, paths[i]!, unique ? paths[i]! : `${key}[#${k}]`, depth + 1));
    if (entries.length > limit)
      out.push({
        t: 'more',
        key: `${key}\u0000more`,
        owner: key,
        depth: depth + 1,
        next: limit + MAX_CHILDREN,
        rest: entries.length - limit,
      });
    out.push({ t: 'end', key: `${key}\u0000end`, depth, array });
  };
  walk(null, value, '', '', 0);
  return out;
}

function Label({ name }: { name: Name }) {
  if (name === null) return null;
  return (
    <>
      <span className={typeof name === 'number' ? 'j-index' : 'j-key'}>{name}</span>
      <span className="j-colon">: </span>
    </>
  );
}

interface LineProps {
  line: Line;
  index: number;
  measure: (el: HTMLElement | null) => void;
  onToggle: (key: string, open: boolean) => void;
  onMore: (key: string, next: number) => void;
}

const LineView = memo(
  function LineView({ line, index, measure, onToggle, onMore }: LineProps) {
    const style = { '--d': line.depth } as React.CSSProperties;
    switch (line.t) {
      case 'leaf':
        return (
          <div ref={measure} data-index={index} className={line.cls} data-path={line.path} style={style}>
            <Label name={line.name} />
            <Scalar value={line.value} />
          </div>
        );
      case 'redacted':
        return (
          <div ref={measure} data-index={index} className={line.cls} data-path={line.path} style={style}>
            <Label name={line.name} />
            <RedactedText red={line.red} />
          </div>
        );
      case 'head': {
        const [o, c] = line.array ? ['[', ']'] : ['{', '}'];
        return (
          <div ref={measure} data-index={index} className={line.cls} data-path={line.path} style={style}>
            <button
              type="button"
              className="j-toggle"
              onClick={() => onToggle(line.key, !line.open)}
              aria-expanded={line.open}
            >
              <span className="j-caret">{line.open ? '▾' : '▸'}</span>
              <Label name={line.name} />
              <span className="j-brace">{o}</span>
              {!line.open && (
                <span className="j-summary">
                  {line.count === 0 ? '' : line.array ? `${line.count} items` : `${line.count} keys`}
                </span>
              )}
              {!line.open && <span className="j-brace">{c}</span>}
            </button>
          </div>
        );
      }
      case 'end':
        return (
          <div ref={measure} data-index={index} className="j-line" style={style}>
            <span className="j-brace">{line.array ? ']' : '}'}</span>
          </div>
        );
      case 'more':
        return (
          <div ref={measure} data-index={index} className="j-line" style={style}>
            <button type="button" className="j-more" onClick={() => onMore(line.owner, line.next)}>
              show {Math.min(MAX_CHILDREN, line.rest)} more of {line.rest}
            </button>
          </div>
        );
    }
  },
  // Lines are rebuilt on every step; one that reads the same (values keep their identity between
  // steps, see shareEqual) keeps its DOM untouched.
  (a, b) =>
    a.index === b.index &&
    a.measure === b.measure &&
    a.onToggle === b.onToggle &&
    a.onMore === b.onMore &&
    sameLine(a.line, b.line),
);

function sameLine(a: Line, b: Line): boolean {
  if (a === b) return true;
  if (a.t !== b.t || a.key !== b.key || a.depth !== b.depth) return false;
  switch (a.t) {
    case 'leaf': {
      const o = b as typeof a;
      return a.cls === o.cls && a.name === o.name && Object.is(a.value, o.value) && a.path === o.path;
    }
    case 'redacted': {
      const o = b as typeof a;
      return (
        a.cls === o.cls &&
        a.name === o.name &&
        a.path === o.path &&
        a.red.rule === o.red.rule &&
        a.red.length === o.red.length &&
        a.red.sha256 === o.red.sha256
      );
    }
    case 'head': {
      const o = b as typeof a;
      return (
        a.cls === o.cls &&
        a.name === o.name &&
        a.path === o.path &&
        a.open === o.open &&
        a.array === o.array &&
        a.count === o.count
      );
    }
    case 'end':
      return a.array === (b as typeof a).array;
    case 'more': {
      const o = b as typeof a;
      return a.owner === o.owner && a.next === o.next && a.rest === o.rest;
    }
  }
}

/**
 * A collapsible JSON tree that scrolls by itself and keeps only the lines in view (and a margin)
 * in the DOM: a step that opens or closes a big branch off screen costs no DOM, style or layout.
 * Same look, marks and toggles as JsonTree; long strings still wrap (lines are measured).
 */
export function VirtualJsonTree({
  value,
  openDepth = 2,
  marks,
  testId,
  className = '',
}: {
  value: unknown;
  openDepth?: number;
  marks?: Marks;
  testId?: string;
  className?: string;
}) {
  const [toggled, setToggled] = useState<ReadonlyMap<string, boolean>>(() => new Map());
  const [limits, setLimits] = useState<ReadonlyMap<string, number>>(() => new Map());
  const lines = useMemo(
    () => flattenJson(value, openDepth, marks, toggled, limits),
    [value, openDepth, marks, toggled, limits],
  );
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: lines.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => LINE_HEIGHT,
    getItemKey: (i) => lines[i]!.key,
    overscan: 12,
    ...sizesAfterLayout<HTMLDivElement, Element>(),
  });
  const onToggle = useCallback(
    (key: string, open: boolean) => setToggled((m) => new Map(m).set(key, open)),
    [],
  );
  const onMore = useCallback((key: string, next: number) => setLimits((m) => new Map(m).set(key, next)), []);
  const { items, before, after } = flowRows(virtualizer);
  return (
    <div
      ref={scrollRef}
      className={`json-tree vtree mono ${className}`}
      data-testid={testId}
      data-lines={lines.length}
    >
      <div style={{ height: before }} />
      {items.map((item) => (
        <LineView
          key={item.key}
          index={item.index}
          line={lines[item.index]!}
          measure={virtualizer.measureElement}
          onToggle={onToggle}
          onMore={onMore}
        />
      ))}
      <div style={{ height: after }} />
    </div>
  );
}
