/**
 * The GraphQL cost budget shared in Redis: two app instances, each with its own Redis
 * connection and RedisBuckets on one prefix, spend one bucket per account. A client whose
 * queries spread over both is throttled exactly when the shared bucket would go below
 * zero, which a model of that one bucket predicts query by query. Needs Redis
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
const ENV = { GRAPHQL_COST_BUDGET: '100', GRAPHQL_COST_RESTORE_RATE: '10', GRAPHQL_MAX_COST: '100' };
/** Queries and their exact costs (costRule.ts's formula). */
const QUERIES: [string, number][] = [
  ['{ viewer { id name } }', 4],
  ['{ user(id: "u1") { friends(first: 5) { id } } }', 17],
  ['{ user(id: "u1") { friends { name } } }', 32],
];

interface Body {
  data?: unknown;
  errors?: { extensions?: Record<string, unknown> }[];
  extensions?: { cost?: { requestedQueryCost: number; throttleStatus: { currentlyAvailable: number } } };
}

describe('GraphQL cost budget across two instances sharing Redis', () => {
  let a: TestServer | undefined;
  let b: { url: string; server: Server } | undefined;
  let token: string;
  const redis: Redis[] = [];
  let t = 1_700_000_000_000;
  let prefix = '';
  // Each instance has its own Redis connection and its own RedisBuckets; both share the prefix.
  const shared = (client: Redis) => ({
    take: (key: string, cost: number, policy: { capacity: number; ratePerSec: number }) => new RedisBuckets(client, { prefix, now: () => t }).take(key, cost, policy),
  });

  beforeAll(async () => {
    redis.push(await connectRedis(REDIS_URL, 'commands'), await connectRedis(REDIS_URL, 'commands'));
    const onA = (a = await startTestServer(ENV, { buckets: shared(redis[0]) }));
    await onA.store.seedDemo();
    token = await onA.tokenFor('demo');
    const parsed = parseConfig({ DATA_DIR: onA.dir, ...ENV });
    if (!parsed.ok) throw new Error(parsed.error);
    // Instance B: another app over the same store (so the same accounts), its own Redis connection.
    const { app } = createApp({ config: parsed.config, store: onA.store, logger: pino({ level: 'silent' }), buckets: shared(redis[1]) });
    const server = createServer(app.callback());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    b = { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server };
  });
  afterAll(async () => {
    // Whatever beforeAll got to is closed, so a failed start never leaves jest hanging on a socket.
    if (b) await new Promise<void>((r) => b!.server.close(() => r()));
    await a?.close();
    for (const c of redis) c.disconnect();
  });

  it('throttles exactly when the one shared bucket would go below zero, however queries spread over the instances and time (generated)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ onB: fc.boolean(), wait: fc.nat({ max: 2500 }), which: fc.nat({ max: QUERIES.length - 1 }) }), { minLength: 1, maxLength: 16 }),
        async (steps) => {
          prefix = `orderline-test:${process.pid}:${Math.random().toString(36).slice(2)}:`;
          let model = 100_000; // milli-points of the one bucket both instances share
          for (const { onB, wait, which } of steps) {
            t += wait;
            model = Math.min(100_000, model + wait * 10);
            const [query, cost] = QUERIES[which];
            const res = await fetch(`${onB ? b!.url : a!.url}/graphql`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', authorization: `Bearer ${token}` },
              body: JSON.stringify({ query }),
            });
            const json = (await res.json()) as Body;
            const fits = cost * 1000 <= model;
            expect(res.status).toBe(fits ? 200 : 429);
            if (fits) model -= cost * 1000;
            else expect(json.errors![0].extensions!.code).toBe('THROTTLED');
            expect(json.data === undefined).toBe(!fits);
            expect(json.extensions!.cost).toEqual({ requestedQueryCost: cost, throttleStatus: { maximumAvailable: 100, currentlyAvailable: Math.floor(model / 1000), restoreRate: 10 } });
          }
        },
      ),
      { numRuns: 20 },
    );
  });
});
