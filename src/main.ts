/**
 * Entry point: read config, open the store, serve. Bad configuration is refused with
 * one line naming the variable and exit code 2; SIGTERM drains gracefully.
 */
import { createServer, type Server } from 'node:http';
import { parseConfig, redactUrl, type Config } from './config';
import { createLogger } from './logger';
import { createApp } from './app';
import { Metrics } from './http/metrics';
import { issueToken, openStore, type Store } from './store';

function refuse(message: string): never {
  process.stderr.write(`orderline: ${message}\n`);
  process.exit(2);
}

async function open(config: Config): Promise<Store> {
  if (config.workers > 1) refuse(`WORKERS=${config.workers}: multi-worker mode is not implemented yet; use WORKERS=1`);
  let store: Store;
  try {
    store = await openStore({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, sqliteSynchronous: config.sqliteSynchronous });
  } catch (err) {
    // DATABASE_URL must answer before we start; the message names the URL without its password.
    if (config.databaseUrl) refuse(`DATABASE_URL ${redactUrl(config.databaseUrl)} is unreachable: ${(err as Error).message || String(err)}`);
    throw err;
  }
  await store.migrate();
  return store;
}

async function main(): Promise<void> {
  const parsed = parseConfig(process.env);
  if (!parsed.ok) refuse(parsed.error);
  const config = parsed.config;
  const logger = createLogger(config.logLevel);
  const store = await open(config);
  const seeded = await store.seedDemo();
  // Default metrics include the event-loop delay percentiles the benchmarks report.
  const { app, realtime } = createApp({ config, store, logger, metrics: new Metrics({ defaultMetrics: true }) });

  const server: Server = createServer(app.callback());
  realtime.attach(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      err.code === 'EADDRINUSE' ? refuse(`PORT ${config.port} is already in use on ${config.host}`) : reject(err),
    );
    server.listen(config.port, config.host, resolve);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;

  // A fresh demo token each start: tokens are stored hashed, so one is shown only when made.
  const demo = await store.ensureAccount('demo');
  const { token, selector, verifierHash } = issueToken();
  await store.addToken(demo.id, selector, verifierHash);
  logger.info({ url, seeded }, 'listening');
  process.stdout.write(
    `\norderline listening on ${url}\n` +
      `  demo token (account "demo"): ${token}\n` +
      `  try: curl -H "Authorization: Bearer ${token}" ${url}/orders\n\n`,
  );

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'shutting down: no new connections, finishing in-flight requests');
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    // Stream clients are told to reconnect (SSE retry: then end; WebSocket 1001) so close() can finish.
    realtime.close();
    server.close(() => {
      store
        .close()
        .catch((err) => logger.error({ err }, 'store close failed'))
        .finally(() => process.exit(0));
    });
    server.closeIdleConnections();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err) => {
  process.stderr.write(`orderline: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
