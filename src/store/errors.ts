/**
 * The store's errors, in store terms: what happened, not how a protocol answers it.
 * The layer above maps them (an HTTP edge: `StoreInputError` is the client's input).
 */

/** Why the store refused input: the value cannot be held by this engine. */
export type StoreInputReason =
  /** Text containing U+0000, which PostgreSQL's `text` and `jsonb` refuse (SQLite stores it). */
  'unstorable_text';

/**
 * The caller's input cannot be stored as given; nothing was written. Raised before
 * (or instead of) any write, so the transaction it would belong to is rolled back.
 */
export class StoreInputError extends RangeError {
  override readonly name = 'StoreInputError';
  constructor(
    readonly reason: StoreInputReason,
    message: string,
  ) {
    super(message);
  }
}

/** Which engine could not be reached (the store's own, for logs and metrics). */
export type StoreEngine = 'postgres' | 'sqlite';

/**
 * The store cannot serve the operation now: PostgreSQL could not be reached (the connection
 * was refused, reset or timed out, or the server is shutting down or starting: its
 * connection-exception class and admin shutdown), or the SQLite file stayed locked by
 * another connection past the busy timeout, or its connection is closed. The operation did not commit, so the caller may retry it once the
 * store is back; nothing the store acknowledged is lost. The layer above answers it as
 * "unavailable, retry later" (HTTP 503 with Retry-After), never as a failure of its own.
 */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
  constructor(
    readonly engine: StoreEngine,
    options: { cause: unknown },
  ) {
    const cause = options.cause;
    super(`${engine} is unavailable: ${typeof cause === 'object' && cause !== null && 'message' in cause ? String(cause.message) : String(cause)}`, options);
  }
}
