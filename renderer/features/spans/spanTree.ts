/**
 * A run's spans as a tree: nested by parent span id, siblings by start time, flattened into the
 * rows the waterfall draws (each with its depth), with times relative to the earliest span. Pure
 * (no DOM, no API): unit-tested in Node.
 *
 * Iterative, never recursive: a trace is input, and a chain of 100,000 spans each the parent of the
 * next must not overflow the stack. A span whose parent has not arrived (or never will: another
 * process's, or a parent id that names itself or a loop) is drawn as a root, marked `orphan`.
 */

export interface SpanIn {
  seq: number;
  span_id: string;
  parent_span_id: string | null;
  trace_id: string | null;
  name: string;
  start_ns: string;
  end_ns: string;
  status: number;
  kind: string;
}

export interface SpanRow {
  span: SpanIn;
  depth: number;
  /** Milliseconds from the earliest span's start to this one's start, and its duration. */
  offset_ms: number;
  duration_ms: number;
  /** Its parent was named but is not among the spans received (yet). */
  orphan: boolean;
  children: number;
}

export interface SpanTree {
  rows: SpanRow[];
  /** From the earliest start to the latest end, in milliseconds. */
  total_ms: number;
}

const DIGITS = /^\d{1,20}$/;

/**
 * Nanoseconds (a decimal string) as milliseconds since the epoch; null when it is no time (0,
 * empty, not digits). A double holds today's milliseconds to ~0.25 µs, which is finer than the
 * waterfall draws; BigInt arithmetic measured ~10× slower on 100,000 spans.
 */
function msOf(v: string): number | null {
  if (!DIGITS.test(v)) return null;
  const whole = v.length > 6 ? Number(v.slice(0, -6)) : 0;
  const ms = whole + Number(v.length > 6 ? v.slice(-6) : v) / 1e6;
  return ms > 0 ? ms : null;
}

/** Rounded to the microsecond: what the waterfall and its labels show. */
const us = (d: number): number => Math.round(d * 1000) / 1000;

export function buildSpanTree(spans: readonly SpanIn[]): SpanTree {
  const byId = new Map<string, number>();
  spans.forEach((s, i) => {
    if (!byId.has(s.span_id)) byId.set(s.span_id, i);
  });
  const starts = spans.map((s) => msOf(s.start_ns));
  const ends = spans.map((s, i) => msOf(s.end_ns) ?? starts[i]!);
  let min: number | null = null;
  let max: number | null = null;
  for (let i = 0; i < spans.length; i++) {
    const a = starts[i] ?? null;
    const b = ends[i] ?? null;
    if (a !== null && (min === null || a < min)) min = a;
    if (b !== null && (max === null || b > max)) max = b;
  }
  const children: number[][] = spans.map(() => []);
  const roots: number[] = [];
  const orphan = new Array<boolean>(spans.length).fill(false);
  spans.forEach((s, i) => {
    const p = s.parent_span_id === null ? undefined : byId.get(s.parent_span_id);
    if (p === undefined || p === i) {
      orphan[i] = s.parent_span_id !== null;
      roots.push(i);
    } else children[p]!.push(i);
  });
  const byStart = (a: number, b: number): number => {
    const x = starts[a] ?? null;
    const y = starts[b] ?? null;
    if (x === null || y === null || x === y) return spans[a]!.seq - spans[b]!.seq;
    return x - y;
  };
  roots.sort(byStart);
  for (const c of children) if (c.length > 1) c.sort(byStart);

  const rows: SpanRow[] = [];
  const seen = new Array<boolean>(spans.length).fill(false);
  const walk = (root: number, isOrphan: boolean): void => {
    // Depth-first with an explicit stack: children pushed in reverse so they pop in start order.
    const stack: [number, number][] = [[root, 0]];
    while (stack.length > 0) {
      const [i, depth] = stack.pop()!;
      if (seen[i]) continue;
      seen[i] = true;
      const s = spans[i]!;
      const a = starts[i] ?? null;
      const b = ends[i] ?? null;
      rows.push({
        span: s,
        depth,
        offset_ms: a !== null && min !== null ? us(a - min) : 0,
        duration_ms: a !== null && b !== null && b > a ? us(b - a) : 0,
        orphan: i === root ? isOrphan : false,
        children: children[i]!.length,
      });
      const c = children[i]!;
      for (let k = c.length - 1; k >= 0; k--) stack.push([c[k]!, depth + 1]);
    }
  };
  for (const r of roots) walk(r, orphan[r]!);
  // Spans in a loop of parents (a → b → a) reach no root: each loop is drawn from its first span.
  for (let i = 0; i < spans.length; i++) if (!seen[i]) walk(i, true);
  return { rows, total_ms: min !== null && max !== null && max > min ? us(max - min) : 0 };
}

/** A duration as a person reads it: 850 µs, 12.3 ms, 4.56 s, 2 min 5 s. */
export function formatMs(v: number): string {
  if (v < 1) return `${Math.round(v * 1000)} µs`;
  if (v < 100) return `${v.toFixed(1)} ms`;
  if (v < 1000) return `${Math.round(v)} ms`;
  if (v < 60_000) return `${(v / 1000).toFixed(2)} s`;
  const m = Math.floor(v / 60_000);
  return `${m} min ${Math.round((v - m * 60_000) / 1000)} s`;
}
