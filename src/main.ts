/**
 * Entry point: read config, open the store and the bus, serve. Bad configuration is
 * refused with one line naming the variable and exit code 2; SIGTERM drains gracefully.
 *
 * `WORKERS=N` (N > 1, REDIS_URL required by config) runs N copies of this server under
 * node:cluster (`cluster.ts`): the primary migrates, loads the demo data and prints the
 * token once, then forks; each worker serves the shared port with its own store pool
 * and hub, and hears the others' events through Redis.
 */
import cluster from 'node:cluster';
import { createServer, type Server } from 'node:http';
import { parseConfig, type Config } from './config';
import { createLogger, exitAfterLogs, loggedError, outageLog, throttle } from './logger';
import { createApp } from './app';
import { createHttpServer, Drain, lendRegistryToPrimary, Metrics, startFieldReadFlusher, startIdempotencySweeper } from './http';
import { runPrimary } from './cluster';
import { banner, prepareDemo, openConfiguredShared, openConfiguredStore, exitRefusing, listenOrRefuse, urlOf } from './startup';

/** One server process: alone (embedded or one instance of many) or as a cluster worker. */
async function serve(config: Config): Promise<void> {
  const worker = cluster.isWorker;
  const logger = createLogger(config.logLevel).child(worker ? { worker: cluster.worker?.id } : {});
  // Default metrics include the event-loop delay percentiles the benchmarks report.
  const metrics = new Metrics({ defaultMetrics: true });
  // A worker waits out PostgreSQL or Redis not answering (startup.ts Unreachable); a lone server refuses.
  const wait = worker ? { onRetry: (what: string, err: unknown, delayMs: number) => logger.error({ err, retryInMs: delayMs }, `${what} is unreachable; trying again`) } : undefined;
  // During an outage every query fails alike: the metric counts each, the log says so once per 5 s
  // (each request's 503 has its own line), and once when the database answers again.
  const storeLog = outageLog(logger, 'database');
  // Until the store is open, a failure is the start's to report: a lone server refuses with one
  // line naming DATABASE_URL, a worker logs each retry (`wait`); a warning here would say it twice.
  let opened = false;
  const store = await openConfiguredStore(
    config,
    {
      error: (err) => {
        metrics.storeErrors.inc();
        if (opened) storeLog.failed(err, err.name === 'StoreUnavailableError' ? 'database unreachable' : 'database pool error');
      },
      recovered: () => storeLog.recovered(),
    },
    wait,
  );
  opened = true;
  if (worker) lendRegistryToPrimary(metrics);
  // A Redis outage fails every command at once (a rate-limit take, an APQ lookup, a publish): one line per 5 s, as for the store.
  const redisLog = outageLog(logger, 'redis');
  const droppedGate = throttle(5000);
  const shared = await openConfiguredShared(
    config,
    metrics,
    {
      error: (err) => redisLog.failed(err, 'redis unreachable'),
      recovered: () => redisLog.recovered(),
      // Not an outage (Redis answers): its own line, at each clash found (the bus tells one until the claim is ours again).
      clash: (err) => logger.error({ err: loggedError(err) }, 'redis: another deployment holds REDIS_PREFIX: its messages are dropped (the prefix is claimed again once it is free)'),
      // Anyone who can PUBLISH on the prefix could otherwise flood the log: one line per 5 s, as for outages.
      dropped: (err) => {
        const passed = droppedGate();
        if (passed) logger.warn({ err: loggedError(err), ...passed }, "redis: a message that is not this bus's was dropped");
      },
    },
    store,
    wait,
  );
  const { listener, metricsListener, fieldReads, realtime, finalizer, unreachableRoutes } = createApp({ config, store, logger, metrics, bus: shared.bus, registry: shared.registry, buckets: shared.buckets });
  await fieldReads.seed();

  const drain = new Drain(listener, finalizer);
  metrics.watch(drain.gauges());
  const server: Server = drain.track(
    createHttpServer(drain.listener, config.bodyLimitBytes, { requestTimeoutMs: config.requestTimeoutS * 1000 }, (req, status, id, route, line) => finalizer.rawAnswer(req, status, id, route, line)),
  );
  realtime.attach(server);
  const url = urlOf(config.host, await listenOrRefuse(server, config.port, config.host, 'PORT', config.listenBacklog));
  // The operator listener: a cluster's primary serves it (the whole instance's metrics), a lone process here.
  const operator: Server | undefined = worker ? undefined : createServer(metricsListener);
  const metricsUrl = operator ? urlOf(config.metrics.host, await listenOrRefuse(operator, config.metrics.port, config.metrics.host, 'METRICS_PORT')) : undefined;
  // The demo is loaded and its token minted once both ports are ours: a start refused for a
  // port in use must not spend the one token a first start prints. Until then no request can
  // carry it. A cluster's primary prepared the demo before forking.
  const demo = worker ? { seeded: false, token: null } : await prepareDemo(config, store);
  // The signal handlers before the banner and the 'listening' line: a supervisor (or `npm start`'s
  // caller) that signals as soon as it reads them finds the drain in place, not node's default exit.
  let closing = false;
  const exit = exitAfterLogs(logger);
  // The background jobs' stops: at shutdown no sweep or periodic flush starts against a store being closed.
  const background: (() => void)[] = [];
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'shutting down: no new connections, finishing in-flight requests');
    for (const stop of background) stop();
    const force = setTimeout(() => {
      // What the exit cuts, so the log says why this instance ended with 1 (and which request ids to look for).
      logger.error(drain.inFlight(), 'shutdown forced after 10 s: exiting with connections still open');
      exit(1);
    }, 10_000);
    force.unref();
    // No request is reset (http/drain.ts): new ones get 503 + Connection: close, in-flight
    // ones finish, stream clients are told to reconnect (SSE retry: then end; WebSocket 1001).
    operator?.close();
    operator?.closeAllConnections();
    drain
      .drain(server, () => realtime.close())
      // The reads tallied since the last flush, before the store closes; a store that does not
      // answer (a partition) would hold both until the forced exit, which cuts what is in flight:
      // each gets SHUTDOWN_STEP_MS, and what it could not do is logged.
      .then(() => within(SHUTDOWN_STEP_MS, fieldReads.flush()).catch((err: unknown) => logger.warn({ err }, 'field read counts lost at shutdown')))
      .then(() => within(SHUTDOWN_STEP_MS, Promise.all([store.close(), shared.bus.close()])))
      .catch((err) => logger.error({ err }, 'close failed'))
      // The last line of a clean stop: without it a log could not tell a finished drain from a kill.
      .finally(() => {
        logger.info('shut down: every request answered, the store and bus closed');
        exit(0);
      });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));

  // A Koa route mounted on a contract path is answered by the pipeline: said here, since no request would tell.
  for (const route of unreachableRoutes()) logger.warn(route, `a Koa route is never reached on ${route.owner}: the contract's route answers every request there`);
  logger.info({ url, metricsUrl, seeded: demo.seeded, bus: shared.bus.kind }, 'listening');
  if (metricsUrl) process.stderr.write(banner(url, metricsUrl, demo.token));
  // Deprecated-field reads per account reach the store in batches, never one write per request.
  background.push(startFieldReadFlusher(fieldReads, { everyMs: config.metrics.flushIntervalS * 1000, onError: (err) => logger.warn({ err }, 'field read counts not stored yet') }));
  // Expired Idempotency-Keys are deleted in the background (a claim never reads one as live anyway).
  background.push(startIdempotencySweeper(store, { onError: (err) => logger.warn({ err }, 'idempotency sweep failed') }));

  // A worker whose primary is gone (killed) would serve on unsupervised: it drains instead.
  // node:cluster exits a worker at once when its channel to the primary closes unexpectedly
  // (node:cluster's worker side), cutting what it serves, unless `exitedAfterDisconnect` is
  // set by then: the worker's 'disconnect' event comes first, so setting it there lets the drain run.
  const self = cluster.worker;
  if (worker && self) {
    self.once('disconnect', () => {
      self.exitedAfterDisconnect = true;
      shutdown('primary gone');
    });
  }
}

/** How long each closing step after the drain (the field-read flush, closing the store and the bus) may take. */
const SHUTDOWN_STEP_MS = 3000;

/** `work`, or a rejection once `ms` have passed without it. */
function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not done within ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

async function main(): Promise<void> {
  const parsed = parseConfig(process.env);
  if (!parsed.ok) exitRefusing(parsed.error);
  const config = parsed.config;
  if (config.workers > 1 && cluster.isPrimary) await runPrimary(config);
  else await serve(config);
}

main().catch((err) => {
  process.stderr.write(`orderline: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
