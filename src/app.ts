/**
 * Composes the service: middleware order is the whole design here.
 * request id + log -> metrics -> CORS (when configured) -> problem+json -> SSE streams -> /graphql -> routes generated
 * from the contract. WebSocket upgrades bypass Koa: `realtime.attach(server)`; a few hot routes
 * are served on node:http before Koa (`listener`, http/edge.ts).
 */
import type { RequestListener } from 'node:http';
import Koa from 'koa';
import type { Logger } from 'pino';
import type { Config } from './config';
import type { OrderEvent, Store } from './store';
import {
  accountForToken,
  authenticate,
  authenticateRequest,
  AuthCache,
  corsMiddleware,
  EdgeEssentials,
  edgeListener,
  type EdgeRoute,
  HttpTimer,
  Metrics,
  metricsMiddleware,
  problemMiddleware,
  requestLog,
  rateLimit,
  restRouter,
  orderReadRoute,
  orderReads,
  rateLimiter,
} from './http';
import { MemoryBuckets, type Buckets } from './limits';
import { costBudget, graphqlEngine, graphqlMiddleware, graphqlRoute, LruRegistry, type PersistedQueryRegistry } from './graphql';
import { createRealtime, type Realtime } from './realtime';
import { MemoryBus, type Bus } from './bus';
import { manifest } from '../generated/graphql/persisted';

export interface AppDeps {
  config: Config;
  store: Store;
  logger: Logger;
  metrics?: Metrics;
  onEvent?: (event: OrderEvent) => void;
  /** How committed events reach every instance's streams; default: this process only. */
  bus?: Bus;
  /** APQ registry; default: a bounded LRU in this process (Redis when scaled out). */
  registry?: PersistedQueryRegistry;
  /** Milliseconds clock for time-based limits of the realtime tier (tests inject one); default performance.now. */
  now?: () => number;
  /** The build-time operations the server knows without registration; default: generated/. */
  manifest?: Readonly<Record<string, string>>;
  /** Buckets of the REST rate limit and the GraphQL cost budget; default: this process (Redis when scaled out). */
  buckets?: Buckets;
}

export interface App {
  /** The node:http request listener: the edge's raw routes first, then the Koa app. */
  listener: RequestListener;
  app: Koa;
  metrics: Metrics;
  authCache: AuthCache;
  realtime: Realtime;
}

export function createApp(deps: AppDeps): App {
  const metrics = deps.metrics ?? new Metrics();
  const timer = new HttpTimer(metrics);
  // Request id, CORS, log line and duration metric for the routes served outside Koa.
  const essentials = new EdgeEssentials(deps.logger, timer, deps.config.corsOrigins);
  const authCache = new AuthCache(deps.config.authCacheTtlMs);
  const app = new Koa();
  const bus = deps.bus ?? new MemoryBus();
  const realtime = createRealtime({
    store: deps.store,
    bus,
    config: deps.config.realtime,
    authenticateToken: (token) => accountForToken(token, deps.store, authCache),
    onBackpressure: () => metrics.streamBackpressure.inc(),
    onError: (err) => deps.logger.error({ err }, 'realtime error'),
    now: deps.now,
  });
  // Every committed write reaches the topic hubs of every instance (and whoever else listens).
  const onEvent = (event: OrderEvent) => {
    realtime.publish(event);
    deps.onEvent?.(event);
  };
  const buckets = deps.buckets ?? new MemoryBuckets();
  const auth = authenticate(deps.store, authCache);
  const { rps, burst } = deps.config.rateLimit;
  const limit = rps > 0 ? rateLimit({ buckets, rps, burst }) : undefined;
  // /graphql's engine: one instance for the Koa middleware and the edge route.
  const graphql = graphqlEngine({
    store: deps.store,
    registry: deps.registry ?? new LruRegistry(deps.config.graphql.apqCacheSize),
    manifest: deps.manifest ?? manifest,
    limits: deps.config.graphql,
    production: deps.config.production,
    onOutcome: (outcome) => metrics.graphqlRequests.inc({ outcome }),
    costBudget: deps.config.graphql.costBudget > 0 ? costBudget({ buckets, budget: deps.config.graphql.costBudget, restoreRate: deps.config.graphql.costRestoreRate }) : undefined,
  });
  // The order read's rules and representation cache: one instance for the Koa handler and the edge route.
  const reads = orderReads({ store: deps.store, metrics });
  const router = restRouter({
    store: deps.store,
    metrics,
    probes: { store: () => deps.store.ping(), bus: () => bus.ping() },
    onEvent,
    bodyLimit: deps.config.bodyLimitBytes,
    idempotencyTtlMs: deps.config.idempotencyTtlS * 1000,
    reads,
    // The rate limit spends the caller's token right after authentication, before any parsing.
    authenticate: limit ? (ctx, next) => auth(ctx, () => limit(ctx, next)) : auth,
  });

  app.use(requestLog(deps.logger));
  app.use(metricsMiddleware(metrics, timer));
  // Before everything that answers, errors and SSE included, so a browser can read those too.
  const cors = corsMiddleware(deps.config.corsOrigins);
  if (cors) app.use(cors);
  app.use(problemMiddleware());
  app.use(realtime.sse);
  app.use(graphqlMiddleware(graphql, { authenticate: (ctx) => authenticateRequest(ctx, deps.store, authCache), bodyLimit: deps.config.bodyLimitBytes }));
  app.use(router.routes());
  app.use(router.allowedMethods());
  // Errors are answered by problemMiddleware; this only sees what escapes koa itself.
  app.on('error', (err) => deps.logger.error({ err }, 'koa error'));
  // Routes served on node:http before Koa (edge.ts); each declines what it does not fully handle.
  const edgeRoutes: EdgeRoute[] = [
    realtime.sseEdge(essentials),
    orderReadRoute({ reads, authCache, essentials, rateLimit: rps > 0 ? rateLimiter({ buckets, rps, burst }) : undefined }),
    graphqlRoute({ engine: graphql, authCache, essentials, bodyLimit: deps.config.bodyLimitBytes, onError: (err, reqId) => deps.logger.error({ err, reqId }, 'unhandled error') }),
  ];
  return { listener: edgeListener(edgeRoutes, app.callback()), app, metrics, authCache, realtime };
}
