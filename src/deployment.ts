/**
 * What the configuration selects besides the store: the bus, the APQ registry and the
 * limit buckets (REST rate limit, GraphQL cost budget). Embedded (no REDIS_URL): all in
 * this process. Scaled out: Redis for all, so every instance hears every committed
 * event, knows every registered APQ hash and spends from the same buckets.
 */
import type { Config } from './config';
import type { Metrics } from './http';
import { MemoryBus, RedisBus, type Bus, type DeploymentClashError } from './bus';
import { LruRegistry, RedisRegistry, type PersistedQueryRegistry } from './graphql';
import { MemoryBuckets, RedisBuckets, type Buckets } from './limits';

export interface Shared {
  bus: Bus;
  registry: PersistedQueryRegistry;
  buckets: Buckets;
}

/**
 * The bus, the APQ registry and the rate-limit buckets: in process, or on Redis. Rejects when
 * REDIS_URL does not answer (startup refuses rather than serving without fan-out).
 * `deployment`: the store's id (StoreLifecycle.deploymentId), which claims REDIS_PREFIX (redis.ts).
 */
export async function openShared(
  config: Config,
  metrics: Metrics,
  redis: { error(err: unknown): void; recovered?(): void; dropped?(err: Error): void; clash?(err: DeploymentClashError): void },
  deployment?: string,
): Promise<Shared> {
  const local = new LruRegistry(config.graphql.apqCacheSize);
  if (!config.redisUrl) return { bus: new MemoryBus(), registry: local, buckets: new MemoryBuckets() };
  const reportError = (err: unknown) => {
    metrics.busErrors.inc();
    redis.error(err);
  };
  const bus = await RedisBus.open(config.redisUrl, {
    prefix: config.redisPrefix,
    deployment,
    onError: reportError,
    onDropped: (err) => {
      metrics.busErrors.inc();
      (redis.dropped ?? redis.error)(err);
    },
    onClash: (err) => {
      metrics.busErrors.inc();
      (redis.clash ?? redis.error)(err);
    },
    onRecovered: () => redis.recovered?.(),
    onCatchUp: () => metrics.busCatchUps.inc(),
  });
  const registry = new RedisRegistry(bus.commands, { prefix: config.redisPrefix, ttlS: config.graphql.apqTtlS, local, onError: reportError });
  const buckets = new RedisBuckets(bus.commands, { prefix: `${config.redisPrefix}bucket:`, onError: reportError });
  return { bus, registry, buckets };
}
