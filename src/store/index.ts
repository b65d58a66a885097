/** The store capability's public entry: the port, its adapters and token helpers. */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { SqliteStore } from './sqlite/SqliteStore';
import type { Store } from './store';

export type * from './store';
export { SqliteStore } from './sqlite/SqliteStore';
export { generateToken, hashToken } from './tokens';

/** The embedded store on `${dataDir}/orderline.sqlite` (created if missing). */
export function openStore(config: { dataDir: string; sqliteSynchronous?: 'normal' | 'full' }): Store {
  mkdirSync(config.dataDir, { recursive: true });
  return new SqliteStore(join(config.dataDir, 'orderline.sqlite'), config.sqliteSynchronous);
}
