/**
 * Configuration from the environment (PORT, HOST, METRICS_PORT, DATA_DIR, DATABASE_URL, REDIS_URL, WORKERS...). Parsing is a pure
 * function returning a value or one error line naming the variable, so `main.ts`
 * can refuse bad config with exactly that line and a non-zero exit.
 */
import { DEFAULT_BODY_LIMIT, parseCorsAllowHeaders, parseCorsOrigins } from './http';
import type { RealtimeConfig } from './realtime';

export interface Config {
  port: number;
  host: string;
  /**
   * The public listener's queue of connections the kernel has accepted and the process has
   * not yet taken (LISTEN_BACKLOG; the kernel caps it at net.core.somaxconn). Node's 511 overflows
   * when thousands of clients reconnect at once: the kernel drops their handshakes and they
   * retry a second or more later, requests of connected clients' new connections included.
   */
  listenBacklog: number;
  dataDir: string;
  databaseUrl?: string;
  /** A PostgreSQL schema of its own (several deployments, or tests, in one database). */
  databaseSchema?: string;
  /** PostgreSQL: how long one statement may take before the request is answered 503 (PostgresStoreOptions.queryTimeoutMillis). */
  databaseQueryTimeoutMs: number;
  redisUrl?: string;
  /**
   * Load the demo data set (once) and print a demo token the first time: on by default for
   * the embedded store (a newcomer's `npm start`), off with DATABASE_URL (a real deployment)
   * unless DEMO=1. A restart never mints another token: `npm run token` does, when asked.
   */
  demo: boolean;
  /** Namespace of every Redis channel and key (several deployments, or tests, on one Redis). */
  redisPrefix: string;
  workers: number;
  logLevel: string;
  production: boolean;
  bodyLimitBytes: number;
  /** Seconds a client has to send a whole request, head and body (its head: at most 20 s of them); then 408 and the connection closes (http/server.ts). */
  requestTimeoutS: number;
  /** How long a token's account is cached in process (0 = no cache). */
  authCacheTtlMs: number;
  /** SQLite `synchronous`: NORMAL survives process crashes (kill -9), FULL also power loss. */
  sqliteSynchronous: 'normal' | 'full';
  /** SQLite: how long a write waits for another process's lock on the file before it is answered 503 (SqliteStore's `busyTimeoutMs`). */
  sqliteBusyTimeoutMs: number;
  /** Origins whose browser scripts may call the API (CORS); empty = none (the default). */
  corsOrigins: string[];
  /** Request headers a CORS preflight allows besides the service's own (CORS_ALLOW_HEADERS). */
  corsAllowHeaders: string[];
  graphql: {
    maxDepth: number;
    maxCost: number;
    showCost: boolean;
    persisted: 'apq' | 'allowlist';
    /** Parser token limit: a huge document is refused while parsing, before validation. */
    maxTokens: number;
    /** Entries the in-process APQ registry keeps (least recently used evicted first). */
    apqCacheSize: number;
    /** Seconds a registered APQ text lives in the shared (Redis) registry. */
    apqTtlS: number;
    /** Query texts whose parse and static validation are cached; 0 = off. */
    documentCacheSize: number;
    /** Points of the per-account cost budget (a leaky bucket); 0 = off. */
    costBudget: number;
    /** Points restored per second to the cost budget. */
    costRestoreRate: number;
  };
  /** Per-account REST token bucket: `rps` tokens per second, `burst` at most; rps 0 = off. */
  rateLimit: { rps: number; burst: number };
  /** Seconds an Idempotency-Key and its stored response are kept. */
  idempotencyTtlS: number;
  /**
   * The operator listener (http/metricsListener.ts): `/metrics` is served there, never on the
   * public port, because it names accounts. Loopback by default; anywhere else it needs a token.
   */
  metrics: {
    host: string;
    /** 0 = any free port (tests). */
    port: number;
    /** When set, a scrape must send `Authorization: Bearer <token>`; required off loopback. */
    token?: string;
    /** Accounts with a series of their own in `orderline_deprecated_field_reads_total`; the rest share `account="(other)"`. */
    topAccounts: number;
    /** How often the per-account read counts are written to the store (and at shutdown). */
    flushIntervalS: number;
  };
  /** The realtime settings, as the realtime module declares (and documents) them. */
  realtime: RealtimeConfig;
}

/**
 * Bytes all replay rings of an instance may hold together (REPLAY_MAX_BYTES): about 1,000
 * topics with full default rings (300 events of about 0.8 KB), or many more shallower
 * ones; over it the largest rings lose their oldest events (a deeper resume resyncs).
 */
export const DEFAULT_REPLAY_MAX_BYTES = 256 * 1024 * 1024;

export type ConfigResult = { ok: true; config: Config } | { ok: false; error: string };

