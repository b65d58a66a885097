/**
 * The Store port: everything orderline keeps durably. Types only; adapters
 * (`SqliteStore`, later `PostgresStore`) implement it and prove it with the shared
 * suite in `store.contract.ts`.
 *
 * Contract common to every method:
 * - every method is async, even where the adapter is synchronous (SQLite), so the
 *   PostgreSQL adapter fits the same port;
 * - reads are scoped by account where the data belongs to one (invariant 7): another
 *   account's order is indistinguishable from a missing one (`null`);
 * - a write that resolves has been committed durably (invariant 1).
 */

import type { IdempotencyClaim, IdempotencyClaimRequest, IdempotentCompletion } from './idempotency';
export type * from './idempotency';

/** Order status: an open set (DESIGN.md); known values listed for the transitions. */
export type OrderStatus = 'pending' | 'paid' | 'shipped' | 'delivered' | 'cancelled' | (string & {});

export interface OrderItem {
  sku: string;
  quantity: number;
  unit_price_cents: number;
}

export interface Discount {
  code: string;
  percent: number;
}

/** The stored shape of an order, independent of API version. */
export interface OrderRecord {
  id: number;
  accountId: number;
  /** Starts at 1 on create, +1 per applied write; it is also the topic's event seq. */
  revision: number;
  status: OrderStatus;
  items: OrderItem[];
  currency: string;
  discount: Discount | null;
  note: string | null;
  createdAt: string;
  updatedAt: string;
}

/** The fields a create or a write sets; the store fills id, revision and timestamps. */
export type OrderFields = Pick<OrderRecord, 'status' | 'items' | 'currency' | 'discount' | 'note'>;

/** One row of the transactional outbox: topic `order:<orderId>`, gap-free `seq`. */
export interface OrderEvent {
  orderId: number;
  accountId: number;
  /** Equals the order's revision after the write that produced it. */
  seq: number;
  type: 'order.created' | 'order.updated' | 'order.cancelled';
  /** The order as it stood right after the write (stored fields, version-neutral). */
  order: OrderRecord;
  createdAt: string;
}

/**
 * What `writeOrder`'s decide callback returns. It runs inside the write transaction
 * with the current row, so the precondition check (If-Match) and the domain rules
 * (transitions) see exactly the revision that gets replaced: no lost update.
 */
export type WriteDecision<R> =
  | { apply: true; fields: OrderFields; eventType: OrderEvent['type'] }
  | { apply: false; reason: R };

export type WriteResult<R> =
  | { ok: true; order: OrderRecord; event: OrderEvent }
  | { ok: false; reason: R }
  | { ok: false; reason: 'not_found' };

/** What `npm run token -- --list` shows of a token: enough to pick one to revoke, nothing to use it. */
export interface TokenInfo {
  selector: string;
  /** ISO 8601, milliseconds. */
  createdAt: string;
}

export interface Account {
  id: number;
  name: string;
  /** API version served when a request names none (DESIGN.md "Versions"); null = newest. */
  pinnedVersion: number | null;
}

/** Keyset page: `after` is the last id of the previous page (exclusive). */
export interface OrderPage {
  orders: OrderRecord[];
  /** True when at least one more order exists after the last one returned. */
  hasMore: boolean;
}

export interface User {
  id: string;
  name: string;
  /** The account this user acts for, if any: `viewer` and `User.orders` go through it. */
  accountId: number | null;
}
export interface Post {
  id: string;
  authorId: string;
  title: string;
}
export interface Comment {
  id: string;
  postId: string;
  authorId: string;
  body: string;
}

export interface Store {
  /** Creates or upgrades the schema; idempotent. */
  migrate(): Promise<void>;
  /**
   * Loads the deterministic demo data set once: when the store has no graph data yet
   * (accounts may exist already, e.g. made by `npm run token`). Returns true if it loaded.
   */
  seedDemo(): Promise<boolean>;
  /** True when the backing engine answers a trivial query. */
  ping(): Promise<boolean>;
  close(): Promise<void>;

