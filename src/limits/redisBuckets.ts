/**
 * Buckets shared by every instance (scaled out): one Redis hash per key, read, refilled,
 * charged and written by one Lua script, so two instances can never both spend the last
 * token (Redis runs a script alone). The clock is Redis's own `TIME` unless a clock is
 * injected (tests), so instances with skewed clocks still agree. Keys expire when their
 * bucket would be full again. The arithmetic is refill.ts's, step for step.
 *
 * A Redis outage is not the client's fault: a failed take is admitted (fail open) and
 * reported through `onError`, as the shared APQ registry does.
 */
import { createHash } from 'node:crypto';
import type { BucketPolicy, Buckets, TakeResult } from './buckets';
import { MILLI } from './refill';

/** The two commands used (ioredis satisfies it). */
export interface RedisScripting {
  evalsha(sha: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
}

// KEYS[1] bucket; ARGV: capacity (milli), rate (milli per ms), cost (milli), now (ms, or -1 for Redis TIME).
export const TAKE_SCRIPT = `
local cap = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local need = tonumber(ARGV[3])
local now = tonumber(ARGV[4])
if now < 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local v = redis.call('HMGET', KEYS[1], 'm', 'at')
local milli = cap
if v[1] then
  local elapsed = now - tonumber(v[2])
  if elapsed < 0 then elapsed = 0 end
  milli = math.min(cap, tonumber(v[1]) + elapsed * rate)
end
local admitted = 0
if need <= milli then
  milli = milli - need
  admitted = 1
end
local full = math.ceil((cap - milli) / rate)
if full > 0 then
  redis.call('HSET', KEYS[1], 'm', milli, 'at', now)
  redis.call('PEXPIRE', KEYS[1], full + 1000)
else
  redis.call('DEL', KEYS[1])
end
local retry = 0
if admitted == 0 then retry = math.ceil((need - milli) / rate) end
return { admitted, math.floor(milli / ${MILLI}), retry, full }
`;
const TAKE_SHA = createHash('sha1').update(TAKE_SCRIPT).digest('hex');

export interface RedisBucketsOptions {
  /** Namespace of every key (REDIS_PREFIX plus the bucket family, e.g. `rl:` or `gqlcost:`). */
  prefix: string;
  /** Milliseconds; default: Redis's clock. */
  now?: () => number;
  onError?: (err: unknown) => void;
}

export class RedisBuckets implements Buckets {
  constructor(
    private readonly redis: RedisScripting,
    private readonly opts: RedisBucketsOptions,
  ) {}

  async take(key: string, cost: number, policy: BucketPolicy): Promise<TakeResult> {
    const args = [policy.capacity * MILLI, policy.ratePerSec, cost * MILLI, this.opts.now ? this.opts.now() : -1];
    const k = `${this.opts.prefix}${key}`;
    let reply: unknown;
    try {
      try {
        reply = await this.redis.evalsha(TAKE_SHA, 1, k, ...args);
      } catch (err) {
        if (!String((err as Error).message).includes('NOSCRIPT')) throw err;
        reply = await this.redis.eval(TAKE_SCRIPT, 1, k, ...args);
      }
    } catch (err) {
      this.opts.onError?.(err);
      return { admitted: true, remaining: policy.capacity, retryAfterMs: 0, fullInMs: 0 };
    }
    const [admitted, remaining, retryAfterMs, fullInMs] = reply as number[];
    return { admitted: admitted === 1, remaining, retryAfterMs, fullInMs };
  }
}