type Env = Record<string, string | undefined>;

class ConfigError extends Error {}

/** The most events one topic's replay ring may hold (REPLAY_RATE x REPLAY_WINDOW_S; REPLAY_MAX_BYTES bounds all rings' bytes). */
const MAX_RING_EVENTS = 10_000_000;

function int(env: Env, name: string, def: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

function corsAllowHeaders(env: Env): string[] {
  const parsed = parseCorsAllowHeaders(env.CORS_ALLOW_HEADERS);
  if (!parsed.ok) throw new ConfigError(parsed.error);
  return parsed.headers;
}

function corsOrigins(env: Env): string[] {
  const parsed = parseCorsOrigins(env.CORS_ORIGINS);
  if (!parsed.ok) throw new ConfigError(parsed.error);
  return parsed.origins;
}

function oneOf<T extends string>(env: Env, name: string, def: T, allowed: readonly T[]): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  if (!(allowed as readonly string[]).includes(raw)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  return raw as T;
}

/** Whether `raw` has the `//` of an authority after its scheme (`postgres:///db`, a socket's empty host, has one). */
const hasAuthority = (raw: string, u: URL): boolean => raw.slice(u.protocol.length).startsWith('//');

/**
 * A URL for messages, printed and logged: only what locates the server (scheme, user, host,
 * port, path), the password as `***`. No query (libpq and ioredis take `?password=`) and no
 * fragment; a URL with no authority (`app:secret@host/db`, its scheme left out, or
 * `postgres:/u:secret@host`, a slash short) shows its scheme alone, since what follows may
 * be a password the parser did not recognise as one.
 */
export function redactUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return '<unparseable URL>';
  }
  if (!hasAuthority(url, u)) return `${u.protocol}<not shown>`;
  const user = u.username !== '' || u.password !== '' ? `${u.username}${u.password !== '' ? ':***' : ''}@` : '';
  // A database name is a plain word; any other path (`/db;password=...`) may hold what it should not.
  const path = /^(\/[\w.-]*)?$/.test(u.pathname) ? u.pathname : '/<not shown>'; // none at all: redis://host:port
  return `${u.protocol}//${user}${u.host}${path}${u.search !== '' ? '?<not shown>' : ''}`;
}

function matching(env: Env, name: string, pattern: RegExp, what: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (!pattern.test(raw)) throw new ConfigError(`${name} must be ${what}, got "${raw}"`);
  return raw;
}

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ConfigError(`${name} is not a URL`);
  }
  // `postgres:/host/db` or `postgres:host` parses, with no host: the scheme's `//` is required too.
  if (!protocols.includes(u.protocol) || !hasAuthority(raw, u)) throw new ConfigError(`${name} must start with ${protocols.map((p) => `${p}//`).join(' or ')}, got ${redactUrl(raw)}`);
  return raw;
}

/** A loopback address or name: only processes on this machine reach a listener bound to it. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

function metricsConfig(env: Env, port: number): Config['metrics'] {
  const host = env.METRICS_HOST || '127.0.0.1';
  const metricsPort = int(env, 'METRICS_PORT', 9464, 0, 65535);
  if (metricsPort !== 0 && metricsPort === port) throw new ConfigError(`METRICS_PORT (${metricsPort}) must differ from PORT: metrics are served on a listener of their own`);
  // Visible ASCII, long enough not to be guessed; never echoed in the message.
  const raw = env.METRICS_TOKEN;
  if (raw !== undefined && raw !== '' && !/^[\x21-\x7e]{16,256}$/.test(raw)) throw new ConfigError('METRICS_TOKEN must be 16 to 256 visible ASCII characters (the value is not shown)');
  const token = raw || undefined;
  if (!token && !isLoopback(host)) {
    throw new ConfigError(`METRICS_HOST=${host} needs METRICS_TOKEN: metrics name accounts, so off loopback a scrape must authenticate`);
  }
  return {
    host,
    port: metricsPort,
    token,
    topAccounts: int(env, 'METRICS_TOP_ACCOUNTS', 20, 0, 1000),
    flushIntervalS: int(env, 'FIELD_READS_FLUSH_S', 10, 1, 3600),
  };
}

/**
 * A variable set where it can have no effect is refused like a bad value: it is a typo or a
 * misunderstanding of the setup (`DATABASE_SCHEMA` with the URL's variable misspelled would
 * start a production instance on a local SQLite file, with the demo data).
 */
