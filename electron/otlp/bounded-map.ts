/**
 * A map that forgets its oldest key once it holds `max` (a receiver may run for weeks). The oldest
 * key is kept in a ring beside the map, not found by iterating the map from its start: V8 leaves a
 * deleted entry in its table until the table is rebuilt, so with every eviction at the head,
 * `keys().next()` stepped over thousands of them each time. Profiled on the decode thread's work
 * (bench requests, one conversation): that lookup in the token bookkeeping was 6.7 s of the 8.5 s
 * spent in inferenceItems, ~12% of the thread.
 *
 * Keys leave only by eviction or clear(), so the ring and the map hold the same keys.
 */
export class BoundedMap<K, V> {
  private readonly map = new Map<K, V>();
  /** Keys in order of first insertion, the oldest at `next` once the ring is full. */
  private readonly ring: K[] = [];
  private next = 0;

  constructor(
    private readonly max: number,
    /** Told of each key forgotten, with its value. */
    private readonly evicted?: (key: K, value: V) => void,
  ) {}

  get size(): number {
    return this.map.size;
  }

  get(key: K): V | undefined {
    return this.map.get(key);
  }

  has(key: K): boolean {
    return this.map.has(key);
  }

  set(key: K, value: V): this {
    if (!this.map.has(key)) {
      if (this.ring.length < this.max) this.ring.push(key);
      else {
        const old = this.ring[this.next]!;
        const v = this.map.get(old) as V;
        this.map.delete(old);
        this.evicted?.(old, v);
        this.ring[this.next] = key;
        this.next = (this.next + 1) % this.max;
      }
    }
    this.map.set(key, value);
    return this;
  }

  clear(): void {
    this.map.clear();
    this.ring.length = 0;
    this.next = 0;
  }
}
