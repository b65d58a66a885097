/**
 * The node:cluster primary for `WORKERS=N`. It serves only the operator listener (the
 * instance's metrics, aggregated over the workers): it checks that
 * PostgreSQL (or the SQLite file) and Redis answer, migrates and loads the demo data
 * once (so N workers do not race for it), prints the banner once every worker listens,
 * and supervises: a worker that dies is replaced (restartPolicy.ts: delays double while
 * workers keep dying young, and the cluster stops after five such deaths in a row), one
 * that refused its configuration (exit 2) stops the whole cluster instead of looping (a worker
 * never exits 2 for PostgreSQL or Redis not answering: it waits for them, startup.ts Unreachable). SIGTERM is passed to every
 * worker, each of which drains as a lone server does (`main.ts`).
 *
 * Connections are spread by node:cluster's default round-robin on Linux; a WebSocket
 * or SSE connection stays on the worker that accepted it, and the Redis bus brings it
 * the other workers' events.
 */
import cluster, { type Worker } from 'node:cluster';
import type { AddressInfo } from 'node:net';
import type { Config } from './config';
import { createLogger, exitAfterLogs } from './logger';
import { createServer } from 'node:http';
import { instanceScrape, Metrics, metricsListener, refusalLog } from './http';
import { RestartPolicy } from './restartPolicy';
import { banner, listenOrRefuse, prepareDemo, openConfiguredShared, openConfiguredStore, urlOf } from './startup';

const FORCE_EXIT_MS = 12_000;

export async function runPrimary(config: Config): Promise<void> {
  const logger = createLogger(config.logLevel).child({ role: 'primary' });
  const store = await openConfiguredStore(config); // migrates, once
  const shared = await openConfiguredShared(config, new Metrics(), { error: () => undefined, recovered: () => undefined }, store); // reachable and ours, or refused here once
  await shared.bus.close();
  // The operator listener is the primary's: each scrape aggregates every worker (http/clusterMetrics.ts).
  const operator = createServer(metricsListener({ ...instanceScrape(), token: config.metrics.token, onError: (err) => logger.error({ err }, 'metrics scrape failed'), onRefused: refusalLog(logger) }));
  const metricsUrl = urlOf(config.metrics.host, await listenOrRefuse(operator, config.metrics.port, config.metrics.host, 'METRICS_PORT'));
  // Once METRICS_PORT is ours (a start refused for it must not spend the first start's one token).
  const { seeded, token } = await prepareDemo(config, store);
  await store.close();

  let closing = false;
  const listening = new Set<number>();
  let announced = false;
  let exitCode = 0;

  const restarts = new RestartPolicy();
  const bornAt = new Map<number, number>();
  const fork = (): Worker => {
    const w = cluster.fork();
    bornAt.set(w.id, Date.now());
    return w;
  };
  const alive = () => Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);

  const exit = exitAfterLogs(logger);
  const shutdown = (signal: string, code = 0) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'shutting down workers');
    // A worker still running then (its event loop stuck, or stopped) is killed, not left behind
    // as an orphan holding its store and Redis connections.
    setTimeout(() => {
      const stuck = alive();
      for (const w of stuck) w.process.kill('SIGKILL');
      if (stuck.length > 0) logger.error({ workers: stuck.map((w) => w.process.pid) }, `workers still running ${FORCE_EXIT_MS} ms after SIGTERM: killed`);
      exit(1);
    }, FORCE_EXIT_MS).unref();
    if (alive().length === 0) exit(code);
    exitCode = code;
    for (const w of alive()) w.process.kill('SIGTERM');
  };

  cluster.on('listening', (w: Worker, address: AddressInfo) => {
    listening.add(w.id);
    if (!announced && listening.size === config.workers) {
      announced = true;
      const url = urlOf(config.host, address.port);
      logger.info({ url, metricsUrl, seeded, workers: config.workers }, 'listening');
      process.stderr.write(banner(url, metricsUrl, token, ` (${config.workers} workers)`));
    }
  });
  cluster.on('exit', (w: Worker, code: number | null, signal: string | null) => {
    listening.delete(w.id);
    const lived = Date.now() - (bornAt.get(w.id) ?? Date.now());
    bornAt.delete(w.id);
    if (closing) {
      // A worker forced out of its drain (exit 1: a request still in flight after 10 s) or killed
      // by another signal makes the instance exit 1, as the single process does: in-flight work
      // was cut. One that the SIGTERM itself ended had no handler yet: it was still starting,
      // and served nothing.
      const cut = signal === null ? code !== 0 : signal !== 'SIGTERM';
      if (cut && exitCode === 0) exitCode = 1;
      if (alive().length === 0) {
        if (exitCode === 0) logger.info('shut down: every worker drained and exited');
        exit(exitCode);
      }
      return;
    }
    if (code === 2) {
      logger.error({ worker: w.id }, 'a worker refused its configuration; stopping');
      shutdown('worker refused', 2);
      return;
    }
    const decision = restarts.died(lived);
    if (!decision.restart) {
      logger.error({ worker: w.id, code, signal, earlyDeaths: decision.earlyDeaths }, 'workers keep dying right after they start; stopping');
      shutdown('workers keep dying', 1);
      return;
    }
    logger.error({ worker: w.id, code, signal, restartInMs: decision.delayMs }, 'worker died; starting another');
    setTimeout(() => closing || fork(), decision.delayMs);
  });

  for (let i = 0; i < config.workers; i++) fork();
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}
