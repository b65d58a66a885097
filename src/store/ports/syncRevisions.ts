/**
 * The synchronous revision read: a capability of an adapter whose reads need no I/O
 * wait (SqliteStore: better-sqlite3 answers in the calling tick), not part of every
 * store. Why it exists: when every step of an order read is in process (this read,
 * the in-process rate limit, the representation cache), the GET of an order is served
 * synchronously, a 304 or a cached 200 with no promise per request; BENCHMARKS.md's
 * REST section measures what that saves. Adapters that must wait (PostgresStore) do
 * not implement it, and callers fall back to `orderRevision` of the orders port.
 */
export interface SyncRevisions {
  /**
   * `Orders.orderRevision`, answered synchronously: the same value, at the same moment
   * (nothing cached: a write committed by another handle or process is seen at once).
   */
  orderRevisionNow(accountId: number, orderId: number): number | null;
}

/** True when the store offers the synchronous revision read. */
export function hasSyncRevisions<S extends object>(store: S): store is S & SyncRevisions {
  return typeof (store as Partial<SyncRevisions>).orderRevisionNow === 'function';
}
