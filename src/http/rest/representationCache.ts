/**
 * Serialized order representations by (order, revision, version, media type, path):
 * a revision names one immutable state, so its bytes and ETag never change and a GET
 * needs only the revision (one indexed column) to answer 200 from here or 304.
 *
 * Bounded by lru-cache in entries and in bytes (every in-process cache has a bound),
 * least recently used first; the caller says what an entry weighs.
 */
import { LRUCache } from 'lru-cache';

export const REPRESENTATION_CACHE_ENTRIES = 10_000;

/** JSON text of bodies the writer can send as is (set for cached representations). */
export const serialized = new WeakMap<object, string>();

/** Bytes the cached representations may hold at most (as the caller's `weigh` counts them). */
export const REPRESENTATION_CACHE_MAX_BYTES = 64 * 1024 * 1024;

export class RepresentationCache<V extends NonNullable<unknown>> {
  private readonly lru: LRUCache<string, V>;

  constructor(max = REPRESENTATION_CACHE_ENTRIES, weigh: (value: V, key: string) => number = (_v, key) => 64 + 2 * key.length, maxBytes = REPRESENTATION_CACHE_MAX_BYTES) {
    this.lru = new LRUCache<string, V>({ max, maxSize: maxBytes, sizeCalculation: (v, k) => Math.max(1, Math.ceil(weigh(v, k))) });
  }

  get(key: string): V | undefined {
    return this.lru.get(key);
  }

  set(key: string, value: V): void {
    this.lru.set(key, value);
  }

  get size(): number {
    return this.lru.size;
  }

  /** Bytes held, as `weigh` counts them. */
  get bytes(): number {
    return this.lru.calculatedSize;
  }
}
