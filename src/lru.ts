/**
 * A bounded map, least recently used evicted first, bounded in entries and in a weight
 * the caller defines (bytes of text). A Map keeps insertion order, so re-inserting on a
 * hit is the whole LRU. Ours rather than lru-cache: a dozen lines, no dependency.
 */
export class Lru<V> {
  private readonly entries = new Map<string, V>();
  private weight = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly maxWeight: number,
    private readonly weigh: (key: string, value: V) => number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: string): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: string, value: V): void {
    const old = this.entries.get(key);
    if (old !== undefined) {
      this.weight -= this.weigh(key, old);
      this.entries.delete(key);
    }
    this.entries.set(key, value);
    this.weight += this.weigh(key, value);
    for (const [oldest, oldValue] of this.entries) {
      if (this.entries.size <= this.maxEntries && this.weight <= this.maxWeight) break;
      this.entries.delete(oldest);
      this.weight -= this.weigh(oldest, oldValue);
    }
  }
}
