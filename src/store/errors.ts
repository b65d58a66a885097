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