function refuseIneffective(env: Env, config: Config): void {
  const set = (name: string) => env[name] !== undefined && env[name] !== '';
  if (set('DATABASE_SCHEMA') && !config.databaseUrl) throw new ConfigError('DATABASE_SCHEMA needs DATABASE_URL: without it the store is the SQLite file in DATA_DIR');
  if (set('REDIS_PREFIX') && !config.redisUrl) throw new ConfigError('REDIS_PREFIX needs REDIS_URL: without it nothing is kept in Redis');
  if (set('SQLITE_SYNCHRONOUS') && config.databaseUrl) throw new ConfigError('SQLITE_SYNCHRONOUS is for the SQLite file: with DATABASE_URL there is none');
  if (set('SQLITE_BUSY_TIMEOUT_MS') && config.databaseUrl) throw new ConfigError('SQLITE_BUSY_TIMEOUT_MS is for the SQLite file: with DATABASE_URL there is none');
  if (set('RATE_LIMIT_BURST') && config.rateLimit.rps === 0) throw new ConfigError('RATE_LIMIT_BURST needs RATE_LIMIT_RPS above 0: the rate limit is off');
  if (set('DATABASE_QUERY_TIMEOUT_MS') && !config.databaseUrl) throw new ConfigError('DATABASE_QUERY_TIMEOUT_MS needs DATABASE_URL: it bounds PostgreSQL queries, and the store is the SQLite file');
  if (set('GRAPHQL_APQ_TTL_S') && !config.redisUrl) throw new ConfigError("GRAPHQL_APQ_TTL_S needs REDIS_URL: it is the Redis registry's expiry; the in-process one keeps the most recently used");
  if (set('GRAPHQL_COST_RESTORE_RATE') && config.graphql.costBudget === 0) throw new ConfigError('GRAPHQL_COST_RESTORE_RATE needs GRAPHQL_COST_BUDGET above 0: the cost budget is off');
}

