/**
 * Serialized order representations by (order, revision, version, media type, path):
 * a revision names one immutable state, so its bytes and ETag never change and a GET
 * needs only the revision (one indexed column) to answer 200 from here or 304.
 *
 * A bounded Map used as an LRU (insertion order; a hit moves the entry to the end):
 * lru-cache would do the same, but the version in this tree is the v5 a dependency
 * pulls in, without types; the whole need is twenty lines.
 */
export const REPRESENTATION_CACHE_ENTRIES = 10_000;

/** JSON text of bodies the writer can send as is (set for cached representations). */
export const serialized = new WeakMap<object, string>();

export class RepresentationCache<V> {
  private readonly entries = new Map<string, V>();

  constructor(private readonly max = REPRESENTATION_CACHE_ENTRIES) {}

  get(key: string): V | undefined {
    const v = this.entries.get(key);
    if (v !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, v);
    }
    return v;
  }

  set(key: string, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
  }

  get size(): number {
    return this.entries.size;
  }
}
