/**
 * Startup steps shared by a lone server, a cluster worker and the cluster primary:
 * open what the configuration names, or refuse with one line (exit 2) naming the
 * variable, never printing a password.
 */
import type { Server } from 'node:http';
import type { Config } from './config';
import { redactUrl } from './config';
import type { Metrics } from './http';
import { openShared, type Shared } from './deployment';
import { DeploymentClashError } from './bus';
import { issueToken, openStore, type Store } from './store';

export function exitRefusing(message: string): never {
  process.stderr.write(`orderline: ${oneLine(message)}\n`);
  process.exit(2);
}

/** `text` on one line: a control character it quotes from a value (a newline in a variable) is written as its escape. */
export const oneLine = (text: string): string => [...text].map((c) => (c < ' ' ? JSON.stringify(c).slice(1, -1) : c === '\u007f' ? '\\u007f' : c)).join('');

/** The longest wait between a cluster worker's attempts to reach PostgreSQL or Redis (untilReachable). */
export const REACH_RETRY_MAX_MS = 30_000;

/**
 * How a process treats PostgreSQL or Redis not answering at its start. A lone server, and a
 * cluster's primary, refuse (exit 2: the URL may be wrong, and a supervisor says so). A
 * cluster worker waits: the primary reached both before forking it, so for a worker
 * (above all one replacing a worker that died during an outage) an unreachable dependency
 * is an outage, and an exit 2 would stop the whole cluster, the workers still serving
 * included (cluster.ts). It tries again after 1 s, doubling up to REACH_RETRY_MAX_MS,
 * telling `onRetry` of each failure; it listens once both answer.
 */
export interface Unreachable {
  onRetry: (what: string, err: unknown, delayMs: number) => void;
  /** Waits `ms` (tests pass a clock of their own). */
  sleep?: (ms: number) => Promise<void>;
}

/** What a connection to PostgreSQL or Redis tells its owner: each failure, and the end of an outage. */
export interface DependencyEvents<E = unknown> {
  error: (err: E) => void;
  recovered: () => void;
  /** Redis only: a message on the bus's channels that is not the bus's, dropped (Redis itself is fine). */
  dropped?: (err: Error) => void;
  /** Redis only: while running, the prefix found claimed by another deployment (a setup to fix, not an outage). */
  clash?: (err: DeploymentClashError) => void;
}

/** `open` until it resolves, with the waits `Unreachable` describes. */
export async function untilReachable<T>(what: string, open: () => Promise<T>, wait: Unreachable): Promise<T> {
  const sleep = wait.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  for (let delayMs = 1000; ; delayMs = Math.min(delayMs * 2, REACH_RETRY_MAX_MS)) {
    try {
      return await open();
    } catch (err) {
      wait.onRetry(what, err, delayMs);
      await sleep(delayMs);
    }
  }
}

/**
 * Opens and migrates the configured store; `database` hears the PostgreSQL pool's errors (a
 * dropped idle connection, an unreachable server) and the end of an outage. `wait`: a
 * cluster worker's (see Unreachable).
 */
export async function openConfiguredStore(config: Config, database?: DependencyEvents<Error>, wait?: Unreachable): Promise<Store> {
  let store: Store;
  const open = () =>
    openStore({
      dataDir: config.dataDir,
      databaseUrl: config.databaseUrl,
      databaseSchema: config.databaseSchema,
      databaseQueryTimeoutMs: config.databaseQueryTimeoutMs,
      sqliteSynchronous: config.sqliteSynchronous,
      sqliteBusyTimeoutMs: config.sqliteBusyTimeoutMs,
      onDatabaseError: database?.error,
      onDatabaseRecovered: database?.recovered,
    });
  try {
    store = config.databaseUrl && wait ? await untilReachable('DATABASE_URL', open, wait) : await open();
  } catch (err) {
    // DATABASE_URL must answer before we start; the message names the URL without its password.
    if (config.databaseUrl) exitRefusing(`DATABASE_URL ${redactUrl(config.databaseUrl)} is unreachable: ${(err as Error).message || String(err)}`);
    // DATA_DIR that cannot hold the SQLite file (a file by that name, no permission, a read-only place).
    exitRefusing(`DATA_DIR ${config.dataDir} cannot hold the database: ${(err as Error).message || String(err)}`);
  }
  await store.migrate();
  return store;
}

/** The bus, APQ registry and rate-limit buckets (Redis when configured); `wait`: a cluster worker's (see Unreachable). */
export async function openConfiguredShared(config: Config, metrics: Metrics, redis: DependencyEvents, store: Pick<Store, 'deploymentId'>, wait?: Unreachable): Promise<Shared> {
  const deployment = await store.deploymentId();
  const open = () =>
    openShared(config, metrics, redis, deployment).catch((err: unknown) => {
      // Another deployment's prefix is a configuration to fix, not an outage to wait out.
      if (err instanceof DeploymentClashError) exitRefusing(err.message);
      throw err;
    });
  try {
    return wait && config.redisUrl ? await untilReachable('REDIS_URL', open, wait) : await open();
  } catch (err) {
    exitRefusing(`REDIS_URL ${redactUrl(config.redisUrl ?? '')} is unreachable: ${(err as Error).message || String(err)}`);
  }
}

/**
 * The demo data policy (Config.demo): loads the demo data set when it is on and the store has
 * none yet, and only then mints a demo token (tokens are stored hashed: one is shown only when
 * made). A restart finds the data loaded and mints nothing; `npm run token` makes another.
 */
export async function prepareDemo(config: Config, store: Store): Promise<{ seeded: boolean; token: string | null }> {
  if (!config.demo) return { seeded: false, token: null };
  const seeded = await store.seedDemo();
  if (!seeded) return { seeded, token: null };
  const demo = await store.ensureAccount('demo');
  const { token, selector, verifierHash } = issueToken();
  await store.addToken(demo.id, selector, verifierHash);
  return { seeded, token };
}

/**
 * Listens on `port` (0 = any free one) at `host` and resolves with the port bound; a port in
 * use is refused with one line naming `variable` (exit 2). `backlog`: the kernel's accept
 * queue (Node's default, 511, when not given).
 */
export async function listenOrRefuse(server: Server, port: number, host: string, variable: 'PORT' | 'METRICS_PORT', backlog?: number): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE') return exitRefusing(`${variable} ${port} is already in use on ${host}`);
      // The host names no address of this machine (unresolvable, or another machine's): the host variable's fault.
      const hostVariable = variable === 'PORT' ? 'HOST' : 'METRICS_HOST';
      if (err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN') return exitRefusing(`${hostVariable} ${host} does not resolve to an address`);
      if (err.code === 'EADDRNOTAVAIL') return exitRefusing(`${hostVariable} ${host} is not an address of this machine`);
      reject(err);
    });
    server.listen({ port, host, backlog }, resolve);
  });
  const address = server.address();
  return typeof address === 'object' && address ? address.port : port;
}

export const urlOf = (host: string, port: number): string => `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

/**
 * What a start prints for the person who started it: the public URL, where the operators'
 * metrics are, and the demo token if one was minted. On stderr, whatever LOG_LEVEL says: stdout
 * carries only the JSON log lines, for a log shipper to read as they come.
 */
export const banner = (url: string, metricsUrl: string, token: string | null, extra = ''): string =>
  `\norderline listening on ${url}${extra}\n` +
  `  metrics (operators only, not on the public port): ${metricsUrl}/metrics\n` +
  (token ? `  demo token (account "demo"): ${token}\n  try: curl -H "Authorization: Bearer ${token}" ${url}/orders\n\n` : `  a token for an account: npm run token -- --account <name>\n\n`);