export function parseConfig(given: Env): ConfigResult {
  try {
    const env = withoutControlCharacters(given);
    const workers = int(env, 'WORKERS', 1, 1, 256);
    const redisUrl = url(env, 'REDIS_URL', ['redis:', 'rediss:']);
    if (workers > 1 && !redisUrl) {
      throw new ConfigError(`WORKERS=${workers} needs REDIS_URL: workers share fan-out (news of each write), the APQ registry and the rate-limit buckets through Redis`);
    }
    const databaseUrl = url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']);
    const rps = int(env, 'RATE_LIMIT_RPS', 0, 0, 1_000_000);
    const maxCost = int(env, 'GRAPHQL_MAX_COST', 1000, 1, 10_000_000);
    const costBudget = int(env, 'GRAPHQL_COST_BUDGET', 0, 0, 1_000_000_000);
    if (costBudget > 0 && costBudget < maxCost) {
      throw new ConfigError(`GRAPHQL_COST_BUDGET (${costBudget}) must be 0 (off) or at least GRAPHQL_MAX_COST (${maxCost}): a query the ceiling admits must fit a full budget`);
    }
    const port = int(env, 'PORT', 3000, 0, 65535);
    const config: Config = {
      port,
      host: env.HOST || '127.0.0.1',
      listenBacklog: int(env, 'LISTEN_BACKLOG', 4096, 1, 65535),
      dataDir: env.DATA_DIR || './data',
      databaseUrl,
      demo: oneOf(env, 'DEMO', databaseUrl ? '0' : '1', ['0', '1']) === '1',
      // PostgreSQL refuses to create pg_*, and information_schema is its own: the service's tables do not belong there.
      databaseSchema: matching(env, 'DATABASE_SCHEMA', /^(?!pg_)(?!information_schema$)[a-z_][a-z0-9_]{0,62}$/, "a lowercase identifier, not pg_* or information_schema (PostgreSQL's own)"),
      databaseQueryTimeoutMs: int(env, 'DATABASE_QUERY_TIMEOUT_MS', 10_000, 100, 600_000),
      redisUrl,
      redisPrefix: matching(env, 'REDIS_PREFIX', /^[A-Za-z0-9_:.-]{1,64}$/, 'up to 64 of A-Z a-z 0-9 _ : . -') ?? 'orderline:',
      workers,
      logLevel: oneOf(env, 'LOG_LEVEL', 'info', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
      production: env.NODE_ENV === 'production',
      bodyLimitBytes: int(env, 'BODY_LIMIT_BYTES', DEFAULT_BODY_LIMIT, 1024, 16 * 1024 * 1024),
      requestTimeoutS: int(env, 'REQUEST_TIMEOUT_S', 30, 1, 3600),
      authCacheTtlMs: int(env, 'AUTH_CACHE_TTL_MS', 5000, 0, 3_600_000),
      sqliteSynchronous: oneOf(env, 'SQLITE_SYNCHRONOUS', 'normal', ['normal', 'full'] as const),
      sqliteBusyTimeoutMs: int(env, 'SQLITE_BUSY_TIMEOUT_MS', 5000, 0, 600_000),
      corsOrigins: corsOrigins(env),
      corsAllowHeaders: corsAllowHeaders(env),
      graphql: {
        maxDepth: int(env, 'GRAPHQL_MAX_DEPTH', 4, 1, 100),
        maxCost,
        showCost: oneOf(env, 'GRAPHQL_SHOW_COST', '0', ['0', '1']) === '1',
        persisted: oneOf(env, 'GRAPHQL_PERSISTED', 'apq', ['apq', 'allowlist'] as const),
        maxTokens: int(env, 'GRAPHQL_MAX_TOKENS', 2000, 100, 1_000_000),
        apqCacheSize: int(env, 'GRAPHQL_APQ_CACHE_SIZE', 10_000, 1, 10_000_000),
        apqTtlS: int(env, 'GRAPHQL_APQ_TTL_S', 86_400, 1, 31_536_000),
        documentCacheSize: int(env, 'GRAPHQL_DOCUMENT_CACHE_SIZE', 1000, 0, 1_000_000),
        costBudget,
        costRestoreRate: int(env, 'GRAPHQL_COST_RESTORE_RATE', 100, 1, 1_000_000_000),
      },
      rateLimit: { rps, burst: int(env, 'RATE_LIMIT_BURST', Math.max(1, 2 * rps), 1, 1_000_000) },
      idempotencyTtlS: int(env, 'IDEMPOTENCY_TTL_S', 86_400, 1, 31_536_000),
      metrics: metricsConfig(env, port),
      realtime: {
        replayRate: int(env, 'REPLAY_RATE', 1, 1, 100_000),
        replayWindowS: int(env, 'REPLAY_WINDOW_S', 300, 1, 86_400),
        replayMaxBytes: int(env, 'REPLAY_MAX_BYTES', DEFAULT_REPLAY_MAX_BYTES, 64 * 1024, 2 ** 40),
        maxBufferBytes: int(env, 'MAX_BUFFER_BYTES', 1024 * 1024, 1024, 1024 * 1024 * 1024),
        writeDelayMs: int(env, 'WRITE_DELAY_MS', 0, 0, 1000),
        sseHeartbeatS: int(env, 'SSE_HEARTBEAT_S', 15, 1, 3600),
        wsHeartbeatS: int(env, 'WS_HEARTBEAT_S', 30, 0, 3600),
        maxStreamsPerAccount: int(env, 'MAX_STREAMS_PER_ACCOUNT', 1000, 0, 1_000_000),
        maxSubscriptionsPerConnection: int(env, 'MAX_SUBSCRIPTIONS_PER_CONNECTION', 100, 1, 100_000),
        streamTokenRecheckS: int(env, 'STREAM_TOKEN_RECHECK_S', 30, 0, 86_400),
        // From the reconnect storm measured at 10,000 subscribers (bench/storm.ts, BENCHMARKS.md): an
        // instance here admits about 3,700 subscriptions/s with the limiter lifted, but its
        // connected clients' requests then wait seconds; 500/s (about a seventh of that) brings
        // 10,000 back in about 20 s once the new instance listens (N / rate), within 25 s of a
        // kill -9 with room for the restart (21.8 s measured, against 27.7 s at 400/s that day).
        acceptRate: int(env, 'ACCEPT_RATE', 500, 1, 1_000_000),
        acceptBurst: int(env, 'ACCEPT_BURST', 1000, 1, 1_000_000),
      },
    };
    refuseIneffective(env, config);
    const ringSlots = config.realtime.replayRate * config.realtime.replayWindowS;
    if (ringSlots > MAX_RING_EVENTS) throw new ConfigError(`REPLAY_RATE x REPLAY_WINDOW_S (${ringSlots}) must be at most ${MAX_RING_EVENTS}: events one topic's ring may hold`);
    return { ok: true, config };
  } catch (err) {
    if (err instanceof ConfigError) return { ok: false, error: err.message };
    throw err;
  }
}

/**
 * `env` as the parsers read it, where a variable read whose value holds a control character (a
 * line break pasted with it) is refused by name: parsers would trim it (`PORT=$'3000\n'`) or a
 * URL parser drop it silently (`DATABASE_URL=...\nx` naming another database), and a path would
 * take it into a directory's name. Only the variables read are judged (a shell exports others
 * that hold line breaks).
 */
function withoutControlCharacters(env: Env): Env {
  return new Proxy(env, {
    get(target, name, receiver): unknown {
      const value: unknown = Reflect.get(target, name, receiver);
      // eslint-disable-next-line no-control-regex -- control characters are what this looks for
      if (typeof name === 'string' && typeof value === 'string' && /[\u0000-\u001f\u007f]/.test(value)) {
        throw new ConfigError(`${name} holds a control character (a line break or a tab): give the value alone`);
      }
      return value;
    },
  });
}
