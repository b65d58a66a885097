/**
 * Starts the real app on an ephemeral port over a real SQLite file in a temp dir, with
 * two accounts and a token each. Every integration test talks HTTP to it.
 */
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Koa from 'koa';
import pino from 'pino';
import { createApp, type AppDeps } from '../../src/app';
import { parseConfig, type Config } from '../../src/config';
import { Client } from 'pg';
import { issueToken, PostgresStore, SqliteStore, type Account, type Store } from '../../src/store';
import { openShared, type Shared } from '../../src/deployment';

/**
 * TEST_STORE=postgres runs the same integration tests on PostgreSQL (DATABASE_TEST_URL,
 * default the local `test` database), each server on a fresh schema dropped at close.
 */
const PG_URL = process.env.DATABASE_TEST_URL || 'postgres://postgres@127.0.0.1:5432/test';
export const TEST_STORE = process.env.TEST_STORE === 'postgres' ? 'postgres' : 'sqlite';
/**
 * TEST_BUS=redis runs them on the scaled-out bus and APQ registry (REDIS_TEST_URL,
 * default the local Redis), each server under a prefix of its own.
 */
const REDIS_URL = process.env.REDIS_TEST_URL || 'redis://127.0.0.1:6379';
export const TEST_BUS = process.env.TEST_BUS === 'redis' ? 'redis' : 'memory';

async function openTestStore(dir: string): Promise<{ store: Store; drop: () => Promise<void> }> {
  if (TEST_STORE === 'sqlite') return { store: new SqliteStore(join(dir, 'orderline.sqlite')), drop: async () => undefined };
  const schema = `orderline_it_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  return {
    store: new PostgresStore(PG_URL, { schema }),
    drop: async () => {
      const admin = new Client({ connectionString: PG_URL });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    },
  };
}
import { createHttpServer, Metrics } from '../../src/http';
import type { AuthCache, FieldReadTally } from '../../src/http';
import type { Realtime } from '../../src/realtime';

export interface TestServer {
  url: string;
  store: Store;
  metrics: Metrics;
  /** The operator listener's base URL (its own server, as METRICS_PORT serves it): `${metricsUrl}/metrics`. */
  metricsUrl: string;
  /** GET of the operator listener's /metrics: the exposition text (throws unless 200). */
  scrape(): Promise<string>;
  /** Deprecated-field reads per account (flush explicitly: no timer runs in tests). */
  fieldReads: FieldReadTally;
  authCache: AuthCache;
  dir: string;
  alice: { account: Account; token: string };
  bob: { account: Account; token: string };
  realtime: Realtime;
  /** The Koa app behind `url`, for what the contracts do not declare (the pipeline serves the rest). */
  app: Koa;
  /** The routes mounted on `app` that the pipeline answers for (what main.ts warns of at start). */
  unreachableRoutes: ReturnType<typeof createApp>['unreachableRoutes'];
  /** A new bearer token for the named account, created if needed (e.g. the demo data's `demo`). */
  tokenFor(name: string): Promise<string>;
  /** fetch with Alice's token unless headers say otherwise. */
  fetch(path: string, init?: RequestInit & { as?: 'alice' | 'bob' | 'anonymous' }): Promise<Response>;
  /** The TCP connections the server holds open (net.Server getConnections): upgraded and refused sockets included. */
  connections(): Promise<number>;
  /** The most bytes any one of the server's connections holds in its socket's write buffer (user space, not yet taken by the kernel). */
  mostHeldBytes(): number;
  close(): Promise<void>;
}

/**
 * `make` builds the app (default: this checkout's `createApp`); a test that serves a
 * modified copy of the service (a new contract operation) passes the copy's.
 */
export async function startTestServer(env: Record<string, string> = {}, deps: Pick<AppDeps, 'manifest' | 'now' | 'buckets'> = {}, make: (deps: AppDeps) => ReturnType<typeof createApp> = createApp): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'orderline-test-'));
  const redis = TEST_BUS === 'redis' ? { REDIS_URL, REDIS_PREFIX: `orderline-it:${process.pid}:${Math.random().toString(36).slice(2, 10)}:` } : {};
  const parsed = parseConfig({ DATA_DIR: dir, ...redis, ...env });
  if (!parsed.ok) throw new Error(parsed.error);
  const config: Config = parsed.config;
  const { store, drop } = await openTestStore(dir);
  await store.migrate();
  const mk = async (name: string) => {
    const account = await store.ensureAccount(name);
    const { token, selector, verifierHash } = issueToken();
    await store.addToken(account.id, selector, verifierHash);
    return { account, token };
  };
  const alice = await mk('alice');
  const bob = await mk('bob');
  const shared: Shared = await openShared(config, new Metrics(), { error: () => undefined }, await store.deploymentId());
  const { listener, metricsListener, fieldReads, app, metrics, authCache, realtime, finalizer, unreachableRoutes } = make({
    config,
    store,
    logger: pino({ level: 'silent' }),
    bus: shared.bus,
    registry: shared.registry,
    buckets: shared.buckets,
    ...deps,
  });
  const server: Server = createHttpServer(listener, config.bodyLimitBytes, { requestTimeoutMs: config.requestTimeoutS * 1000 }, (req, status, id, route, line) => finalizer.rawAnswer(req, status, id, route, line));
  realtime.attach(server);
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const url = `http://127.0.0.1:${port}`;
  const operator: Server = createServer(metricsListener);
  await new Promise<void>((r) => operator.listen(0, '127.0.0.1', r));
  const metricsUrl = `http://127.0.0.1:${(operator.address() as { port: number }).port}`;
  return {
    url,
    store,
    metrics,
    metricsUrl,
    async scrape() {
      const res = await fetch(`${metricsUrl}/metrics`, { headers: config.metrics.token ? { authorization: `Bearer ${config.metrics.token}` } : {} });
      if (res.status !== 200) throw new Error(`scrape: ${res.status} ${await res.text()}`);
      return res.text();
    },
    fieldReads,
    authCache,
    dir,
    alice,
    bob,
    async tokenFor(name) {
      return (await mk(name)).token;
    },
    fetch(path, init = {}) {
      const { as = 'alice', ...rest } = init;
      const headers = new Headers(rest.headers);
      if (as !== 'anonymous' && !headers.has('authorization')) headers.set('authorization', `Bearer ${as === 'alice' ? alice.token : bob.token}`);
      return fetch(url + path, { ...rest, headers });
    },
    realtime,
    app,
    unreachableRoutes,
    connections: () => new Promise<number>((resolve, reject) => server.getConnections((err, n) => (err ? reject(err) : resolve(n)))),
    mostHeldBytes: () => Math.max(0, ...[...sockets].map((s) => s.writableLength)),
    async close() {
      realtime.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      operator.closeAllConnections();
      await new Promise<void>((r) => operator.close(() => r()));
      await store.close();
      await shared.bus.close();
      await drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
