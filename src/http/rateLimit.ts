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
import type { Middleware } from 'koa';
import type { BucketPolicy, Buckets, TakeResult } from '../limits';
import { httpProblem } from './problem';

export const RATE_LIMIT_POLICY_NAME = 'rest';

export interface RateLimitOptions {
  buckets: Buckets;
  rps: number;
  burst: number;
}

/** Structured-field values of the two IETF fields (and Retry-After when refused) for one take. */
export function rateLimitHeaders(policy: BucketPolicy, r: TakeResult, name = RATE_LIMIT_POLICY_NAME): Record<string, string> {
  const headers: Record<string, string> = {
    'RateLimit-Policy': `"${name}";q=${policy.capacity};w=${Math.max(1, Math.ceil(policy.capacity / policy.ratePerSec))}`,
    RateLimit: `"${name}";r=${r.remaining};t=${Math.ceil(r.fullInMs / 1000)}`,
  };
  if (!r.admitted) headers['Retry-After'] = String(Math.max(1, Math.ceil(r.retryAfterMs / 1000)));
  return headers;
}

/**
 * The Koa-free core: spends one token of the account's bucket and says whether the
 * request is admitted, with the fields to send either way (the middleware below, and the
 * edge's order read, http/rest/edgeRead.ts).
 */
export function rateLimitTaker({ buckets, rps, burst }: RateLimitOptions): (accountId: number) => Promise<{ admitted: boolean; headers: Record<string, string> }> {
  const policy: BucketPolicy = { capacity: burst, ratePerSec: rps };
  return async (accountId) => {
    const taken = await buckets.take(`rest:${accountId}`, 1, policy);
    return { admitted: taken.admitted, headers: rateLimitHeaders(policy, taken) };
  };
}

export function rateLimit(options: RateLimitOptions): Middleware {
  const { rps, burst } = options;
  const take = rateLimitTaker(options);
  return async function rateLimit(ctx, next) {
    const account = ctx.state.account;
    if (!account) return next(); // an operation without a token (health) is not an account's request
    const taken = await take(account.id);
    const headers = taken.headers;
    if (!taken.admitted) {
      throw httpProblem('RATE_LIMITED', `More than ${burst} requests in a burst or ${rps} per second: retry after ${headers['Retry-After']} s`, headers);
    }
    ctx.set(headers);
    await next();
  };
}
