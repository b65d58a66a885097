/**
 * Buckets in this process (the embedded default). JavaScript runs one take at a time,
 * so a take is atomic by construction. Bounded by lru-cache: an entry lives until its
 * bucket would be full again (a full bucket and a missing one are the same), and at
 * most `maxKeys` buckets are kept; past that the least recently used is forgotten,
 * which only ever gives that key a full bucket back early.
 */
import { LRUCache } from 'lru-cache';
import type { BucketPolicy, Buckets, SyncBuckets, TakeResult } from './buckets';
import { fullBucket, takeFrom, type BucketState } from './refill';

export const MEMORY_BUCKETS_MAX_KEYS = 100_000;

export class MemoryBuckets implements Buckets, SyncBuckets {
  private readonly buckets: LRUCache<string, BucketState>;

  constructor(
    private readonly now: () => number = Date.now,
    maxKeys = MEMORY_BUCKETS_MAX_KEYS,
  ) {
    this.buckets = new LRUCache({ max: maxKeys });
  }

  async take(key: string, cost: number, policy: BucketPolicy): Promise<TakeResult> {
    return this.takeNow(key, cost, policy);
  }

  /** The same, synchronously (`SyncBuckets`): the rate-limit step takes no promise when the buckets are local. */
  takeNow(key: string, cost: number, policy: BucketPolicy): TakeResult {
    const now = this.now();
    const held = this.buckets.get(key); // a hit is now the most recently used
    const state = held ?? fullBucket(policy, now);
    const result = takeFrom(state, now, cost, policy); // updates `state` in place: a held bucket needs no set
    if (result.fullInMs === 0) {
      if (held) this.buckets.delete(key);
    } else if (!held) this.buckets.set(key, state);
    return result;
  }
}
