import type { Change } from './types';

/** Array items that carry one of these keys (unique within both arrays) are matched by it, not by index. */
const ID_KEYS = ['call_id', 'path', 'seq'] as const;

const SIMPLE_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function keyPath(base: string, key: string): string {
  if (SIMPLE_KEY.test(key)) return base ? `${base}.${key}` : key;
  return `${base}[${JSON.stringify(key)}]`;
}

function idKeyOf(a: readonly unknown[], b: readonly unknown[]): string | null {
  for (const k of ID_KEYS) {
    const seen = [new Set<unknown>(), new Set<unknown>()];
    let ok = true;
    for (const [side, arr] of [a, b].entries()) {
      for (const x of arr) {
        const v = isPlainObject(x) ? x[k] : undefined;
        if ((typeof v !== 'string' && typeof v !== 'number') || seen[side]!.has(v)) {
          ok = false;
          break;
        }
        seen[side]!.add(v);
      }
      if (!ok) break;
    }
    if (ok) return k;
  }
  return null;
}

function idSegment(k: string, v: unknown): string {
  const shown =
    typeof v === 'number' || (typeof v === 'string' && /^[\w.:/@#-]+$/.test(v))
      ? String(v)
      : JSON.stringify(v);
  return `[${k}=${shown}]`;
}

class Collector {
  readonly out: Change[] = [];
  truncated = 0;
  constructor(private readonly max: number) {}
  add(c: Change): void {
    if (this.out.length < this.max) this.out.push(c);
    else this.truncated += 1;
  }
}

function walk(a: unknown, b: unknown, path: string, c: Collector): void {
  if (a === b) return;
  if (Array.isArray(a) && Array.isArray(b)) {
    const id = a.length + b.length > 0 ? idKeyOf(a, b) : null;
    if (id) {
      const byId = new Map<unknown, unknown>();
      for (const x of b) byId.set((x as Record<string, unknown>)[id], x);
      const inA = new Set<unknown>();
      for (const x of a) {
        const v = (x as Record<string, unknown>)[id];
        inA.add(v);
        const p = `${path}${idSegment(id, v)}`;
        if (byId.has(v)) walk(x, byId.get(v), p, c);
        else c.add({ path: p, old: x });
      }
      for (const x of b) {
        const v = (x as Record<string, unknown>)[id];
        if (!inA.has(v)) c.add({ path: `${path}${idSegment(id, v)}`, new: x });
      }
      return;
    }
    const n = Math.max(a.length, b.length);
    for (let i = 0; i < n; i++) {
      const p = `${path}[${i}]`;
      if (i >= a.length) c.add({ path: p, new: b[i] });
      else if (i >= b.length) c.add({ path: p, old: a[i] });
      else walk(a[i], b[i], p, c);
    }
    return;
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    for (const k of Object.keys(a)) {
      const p = keyPath(path, k);
      if (!Object.prototype.hasOwnProperty.call(b, k)) c.add({ path: p, old: a[k] });
      else walk(a[k], b[k], p, c);
    }
    for (const k of Object.keys(b)) {
      if (!Object.prototype.hasOwnProperty.call(a, k)) c.add({ path: keyPath(path, k), new: b[k] });
    }
    return;
  }
  // Different primitives, or different types: one change at this path. (NaN never occurs in JSON state.)
  c.add({ path: path || '(root)', old: a, new: b });
}

/**
 * What changed from `before` to `after`, as paths with old and new values. A path that only exists
 * after has no `old`; one that only existed before has no `new`. Items of arrays that carry a unique
 * `call_id`, `path` or `seq` are matched by it (`calls.items[call_id=c7].status`), so an item falling
 * out of a capped window shows as one removal rather than every index shifting. Subtrees shared by
 * both states (evolve shares what it did not change) are skipped at once.
 */
export function changes(before: unknown, after: unknown, opts: { max?: number } = {}): Change[] {
  return changesCapped(before, after, opts).changes;
}

/** `changes`, with how many were left off beyond `max`. */
export function changesCapped(
  before: unknown,
  after: unknown,
  opts: { max?: number } = {},
): { changes: Change[]; truncated: number } {
  const c = new Collector(opts.max ?? Number.POSITIVE_INFINITY);
  walk(before, after, '', c);
  return { changes: c.out, truncated: c.truncated };
}
