/**
 * Composes the service. The public node:http listener, the request pipeline (http/pipeline.ts),
 * serves every operation of the OpenAPI contract, /graphql and the SSE stream; what the
 * contracts do not declare goes to the Koa application, where users add their own
 * middleware and routes behind the service's shell (http/koaShell.ts). WebSocket upgrades
 * go to `realtime.attach(server)`: /orders, and /graphql's subscriptions (graphql-transport-ws)
 * on the same hub, limiter and connection rules. Metrics have a listener of their own for
 * operators (`metricsListener`, http/metricsListener.ts).
 */
import type { RequestListener } from 'node:http';
import Koa from 'koa';
import type { Logger } from 'pino';
import type { Config } from './config';
import type { Store } from './store';
import {
  authenticator,
  AuthCache,
  createPipeline,
  FieldReadTally,
  Finalizer,
  HttpTimer,
  koaShell,
  Metrics,
  metricsListener,
  refusalLog,
  orderReads,
  rateLimiter,
  resolveToken,
  restOperations,
  unreachableRoutes,
  type UnreachableRoute,
} from './http';
import { MemoryBuckets, type Buckets } from './limits';
import { costBudget, graphqlEngine, graphqlRoute, graphqlSubscriptions, GRAPHQL_PATH, LruRegistry, type PersistedQueryRegistry } from './graphql';
import { createRealtime, type Realtime } from './realtime';
import { MemoryBus, type Bus } from './bus';
import { manifest } from '../generated/graphql/persisted';
import { resources } from '../generated/openapi/routes';

export interface AppDeps {
  config: Config;
  store: Store;
  logger: Logger;
  metrics?: Metrics;
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
  /** The node:http request listener: the pipeline, then the Koa app for what the contracts do not declare. */
  listener: RequestListener;
  /** The Koa application: mount your own middleware and routes here (`app.use(...)`). */
  app: Koa;
  /**
   * The operator listener's request listener (`GET /metrics`, behind METRICS_TOKEN when set):
   * serve it on its own server at METRICS_HOST:METRICS_PORT, never on the public one.
   */
  metricsListener: RequestListener;
  metrics: Metrics;
  /** Deprecated-field reads per account: `seed()` before serving, `flush()` periodically and at shutdown. */
  fieldReads: FieldReadTally;
  authCache: AuthCache;
  realtime: Realtime;
  /** What every answer owes (request id, CORS, log line, metric): for answers written outside the pipeline (the drain's 503, a request node could not parse). */
  finalizer: Finalizer;
  /** The routes mounted on `app` that the pipeline answers for (a contract path): call once `app` is complete (main.ts logs each at start). */
  unreachableRoutes: () => UnreachableRoute[];
}

/** Paths of a request's field errors its log line names (the count says how many there were). */
const FIELD_ERROR_PATHS_LOGGED = 5;

export function createApp(deps: AppDeps): App {
  const { config, store } = deps;
  const metrics = deps.metrics ?? new Metrics();
  const fieldReads = new FieldReadTally(metrics.deprecatedReads, store, { topAccounts: config.metrics.topAccounts });
  const finalizer = new Finalizer(deps.logger, new HttpTimer(metrics), config.corsOrigins, config.corsAllowHeaders);
  const authCache = new AuthCache(config.authCacheTtlMs);
  const bus = deps.bus ?? new MemoryBus();
  const realtime = createRealtime({
    store,
    bus,
    config: config.realtime,
    authenticateToken: (token) => resolveToken(token, store, authCache),
    onBackpressure: () => metrics.streamBackpressure.inc(),
    onHeartbeatTimeout: () => metrics.wsHeartbeatTimeouts.inc(),
    onError: (err) => deps.logger.error({ err }, 'realtime error'),
    logAnswer: (req, status, id, route) => finalizer.rawAnswer(req, status, id, route),
    now: deps.now,
  });
  metrics.watch({ streams: () => realtime.stats() });
  const buckets = deps.buckets ?? new MemoryBuckets();
  const { rps, burst } = config.rateLimit;
  const graphql = graphqlEngine({
    store,
    registry: deps.registry ?? new LruRegistry(config.graphql.apqCacheSize),
    manifest: deps.manifest ?? manifest,
    limits: config.graphql,
    production: config.production,
    onOutcome: (outcome) => metrics.graphqlRequests.inc({ outcome }),
    // One line per request: the first error whole (its stack), how many, and the first few paths.
    onFieldErrors: (errs, reqId) =>
      deps.logger.error({ err: errs[0].originalError ?? errs[0], path: errs[0].path, count: errs.length, paths: errs.slice(0, FIELD_ERROR_PATHS_LOGGED).map((e) => e.path), reqId }, 'graphql field error'),
    costBudget: config.graphql.costBudget > 0 ? costBudget({ buckets, budget: config.graphql.costBudget, restoreRate: config.graphql.costRestoreRate }) : undefined,
  });
  realtime.mount(
    GRAPHQL_PATH,
    graphqlSubscriptions({
      engine: graphql,
      store,
      hub: realtime.hub,
      authenticate: (token) => resolveToken(token, store, authCache),
      maxSubscriptions: config.realtime.maxSubscriptionsPerConnection,
      maxMessageBytes: config.bodyLimitBytes,
      onError: (err) => deps.logger.error({ err }, 'graphql subscription error'),
    }),
  );
  const operations = restOperations({
    store,
    fieldReads,
    probes: { store: () => store.ping(), bus: () => bus.ping() },
    // Every committed write reaches the topic hubs of every instance.
    onEvent: (event) => realtime.publish(event),
    idempotencyTtlMs: config.idempotencyTtlS * 1000,
    reads: orderReads({ store, fieldReads }),
  });

  const app = new Koa();
  let koa: ReturnType<Koa['callback']> | undefined;
  app.use(koaShell(finalizer, config.bodyLimitBytes));
  // Errors are answered by the shell; this only sees what escapes Koa itself.
  app.on('error', (err) => deps.logger.error({ err }, 'koa error'));

  const transports = [graphqlRoute({ engine: graphql, finalizer, authenticate: authenticator(store, authCache), bodyLimit: config.bodyLimitBytes }), realtime.sseRoute(finalizer)];
  const listener = createPipeline({
    finalizer,
    operations,
    store,
    authCache,
    limiter: rps > 0 ? rateLimiter({ buckets, rps, burst }) : undefined,
    bodyLimit: config.bodyLimitBytes,
    transports,
    // Composed at the first request it gets, so middleware and routes a user adds to `app`
    // after createApp (and before serving) are part of it.
    fallback: (req, res) => void (koa ??= app.callback())(req, res),
  });
  const operator = metricsListener({
    scrape: () => metrics.scrape(),
    contentType: metrics.registry.contentType,
    token: config.metrics.token,
    onError: (err) => deps.logger.error({ err }, 'metrics scrape failed'),
    onRefused: refusalLog(deps.logger),
  });
  const templates = [...Object.keys(resources), ...transports.map((t) => t.route)];
  return { listener, metricsListener: operator, app, metrics, fieldReads, authCache, realtime, finalizer, unreachableRoutes: () => unreachableRoutes(app.middleware, templates) };
}