  // accounts and tokens ------------------------------------------------------
  /** Returns the account with that name, creating it first if needed. */
  ensureAccount(name: string): Promise<Account>;
  /** Stores a token's selector and the hash of its verifier (never the token), bound to an account. */
  addToken(accountId: number, selector: string, verifierHash: string): Promise<void>;
  /** The account and stored verifier hash of a selector, or null. One indexed lookup; the caller compares the hash in constant time. */
  tokenBySelector(selector: string): Promise<{ account: Account; verifierHash: string } | null>;
  /** An account's tokens, oldest first: selector and creation time only (the verifier is never stored). */
  listTokens(accountId: number): Promise<TokenInfo[]>;
  /** Deletes the account's token with that selector; false when the account has none such. */
  revokeToken(accountId: number, selector: string): Promise<boolean>;
  setPinnedVersion(accountId: number, version: number | null): Promise<void>;

  // orders --------------------------------------------------------------------
  /**
   * Inserts the order (revision 1) and its `order.created` event in one transaction;
   * with `complete`, the idempotency key's response too (same transaction).
   */
  createOrder(accountId: number, fields: OrderFields, complete?: IdempotentCompletion<{ order: OrderRecord; event: OrderEvent }>): Promise<{ order: OrderRecord; event: OrderEvent }>;
  getOrder(accountId: number, orderId: number): Promise<OrderRecord | null>;
  /**
   * The order's current revision (null when missing or another account's): one indexed
   * lookup of one column, no row decoding. A revision names one immutable state, so a
   * reader that cached a representation of it needs nothing more (304s, cached 200s).
   */
  orderRevision(accountId: number, orderId: number): Promise<number | null>;
  /**
   * The same, synchronously, for an adapter whose reads are synchronous (SQLite): the
   * order read then answers a cached representation without a promise (the edge's hot
   * path, like `Buckets.takeNow`). Absent on adapters that must wait (PostgreSQL).
   */
  orderRevisionNow?(accountId: number, orderId: number): number | null;
  /**
   * Serialized read-decide-write of one order: reads the current row inside the
   * transaction, calls `decide` (synchronous, pure), and when it applies, writes the
   * fields with revision + 1 and the event row with seq = new revision, atomically.
   * Of N concurrent calls deciding on the same revision, exactly one applies. With
   * `complete`, an applied write also completes the idempotency key in the same
   * transaction (a write that does not apply leaves the key as it was).
   */
  writeOrder<R>(
    accountId: number,
    orderId: number,
    decide: (current: OrderRecord) => WriteDecision<R>,
    complete?: IdempotentCompletion<{ order: OrderRecord; event: OrderEvent }>,
  ): Promise<WriteResult<R>>;

  // idempotency keys (store/idempotency.ts) -------------------------------------
  /** Atomically finds or claims the account's key (see `judgeClaim`); concurrent claims of one key: one wins. */
  claimIdempotencyKey(accountId: number, req: IdempotencyClaimRequest): Promise<IdempotencyClaim>;
  /** Gives a claimed key up (the request failed, nothing was stored), so a retry runs again. Only the claim's own token releases. */
  releaseIdempotencyKey(accountId: number, key: string, token: string): Promise<void>;
  /** Deletes up to `limit` keys expired at `now`; returns how many. */
  sweepIdempotencyKeys(now: number, limit: number): Promise<number>;
  /** The caller's orders by ascending id, ids > `after`, at most `limit`. */
  listOrders(accountId: number, after: number, limit: number): Promise<OrderPage>;

  // events ----------------------------------------------------------------------
  /** Events of one order with seq > `afterSeq`, ascending, at most `limit`. Not account-scoped: callers check access first. */
  eventsAfter(orderId: number, afterSeq: number, limit: number): Promise<OrderEvent[]>;

  // graph data (readable by any authenticated caller) ---------------------------
  usersByIds(ids: readonly string[]): Promise<(User | null)[]>;
  /** For each user id, its friends (at most `first` each), in a stable order. */
  friendsOf(userIds: readonly string[], first: number): Promise<User[][]>;
  postsOf(userIds: readonly string[], first: number): Promise<Post[][]>;
  commentsOf(postIds: readonly string[], first: number): Promise<Comment[][]>;
  /** For each account id, its orders by ascending id, at most `first` each. */
  ordersOfAccounts(accountIds: readonly number[], first: number): Promise<OrderRecord[][]>;
  /** The user bound to an account (the GraphQL `viewer`), or null. */
  userOfAccount(accountId: number): Promise<User | null>;
}
