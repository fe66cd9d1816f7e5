/**
 * A map that forgets its oldest key once it holds `max` (caches and the OTLP receiver's keys, which
 * may live for weeks). The oldest key is kept in a ring beside the map rather than found with
 * `keys().next()`: in the OTLP token bookkeeping (20,000 spans a run) that lookup, once every
 * insert evicted, took 6.7 of the 8.5 s spent in inferenceItems of a single-thread profile of the
 * decode thread's work, ~12% of that thread. Most likely V8 keeps deleted entries in the table
 * until it rebuilds it, and the iterator steps over them from the start.
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
