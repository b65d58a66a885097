/** The store capability's public entry: the port, its adapters and token helpers. */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { SqliteStore } from './sqlite/SqliteStore';
import type { Store } from './store';

export type * from './store';
export { SqliteStore } from './sqlite/SqliteStore';
export { issueToken, parseToken, hashVerifier, verifierMatches, type IssuedToken } from './tokens';

export interface StoreConfig {
  /** Where the embedded SQLite file lives (created if missing). */
  dataDir: string;
  /** A PostgreSQL URL selects the PostgreSQL adapter (not implemented yet: throws). */
  databaseUrl?: string;
  /** SQLite `synchronous`; the adapter's default is `full` (see SqliteStore). */
  sqliteSynchronous?: 'normal' | 'full';
}

/**
 * The store the configuration names: today the embedded store on
 * `${dataDir}/orderline.sqlite`. Throws when `databaseUrl` is set, so a deployment
 * that asked for PostgreSQL never silently writes to a local file instead.
 */
export function openStore(config: StoreConfig): Store {
  if (config.databaseUrl) throw new Error('PostgreSQL store not implemented yet');
  mkdirSync(config.dataDir, { recursive: true });
  return new SqliteStore(join(config.dataDir, 'orderline.sqlite'), config.sqliteSynchronous);
}
