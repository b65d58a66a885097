/**
 * Two app instances over one store, as a scaled-out deployment's limits see them: each
 * with its own Redis connection and its own RedisBuckets, on one key prefix and one fake
 * clock. Instance A is a full test server (its accounts and tokens); B is another app on
 * A's store and config. `newPrefix()` gives the buckets a fresh namespace (one per
 * generated case). Needs Redis (REDIS_TEST_URL).
 */
import { createServer, type Server } from 'node:http';
import pino from 'pino';
import type Redis from 'ioredis';
import { createApp } from '../../src/app';
import { connectRedis } from '../../src/bus';
import { parseConfig } from '../../src/config';
import { RedisBuckets, type BucketPolicy } from '../../src/limits';
import { startTestServer, type TestServer } from './server';

const REDIS_URL = process.env.REDIS_TEST_URL || 'redis://127.0.0.1:6379';

export interface TwoInstances {
  a: TestServer;
  bUrl: string;
  /** The buckets' clock, milliseconds: tests move it. */
  clock: { now: number };
  newPrefix(): void;
  close(): Promise<void>;
}

export async function startTwoInstances(env: Record<string, string>): Promise<TwoInstances> {
  const redis: Redis[] = [await connectRedis(REDIS_URL, 'commands'), await connectRedis(REDIS_URL, 'commands')];
  const clock = { now: 1_700_000_000_000 };
  let prefix = '';
  const shared = (client: Redis) => ({
    take: (key: string, cost: number, policy: BucketPolicy) => new RedisBuckets(client, { prefix, now: () => clock.now }).take(key, cost, policy),
  });
  let a: TestServer | undefined;
  let b: Server | undefined;
  const close = async () => {
    // Whatever was started is closed, so a failed start never leaves jest hanging on a socket.
    if (b) await new Promise<void>((r) => b!.close(() => r()));
    await a?.close();
    for (const c of redis) c.disconnect();
  };
  try {
    a = await startTestServer(env, { buckets: shared(redis[0]) });
    const parsed = parseConfig({ DATA_DIR: a.dir, ...env });
    if (!parsed.ok) throw new Error(parsed.error);
    const { listener } = createApp({ config: parsed.config, store: a.store, logger: pino({ level: 'silent' }), buckets: shared(redis[1]) });
    const server = (b = createServer(listener));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const bUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    return { a, bUrl, clock, newPrefix: () => (prefix = `orderline-test:${process.pid}:${Math.random().toString(36).slice(2)}:`), close };
  } catch (err) {
    await close();
    throw err;
  }
}
