/**
 * Per-account REST rate limit (DESIGN.md "Limits"; spec 8.3 leaves the numbers open): a
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
import { hasSyncBuckets } from '../limits';
import { refusal, type Refusal } from './problem';

export const RATE_LIMIT_POLICY_NAME = 'rest';

export interface RateLimitOptions {
  buckets: Buckets;
  rps: number;
  burst: number;
}

/** One request's verdict: the fields every limited response carries, and whether it may run. */
export interface RateLimitDecision {
  admitted: boolean;
  /** `RateLimit-Policy` and `RateLimit` (and `Retry-After` when refused). */
  headers: Record<string, string>;
  /** When refused: the 429 problem's detail. */
  detail?: string;
}

const policyField = (policy: BucketPolicy, name: string): string => `"${name}";q=${policy.capacity};w=${Math.max(1, Math.ceil(policy.capacity / policy.ratePerSec))}`;

/** The `RateLimit` value: r units remaining, t seconds until the quota is whole again. */
const limitField = (name: string, r: TakeResult): string => `"${name}";r=${r.remaining};t=${Math.ceil(r.fullInMs / 1000)}`;

function fieldsFor(policyValue: string, r: TakeResult, name: string): Record<string, string> {
  const headers: Record<string, string> = { 'RateLimit-Policy': policyValue, RateLimit: limitField(name, r) };
  if (!r.admitted) headers['Retry-After'] = String(Math.max(1, Math.ceil(r.retryAfterMs / 1000)));
  return headers;
}

/**
 * `take(accountId)` spends one token of the account's bucket and
 * returns the decision with its header values, synchronously when the buckets are in
 * this process (no promise on the hot path), else as a promise (Redis).
 */
export function rateLimiter({ buckets, rps, burst }: RateLimitOptions) {
  const policy: BucketPolicy = { capacity: burst, ratePerSec: rps };
  const policyValue = policyField(policy, RATE_LIMIT_POLICY_NAME); // the same for every response: built once
  const decide = (taken: TakeResult): RateLimitDecision => {
    const headers = fieldsFor(policyValue, taken, RATE_LIMIT_POLICY_NAME);
    if (taken.admitted) return { admitted: true, headers };
    return { admitted: false, headers, detail: `More than ${burst} requests in a burst or ${rps} per second: retry after ${headers['Retry-After']} s` };
  };
  /** One token of the account's bucket: synchronous when the buckets are in this process. */
  const spend = (accountId: number): TakeResult | Promise<TakeResult> => {
    const key = `rest:${accountId}`;
    return hasSyncBuckets(buckets) ? buckets.takeNow(key, 1, policy) : buckets.take(key, 1, policy);
  };
  return {
    policy,
    take(accountId: number): RateLimitDecision | Promise<RateLimitDecision> {
      const taken = spend(accountId);
      return taken instanceof Promise ? taken.then(decide) : decide(taken);
    },
    /**
     * The same take as the pipeline spends it: the bare result, whose two fields
     * `pushFields` appends to the response's field list, with no header object or decision
     * built for an admitted request (a cached GET costs ~20 µs, so every allocation shows).
     */
    spend,
    /** `RateLimit-Policy` and `RateLimit` of an admitted take, as name/value pairs (the values `take` gives). */
    pushFields(fields: string[], taken: TakeResult): void {
      fields.push('RateLimit-Policy', policyValue, 'RateLimit', limitField(RATE_LIMIT_POLICY_NAME, taken));
    },
    /** The 429 of a refused take: RATE_LIMITED with both fields and Retry-After. */
    refusal(taken: TakeResult): Refusal {
      const d = decide(taken);
      return refusal('RATE_LIMITED', d.detail, d.headers);
    },
  };
}

export type RateLimiter = ReturnType<typeof rateLimiter>;
