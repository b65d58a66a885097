/**
 * The Buckets port: per-key token buckets, the one mechanism behind the REST rate limit
 * (a request costs 1) and the GraphQL cost budget (a query costs its computed cost;
 * Shopify's "leaky bucket" is this same bucket seen from the other side). Adapters:
 * `MemoryBuckets` (one process, the embedded default) and `RedisBuckets` (shared by
 * every instance), proven by the one suite in `buckets.contract.ts`. The synchronous
 * take (`SyncBuckets`) is a port of its own, which only `MemoryBuckets` implements.
 *
 * Contract of `take`:
 * - atomic: of concurrent takes on one key, no two spend the same tokens, on any
 *   number of instances sharing the adapter's backing store;
 * - a bucket never seen (or idle long enough to be full) holds `capacity` tokens; it
 *   refills at `ratePerSec` continuously, never above `capacity`;
 * - a take that fits is charged and admitted; one that does not fit is refused and
 *   charges nothing (the bucket never goes below zero);
 * - `policy` values are positive integers and `cost` is an integer from 0 to capacity
 *   (callers check their configuration: a cost above capacity could never be admitted).
 */
export interface BucketPolicy {
  /** Tokens a full bucket holds (the burst). */
  capacity: number;
  /** Tokens restored per second. */
  ratePerSec: number;
}

export interface TakeResult {
  admitted: boolean;
  /** Tokens left after this take (whole tokens, rounded down). */
  remaining: number;
  /** When refused: milliseconds until `cost` tokens are there; 0 when admitted. */
  retryAfterMs: number;
  /** Milliseconds until the bucket is full again. */
  fullInMs: number;
}

/** A `Retry-After` in whole seconds for a wait of `ms`: rounded up, and at least 1 (0 would invite an immediate retry). */
export const retryAfterSeconds = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));

export interface Buckets {
  take(key: string, cost: number, policy: BucketPolicy): Promise<TakeResult>;
}

/**
 * The same take without a promise, by an adapter that needs no I/O (MemoryBuckets).
 * Why it exists: with in-process buckets the rate-limit step of every REST request takes
 * no promise. The GraphQL cost budget charges through it too. Callers
 * test for it with `hasSyncBuckets` and otherwise await `take`; it obeys the contract
 * of `take` above, and shares its buckets (a key spent by one is spent for the other).
 * Proven by `syncBuckets.contract.ts`.
 */
export interface SyncBuckets {
  takeNow(key: string, cost: number, policy: BucketPolicy): TakeResult;
}

/** True when the buckets offer the synchronous take. */
export function hasSyncBuckets<B extends object>(buckets: B): buckets is B & SyncBuckets {
  return typeof (buckets as Partial<SyncBuckets>).takeNow === 'function';
}
