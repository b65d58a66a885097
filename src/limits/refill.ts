/**
 * The bucket arithmetic, in whole milli-tokens so every adapter computes exactly the
 * same numbers: the Redis adapter runs the same steps in Lua (redisBuckets.ts), where
 * numbers are doubles and are stored as text, and integers below 2^53 survive both.
 * A rate of r tokens per second is r milli-tokens per millisecond.
 */
import type { BucketPolicy, TakeResult } from './buckets';

export const MILLI = 1000;

export interface BucketState {
  /** Milli-tokens held at `at`. */
  milli: number;
  /** Milliseconds (the adapter's clock). */
  at: number;
}

/** A bucket never seen (or forgotten because it was full): `capacity` tokens. */
export const fullBucket = ({ capacity }: BucketPolicy, now: number): BucketState => ({ milli: capacity * MILLI, at: now });

/**
 * One take of `cost` tokens at `now`: refills `state`, charges it when the take fits,
 * and updates it in place (the caller's stored bucket: no new state object per take).
 */
export function takeFrom(state: BucketState, now: number, cost: number, { capacity, ratePerSec }: BucketPolicy): TakeResult {
  const cap = capacity * MILLI;
  let milli = Math.min(cap, state.milli + Math.max(0, now - state.at) * ratePerSec);
  const need = cost * MILLI;
  const admitted = need <= milli;
  if (admitted) milli -= need;
  state.milli = milli;
  state.at = now;
  return {
    admitted,
    remaining: Math.floor(milli / MILLI),
    retryAfterMs: admitted ? 0 : Math.ceil((need - milli) / ratePerSec),
    fullInMs: Math.ceil((cap - milli) / ratePerSec),
  };
}
