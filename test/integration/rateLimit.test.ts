/**
 * The per-account REST rate limit over HTTP. Time is a fake clock handed to the buckets,
 * so no test waits or depends on how fast the machine is.
 */
import { createServer, type Server } from 'node:http';
import fc from 'fast-check';
import pino from 'pino';
import type Redis from 'ioredis';
import { createApp } from '../../src/app';
import { connectRedis } from '../../src/bus';
import { parseConfig } from '../../src/config';
import { MemoryBuckets, RedisBuckets } from '../../src/limits';
import { startTestServer, type TestServer } from '../support/server';
import { expectContract } from '../support/contract';

const REDIS_URL = process.env.REDIS_TEST_URL || 'redis://127.0.0.1:6379';

describe('REST rate limit (RATE_LIMIT_RPS=2, RATE_LIMIT_BURST=5)', () => {
  let s: TestServer;
  let t = 1_700_000_000_000;
  beforeAll(async () => {
    s = await startTestServer({ RATE_LIMIT_RPS: '2', RATE_LIMIT_BURST: '5' }, { buckets: new MemoryBuckets(() => t) });
  });
  afterAll(() => s.close());

  it('admits a burst with the IETF fields counting down, then 429 problem+json with Retry-After; recovers after it', async () => {
    const seen: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await s.fetch('/orders');
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-policy')).toBe('"rest";q=5;w=3');
      seen.push(res.headers.get('ratelimit')!);
    }
    expect(seen).toEqual(['"rest";r=4;t=1', '"rest";r=3;t=1', '"rest";r=2;t=2', '"rest";r=1;t=2', '"rest";r=0;t=3']);
    const refused = await s.fetch('/orders');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toBe('application/problem+json');
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.headers.get('ratelimit')).toBe('"rest";r=0;t=3');
    expect(refused.headers.get('ratelimit-policy')).toBe('"rest";q=5;w=3');
    expect(await expectContract('listOrders', refused)).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
    // Another account has its own bucket.
    expect((await s.fetch('/orders', { as: 'bob' })).status).toBe(200);
    // A refused request spent nothing and wrote nothing: a create is refused before it runs.
    const before = (await s.store.listOrders(s.alice.account.id, 0, 100)).orders.length;
    const post = await s.fetch('/orders', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(post.status).toBe(429);
    expect((await s.store.listOrders(s.alice.account.id, 0, 100)).orders.length).toBe(before);
    t += 1000 * Number(refused.headers.get('retry-after'));
    const again = await s.fetch('/orders');
    expect(again.status).toBe(200);
    expect(again.headers.get('ratelimit')).toBe('"rest";r=1;t=2');
  });

  it('puts the fields on error responses too (a 404 still spends a token)', async () => {
    t += 10_000;
    const res = await s.fetch('/orders/999999');
    expect(res.status).toBe(404);
    expect(res.headers.get('ratelimit')).toBe('"rest";r=4;t=1');
  });

  it('leaves unauthenticated requests and health probes alone', async () => {
    const res = await s.fetch('/healthz', { as: 'anonymous' });
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit')).toBeNull();
  });
});

describe('REST rate limit off (the default)', () => {
  it('sends no fields and never refuses', async () => {
    const s = await startTestServer();
    try {
      for (let i = 0; i < 30; i++) {
        const res = await s.fetch('/orders');
        expect(res.status).toBe(200);
        expect(res.headers.get('ratelimit')).toBeNull();
      }
    } finally {
      await s.close();
    }
  });
});

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
    const { app } = createApp({ config: parsed.config, store: a.store, logger: pino({ level: 'silent' }), buckets: shared(redis[1]) });
    const server = createServer(app.callback());
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
