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

export function takeFrom(state: BucketState | undefined, now: number, cost: number, { capacity, ratePerSec }: BucketPolicy): { state: BucketState; result: TakeResult } {
  const cap = capacity * MILLI;
  const elapsed = state ? Math.max(0, now - state.at) : 0;
  let milli = state ? Math.min(cap, state.milli + elapsed * ratePerSec) : cap;
  const need = cost * MILLI;
  const admitted = need <= milli;
  if (admitted) milli -= need;
  return {
    state: { milli, at: now },
    result: {
      admitted,
      remaining: Math.floor(milli / MILLI),
      retryAfterMs: admitted ? 0 : Math.ceil((need - milli) / ratePerSec),
      fullInMs: Math.ceil((cap - milli) / ratePerSec),
    },
  };
}
