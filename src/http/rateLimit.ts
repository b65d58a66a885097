/**
 * Per-account REST rate limit (off by default, shared in Redis when scaled out; the numbers are settings): a
 * token bucket per account, `RATE_LIMIT_BURST` tokens, `RATE_LIMIT_RPS` restored per
 * second, one token per request. Runs right after authentication, before any parsing.
 *
 * Every limited response carries the IETF fields of draft-ietf-httpapi-ratelimit-headers
 * (RateLimit-Policy: the fixed quota q over window w seconds, the time a burst takes to
 * come back; RateLimit: r units remaining, t seconds until the quota is whole again).
 * Over the limit: 429 problem+json `RATE_LIMITED` with `Retry-After` (seconds until one
 * token is back; RFC 9110 10.2.3), and nothing else runs.
 */
import type { BucketPolicy, Buckets, TakeResult } from '../limits';
import { hasSyncBuckets, retryAfterSeconds } from '../limits';
import { refusal, type Refusal } from './problem';

export const RATE_LIMIT_POLICY_NAME = 'rest';

export interface RateLimitOptions {
  buckets: Buckets;
  rps: number;
  burst: number;
}

const policyField = (policy: BucketPolicy, name: string): string => `"${name}";q=${policy.capacity};w=${Math.max(1, Math.ceil(policy.capacity / policy.ratePerSec))}`;

/** The `RateLimit` value: r units remaining, t seconds until the quota is whole again. */
const limitField = (name: string, r: TakeResult): string => `"${name}";r=${r.remaining};t=${Math.ceil(r.fullInMs / 1000)}`;

/**
 * The limit's steps, each one function: `spendNow` (when the buckets are in this process:
 * no promise on the hot path) or `spend` takes one token of the account's bucket;
 * `pushFields` appends an admitted take's two fields to the response's field list (no
 * header object built per request: a cached GET costs ~20 µs, so every allocation shows);
 * `refusal` is a refused take's 429.
 */
export function rateLimiter({ buckets, rps, burst }: RateLimitOptions) {
  const policy: BucketPolicy = { capacity: burst, ratePerSec: rps };
  const policyValue = policyField(policy, RATE_LIMIT_POLICY_NAME); // the same for every response: built once
  const keyOf = (accountId: number) => `rest:${accountId}`;
  return {
    policy,
    /** One token, synchronously: present only when the buckets are in this process (SyncBuckets). */
    spendNow: hasSyncBuckets(buckets) ? (accountId: number): TakeResult => buckets.takeNow(keyOf(accountId), 1, policy) : undefined,
    /** One token, from any buckets (Redis when scaled out). */
    spend: (accountId: number): Promise<TakeResult> => buckets.take(keyOf(accountId), 1, policy),
    /** `RateLimit-Policy` and `RateLimit` of an admitted take, as name/value pairs. */
    pushFields(fields: string[], taken: TakeResult): void {
      fields.push('RateLimit-Policy', policyValue, 'RateLimit', limitField(RATE_LIMIT_POLICY_NAME, taken));
    },
    /** The 429 of a refused take: RATE_LIMITED with both fields and Retry-After (seconds until one token is back). */
    refusal(taken: TakeResult): Refusal {
      const retryAfter = String(retryAfterSeconds(taken.retryAfterMs));
      return refusal('RATE_LIMITED', `More than ${burst} requests in a burst or ${rps} per second: retry after ${retryAfter} s`, {
        'RateLimit-Policy': policyValue,
        RateLimit: limitField(RATE_LIMIT_POLICY_NAME, taken),
        'Retry-After': retryAfter,
      });
    },
  };
}

export type RateLimiter = ReturnType<typeof rateLimiter>;
