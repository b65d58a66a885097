/**
 * The per-account REST rate limit shared in Redis: two app instances, each with its own Redis
 * connection and RedisBuckets, admit together no more than one bucket allows. Needs Redis
 * (REDIS_TEST_URL); the fake clock keeps it independent of the machine's speed.
 */
import { createServer, type Server } from 'node:http';
import fc from 'fast-check';
import pino from 'pino';
import type Redis from 'ioredis';
import { createApp } from '../../src/app';
import { connectRedis } from '../../src/bus';
import { parseConfig } from '../../src/config';
import { RedisBuckets } from '../../src/limits';
import { startTestServer, type TestServer } from '../support/server';

const REDIS_URL = process.env.REDIS_TEST_URL || 'redis://127.0.0.1:6379';

describe('REST rate limit across two instances sharing Redis', () => {
  let a: TestServer;
  let b: { url: string; server: Server };
  const redis: Redis[] = [];
  let t = 1_700_000_000_000;
  let prefix = '';
  // Each instance has its own Redis connection and its own RedisBuckets; both share the prefix.
  const shared = (client: Redis) => ({
    take: (key: string, cost: number, policy: { capacity: number; ratePerSec: number }) => new RedisBuckets(client, { prefix, now: () => t }).take(key, cost, policy),
  });

  beforeAll(async () => {
    redis.push(await connectRedis(REDIS_URL, 'commands'), await connectRedis(REDIS_URL, 'commands'));
    a = await startTestServer({ RATE_LIMIT_RPS: '3', RATE_LIMIT_BURST: '7' }, { buckets: shared(redis[0]) });
    const parsed = parseConfig({ DATA_DIR: a.dir, RATE_LIMIT_RPS: '3', RATE_LIMIT_BURST: '7' });
    if (!parsed.ok) throw new Error(parsed.error);
    // Instance B: another app over the same store (so the same accounts), its own Redis connection.
    const { listener } = createApp({ config: parsed.config, store: a.store, logger: pino({ level: 'silent' }), buckets: shared(redis[1]) });
    const server = createServer(listener);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    b = { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server };
  });
  afterAll(async () => {
    await new Promise<void>((r) => b.server.close(() => r()));
    await a.close();
    for (const c of redis) c.disconnect();
  });

  it('admits in total what one bucket allows, however requests spread over the instances and time (generated)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ onB: fc.boolean(), wait: fc.nat({ max: 800 }), burst: fc.integer({ min: 1, max: 4 }) }), { minLength: 1, maxLength: 12 }),
        async (steps) => {
          prefix = `orderline-test:${process.pid}:${Math.random().toString(36).slice(2)}:`;
          const start = t;
          let admitted = 0;
          let sent = 0;
          for (const { onB, wait, burst } of steps) {
            t += wait;
            const url = onB ? b.url : a.url;
            const answers = await Promise.all(Array.from({ length: burst }, () => fetch(`${url}/orders?limit=1`, { headers: { authorization: `Bearer ${a.alice.token}` } })));
            sent += burst;
            for (const res of answers) {
              expect([200, 429]).toContain(res.status);
              if (res.status === 200) admitted++;
              await res.arrayBuffer();
            }
          }
          const budget = 7 + Math.floor(((t - start) * 3) / 1000);
          expect(admitted).toBeLessThanOrEqual(budget);
          // And the limit is not stricter than the bucket: the first 7 are always admitted.
          expect(admitted).toBeGreaterThanOrEqual(Math.min(7, sent));
        },
      ),
      { numRuns: 15 },
    );
  });
});
