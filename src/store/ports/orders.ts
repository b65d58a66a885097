/**
 * The orders port: orders and their events (the transactional outbox). Types only.
 *
 * - Reads of an order are scoped by account: another account's order is
 *   indistinguishable from a missing one (`null`, `not_found`).
 * - A write that resolves has been committed durably, its event with it.
 * - An order's revision starts at 1 and grows by 1 per applied write; the event that
 *   write produced has `seq` equal to the new revision, so an order's events are
 *   gap-free from seq 1.
 */
import type { IdempotentCompletion } from './idempotencyKeys';

/** Order status: an open set; the known values are listed for the transitions. */
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
  /** ISO 8601, milliseconds. */
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

/** What an applied create or write returns: the order as stored and the event it produced. */
export interface AppliedWrite {
  order: OrderRecord;
  event: OrderEvent;
}

/**
 * What `writeOrder`'s decide callback returns. It runs on the current row, and its write
 * applies only to that revision, so the precondition check (If-Match) and the domain
 * rules (transitions) see exactly the revision that gets replaced: no lost update.
 */
export type WriteDecision<R> = { apply: true; fields: OrderFields; eventType: OrderEvent['type'] } | { apply: false; reason: R };

export type WriteResult<R> = ({ ok: true } & AppliedWrite) | { ok: false; reason: R } | { ok: false; reason: 'not_found' };

/** Keyset page: `after` is the last id of the previous page (exclusive). */
export interface OrderPage {
  orders: OrderRecord[];
  /** True when at least one more order exists after the last one returned. */
  hasMore: boolean;
}

/** The page `listOrders` answers, as each order's id and revision. */
export interface RevisionPage {
  orders: { id: number; revision: number }[];
  hasMore: boolean;
}

export interface Orders {
  /**
   * Inserts the order (revision 1, `createdAt` = `updatedAt`) and its `order.created`
   * event (seq 1) in one transaction; with `complete`, the idempotency key's response
   * too (same transaction). Only the five `OrderFields` are stored, whatever else the
   * object carries. The returned order equals what `getOrder` reads back.
   */
  createOrder(accountId: number, fields: OrderFields, complete?: IdempotentCompletion<AppliedWrite>): Promise<AppliedWrite>;
  /** The account's order, or null (missing, or another account's). */
  getOrder(accountId: number, orderId: number): Promise<OrderRecord | null>;
  /**
   * The order's current revision (null when missing or another account's): one indexed
   * lookup of one column, no row decoding. A revision names one immutable state, so a
   * reader that cached a representation of it needs nothing more (304s, cached 200s).
   */
  orderRevision(accountId: number, orderId: number): Promise<number | null>;
  /**
   * Serialized read-decide-write of one order: reads the current row, calls `decide`
   * (synchronous, pure), and when it applies, writes the fields with revision + 1 and
   * the event row with seq = new revision, atomically, only if the order is still at the
   * revision `decide` saw. Of N concurrent calls deciding on the same revision, on any
   * number of processes, exactly one applies; an adapter may call `decide` again for the
   * others, on the revision that won (the result is the last decision's). A refusal changes nothing; a missing or another account's
   * order answers `not_found` without calling `decide`; a throwing `decide` rolls back
   * and rejects. With `complete`, an applied write also completes the idempotency key
   * in the same transaction (a write that does not apply leaves the key as it was).
   */
  writeOrder<R>(accountId: number, orderId: number, decide: (current: OrderRecord) => WriteDecision<R>, complete?: IdempotentCompletion<AppliedWrite>): Promise<WriteResult<R>>;
  /** The account's orders by ascending id, ids > `after`, at most `limit` (capped at `MAX_ROWS`). */
  listOrders(accountId: number, after: number, limit: number): Promise<OrderPage>;
  /**
   * The page `listOrders(accountId, after, limit)` answers at the same moment, as ids and
   * revisions only (the same orders, order and `hasMore`): no row decoding. A reader that
   * holds representations of those revisions needs nothing more, as with `orderRevision`
   * (measured: a page of five in a third of the full page's time on SQLite).
   */
  listRevisions(accountId: number, after: number, limit: number): Promise<RevisionPage>;
  /**
   * Events of one order with seq > `afterSeq`, ascending, at most `limit`. Not
   * account-scoped: callers check access first.
   */
  eventsAfter(orderId: number, afterSeq: number, limit: number): Promise<OrderEvent[]>;
  /**
   * The newest event seq (the revision) of each of these orders that exists, in one read:
   * what the realtime hub compares its rings with to find events its bus never brought.
   * Not account-scoped. At most `MAX_BATCH` ids (RangeError above).
   */
  latestSeqs(orderIds: readonly number[]): Promise<Map<number, number>>;
  /**
   * For each account id, its orders by ascending id with an id above `after` (0: from the
   * first), at most `first` each: a batch read under the social graph's batch rules
   * (aligned with the ids, one query, RangeError above `MAX_BATCH`).
   */
  ordersOfAccounts(accountIds: readonly number[], first: number, after?: number): Promise<OrderRecord[][]>;
}
