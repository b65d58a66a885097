/** The store capability's public entry: the ports, their adapters, the store's errors and token helpers. */
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { SqliteStore } from './sqlite/SqliteStore';
import { openPostgresStore } from './postgres/PostgresStore';
import type { Store } from './store';

export type * from './store';
export { SqliteStore } from './sqlite/SqliteStore';
export { PostgresStore, openPostgresStore } from './postgres/PostgresStore';
export { MAX_BATCH } from './rows';
export { IdempotencyLostError } from './idempotency';
export { StoreInputError, StoreUnavailableError, type StoreEngine, type StoreInputReason } from './errors';
export { issueToken, parseToken, hashVerifier, verifierMatches, type IssuedToken } from './tokens';

export interface StoreConfig {
  /** Where the embedded SQLite file lives (created if missing). */
  dataDir: string;
  /** A PostgreSQL URL selects the PostgreSQL adapter. */
  databaseUrl?: string;
  /** PostgreSQL: a schema of its own (see PostgresStoreOptions). */
  databaseSchema?: string;
  /** PostgreSQL: how long one statement may take (PostgresStoreOptions.queryTimeoutMillis; its default when absent). */
  databaseQueryTimeoutMs?: number;
  /** SQLite `synchronous`; the adapter's default is `full` (see SqliteStore). */
  sqliteSynchronous?: 'normal' | 'full';
  /** SQLite: how long a statement waits for another connection's lock (SqliteStore's `busyTimeoutMs`; its default when absent). */
  sqliteBusyTimeoutMs?: number;
  /** PostgreSQL: told of each error the pool raises outside a query (see PostgresStoreOptions.onError); ignored when absent. */
  onDatabaseError?: (err: Error) => void;
  /** PostgreSQL: told when a statement succeeds after an outage (PostgresStoreOptions.onRecovered). */
  onDatabaseRecovered?: () => void;
}

/**
 * `mkdir -p`, one level at a time. Node 20's `mkdirSync(dir, { recursive: true })` never
 * returns when the kernel answers ENOENT for a parent that exists (a path under /proc):
 * each level here is a plain mkdir, so such a path throws that ENOENT instead.
 */
function makeDirectory(dir: string): void {
  const missing: string[] = [];
  for (let d = resolve(dir); !existsSync(d); d = dirname(d)) {
    missing.push(d);
    if (dirname(d) === d) break;
  }
  for (const d of missing.reverse()) {
    try {
      mkdirSync(d);
    } catch (err) {
      // Another process (a cluster worker, a second instance) made it meanwhile: as mkdir -p, fine.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}

/**
 * The store the configuration names: PostgreSQL when `databaseUrl` is set (checked
 * reachable first: rejects with the reason, never silently falls back to a local
 * file), else the embedded store on `${dataDir}/orderline.sqlite`. Not migrated yet.
 */
export async function openStore(config: StoreConfig): Promise<Store> {
  if (config.databaseUrl)
    return openPostgresStore(config.databaseUrl, { schema: config.databaseSchema, onError: config.onDatabaseError, onRecovered: config.onDatabaseRecovered, queryTimeoutMillis: config.databaseQueryTimeoutMs });
  makeDirectory(config.dataDir);
  return new SqliteStore(join(config.dataDir, 'orderline.sqlite'), config.sqliteSynchronous, config.sqliteBusyTimeoutMs);
}
