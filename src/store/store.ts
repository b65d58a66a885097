/**
 * The Store: everything orderline keeps durably, as the intersection of its ports,
 * one concern each (./ports):
 * - `Orders`: orders and their events (orders.ts);
 * - `Accounts`: accounts, pins and tokens (accounts.ts);
 * - `IdempotencyKeys`: claimed and completed idempotency keys (idempotencyKeys.ts);
 * - `SocialGraph`: users, friends, posts, comments (socialGraph.ts);
 * - `FieldReadCounts`: deprecated-field reads per account and day (fieldReadCounts.ts);
 * - `StoreLifecycle`: migrate, seedDemo, ping, close (lifecycle.ts).
 * A consumer that needs one concern takes that port.
 *
 * Adapters: `SqliteStore` (embedded) and `PostgresStore` (scaled out); each declares
 * every port it implements, and each port has one contract suite both run
 * (`ports/*.contract.ts`).
 *
 * Common to every port:
 * - methods return promises, also where the driver answers synchronously (SQLite), so
 *   adapters that wait on I/O fit the same port; no method is optional;
 * - errors are the store's own: input the engine cannot hold rejects with
 *   `StoreInputError` (./errors.ts), anything else is a failure of the store.
 */
import type { StoreLifecycle } from './ports/lifecycle';
import type { Accounts } from './ports/accounts';
import type { Orders } from './ports/orders';
import type { IdempotencyKeys } from './ports/idempotencyKeys';
import type { SocialGraph } from './ports/socialGraph';
import type { FieldReadCounts } from './ports/fieldReadCounts';

export type * from './ports/lifecycle';
export type * from './ports/accounts';
export type * from './ports/orders';
export type * from './ports/idempotencyKeys';
export type * from './ports/socialGraph';
export type * from './ports/fieldReadCounts';

export interface Store extends StoreLifecycle, Accounts, Orders, IdempotencyKeys, SocialGraph, FieldReadCounts {}
