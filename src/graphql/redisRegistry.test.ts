/** RedisRegistry against the real Redis (REDIS_TEST_URL, default the local one), each test under its own prefix. */
import type Redis from 'ioredis';
import { connectRedis } from '../bus';
import { RedisRegistry } from './redisRegistry';
import { LruRegistry } from './registry';
import { sha256Hex } from './persisted';
import { runRegistryContract } from './registry.contract';
import { runPeekableRegistryContract } from './peekableRegistry.contract';

const URL = process.env.REDIS_TEST_URL || 'redis://127.0.0.1:6379';
const prefix = () => `orderline-test:${process.pid}:${Math.random().toString(36).slice(2)}:`;
const text = (n: number) => `query Q${n} { viewer { id } }`;

function registry(redis: Redis, p: string, errors: unknown[] = [], ttlS = 60) {
  return new RedisRegistry(redis, { prefix: p, ttlS, local: new LruRegistry(100), onError: (e) => errors.push(e) });
}

runRegistryContract('RedisRegistry', async () => {
  const redis = await connectRedis(URL, 'commands');
  return { registry: registry(redis, prefix()), close: async () => void (await redis.quit()) };
});
runPeekableRegistryContract('RedisRegistry', async () => {
  const redis = await connectRedis(URL, 'commands');
  return { registry: registry(redis, prefix()), close: async () => void (await redis.quit()) };
});

describe('RedisRegistry', () => {
  let redis: Redis;
  beforeEach(async () => {
    redis = await connectRedis(URL, 'commands');
  });
  afterEach(async () => {
    redis.disconnect();
  });

  it('finds on one instance a hash registered on another, and keeps it for the TTL', async () => {
    const p = prefix();
    const onA = registry(redis, p, [], 120);
    const onB = registry(redis, p); // its own, empty, in-process front
    await onA.set(sha256Hex(text(1)), text(1));
    await expect(onB.get(sha256Hex(text(1)))).resolves.toBe(text(1));
    const ttl = await redis.ttl(`${p}apq:${sha256Hex(text(1))}`);
    expect(ttl).toBeGreaterThan(100);
    expect(ttl).toBeLessThanOrEqual(120);
  });

  it('ignores a stored value that does not hash to its key', async () => {
    const p = prefix();
    await redis.set(`${p}apq:${sha256Hex(text(2))}`, text(3), 'EX', 60);
    await expect(registry(redis, p).get(sha256Hex(text(2)))).resolves.toBeUndefined();
  });

  it('with Redis gone: a lookup is a miss, a registration still serves this instance, nothing throws', async () => {
    const errors: unknown[] = [];
    const r = registry(redis, prefix(), errors);
    await r.set(sha256Hex(text(4)), text(4));
    redis.disconnect(); // no offline queue: every command now fails at once
    await expect(r.get(sha256Hex(text(5)))).resolves.toBeUndefined();
    await expect(r.set(sha256Hex(text(6)), text(6))).resolves.toBeUndefined();
    await expect(r.get(sha256Hex(text(4)))).resolves.toBe(text(4)); // the local front
    await expect(r.get(sha256Hex(text(6)))).resolves.toBe(text(6));
    expect(errors).toHaveLength(2);
  });
});
