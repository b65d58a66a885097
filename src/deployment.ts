/**
 * What the configuration selects besides the store: the bus and the APQ registry.
 * Embedded (no REDIS_URL): both in this process. Scaled out: Redis for both, so every
 * instance hears every committed event and knows every registered APQ hash.
 */
import type { Config } from './config';
import type { Metrics } from './http';
import { MemoryBus, RedisBus, type Bus } from './bus';
import { LruRegistry, RedisRegistry, type PersistedQueryRegistry } from './graphql';

export interface Shared {
  bus: Bus;
  registry: PersistedQueryRegistry;
}

/** Rejects when REDIS_URL does not answer (startup refuses rather than serving without fan-out). */
export async function openShared(config: Config, metrics: Metrics, onError: (err: unknown) => void): Promise<Shared> {
  const local = new LruRegistry(config.graphql.apqCacheSize);
  if (!config.redisUrl) return { bus: new MemoryBus(), registry: local };
  const reportError = (err: unknown) => {
    metrics.busErrors.inc();
    onError(err);
  };
  const bus = await RedisBus.open(config.redisUrl, { prefix: config.redisPrefix, onError: reportError, onCatchUp: () => metrics.busCatchUps.inc() });
  const registry = new RedisRegistry(bus.commands, { prefix: config.redisPrefix, ttlS: config.graphql.apqTtlS, local, onError: reportError });
  return { bus, registry };
}
