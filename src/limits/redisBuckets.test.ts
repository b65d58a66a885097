/** RedisBuckets against the real Redis (REDIS_TEST_URL, default the local one), each test under its own prefix. */
import { connectRedis } from '../bus';
import { runBucketsContract } from './buckets.contract';
import { hasSyncBuckets } from './buckets';
import { RedisBuckets, TAKE_SCRIPT } from './redisBuckets';

const URL = process.env.REDIS_TEST_URL || 'redis://127.0.0.1:6379';
const prefix = () => `orderline-test:${process.pid}:${Math.random().toString(36).slice(2)}:`;

runBucketsContract('RedisBuckets', async (now) => {
  const redis = await connectRedis(URL, 'commands');
  return { buckets: new RedisBuckets(redis, { prefix: prefix(), now }), close: async () => void (await redis.quit()) };
});

describe('RedisBuckets', () => {
  it('offers no synchronous take: callers await take', () => {
    expect(hasSyncBuckets(new RedisBuckets({} as ConstructorParameters<typeof RedisBuckets>[0], { prefix: prefix() }))).toBe(false);
  });

  it('shares one bucket between two clients (instances): together they admit exactly the capacity', async () => {
    const [a, b] = [await connectRedis(URL, 'commands'), await connectRedis(URL, 'commands')];
    try {
      const p = prefix();
      const onA = new RedisBuckets(a, { prefix: p });
      const onB = new RedisBuckets(b, { prefix: p });
      const policy = { capacity: 10, ratePerSec: 1 };
      const results = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? onA : onB).take('acct', 1, policy)));
      // Redis's clock may add a token if a second passes mid-test; never more than that.
      expect(results.filter((r) => r.admitted).length).toBeGreaterThanOrEqual(10);
      expect(results.filter((r) => r.admitted).length).toBeLessThanOrEqual(11);
      expect(await a.pttl(`${p}acct`)).toBeGreaterThan(1000);
    } finally {
      a.disconnect();
      b.disconnect();
    }
  });

  it('loads its script when Redis does not know it (NOSCRIPT), and fails open when Redis is gone', async () => {
    const redis = await connectRedis(URL, 'commands');
    // Not SCRIPT FLUSH: the Redis is shared; a client whose EVALSHA always says NOSCRIPT.
    const noscript = { evalsha: () => Promise.reject(new Error('NOSCRIPT No matching script')), eval: redis.eval.bind(redis) };
    const errors: unknown[] = [];
    const buckets = new RedisBuckets(noscript, { prefix: prefix(), onError: (e) => errors.push(e) });
    expect(await buckets.take('k', 1, { capacity: 1, ratePerSec: 1 })).toMatchObject({ admitted: true, remaining: 0 });
    expect(TAKE_SCRIPT).toContain("redis.call('TIME')");
    redis.disconnect();
    expect(await buckets.take('k', 1, { capacity: 1, ratePerSec: 1 })).toMatchObject({ admitted: true });
    expect(errors).toHaveLength(1);
  });
});
