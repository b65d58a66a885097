/**
 * The idempotency-keys port: retried creates and cancels answered once (Stripe's
 * semantics; draft-ietf-httpapi-idempotency-key-header). Types only.
 *
 * An adapter keeps one row per (account, key): the request's fingerprint, a claim
 * token, a lock deadline while the first request runs, an expiry, and once it
 * succeeded, its response. The response is written by the same transaction as the
 * order write it answers (`IdempotentCompletion`, taken by the orders port's writes),
 * so a crash never leaves an order without its key or a stored response without its
 * order. The rule every adapter applies to a claim is `judgeClaim` (../idempotency.ts).
 */

/** A response as it went out on the wire: what a replay sends again, byte for byte. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface IdempotencyClaimRequest {
  key: string;
  /** What makes two requests "the same" (the HTTP edge decides: method, path, headers, body). */
  fingerprint: string;
  /** Milliseconds since the epoch (the caller's clock, so tests can move it). */
  now: number;
  /** How long the first request may run before a retry may take its key over (it died). */
  lockMs: number;
  /** How long the key (and its stored response) is kept. */
  ttlMs: number;
}

export type IdempotencyClaim =
  /** The caller owns the key: run the request, and complete (in the write) or release. */
  | { kind: 'claimed'; token: string }
  /** The first request succeeded: this is its response. */
  | { kind: 'replay'; response: StoredResponse }
  /** The first request is still running (its lock has not expired). */
  | { kind: 'in_flight' }
  /** The key was used with a different request. */
  | { kind: 'mismatch' };

/**
 * Given to `createOrder` / `writeOrder`: inside their transaction, after the write,
 * `respond` turns the result into the response to store, and the claim is completed
 * with it. If the claim is no longer the caller's (its lock expired and a retry took
 * the key over), the adapter throws `IdempotencyLostError` and nothing is written.
 */
export interface IdempotentCompletion<T> {
  key: string;
  token: string;
  respond(result: T): StoredResponse;
}

export interface IdempotencyKeys {
  /**
   * Atomically finds or claims the account's key, as `judgeClaim` decides: a new or
   * expired key (or one whose first request died: lock passed, no response) is claimed
   * with a fresh token; a completed one replays; a running one is `in_flight`; a key
   * used with another fingerprint is a `mismatch`. Keys are per account. Of concurrent
   * claims of one key, on any number of processes, exactly one is `claimed`.
   */
  claimIdempotencyKey(accountId: number, req: IdempotencyClaimRequest): Promise<IdempotencyClaim>;
  /**
   * Gives a claimed key up (the request failed, nothing was stored), so a retry runs
   * again at once. Only the claim's own token releases; another token changes nothing.
   */
  releaseIdempotencyKey(accountId: number, key: string, token: string): Promise<void>;
  /**
   * Stores the response of a claimed key after the request succeeded, when its write could
   * not store it in its own transaction (an operation whose write is not one of the orders
   * port's: a crash between the two leaves the key to expire, and a retry after its lock runs
   * again). Only the claim's own token completes, and only a key not completed yet: a key the
   * write completed keeps that response. Resolves true when this call stored it.
   */
  completeIdempotencyKey(accountId: number, key: string, token: string, response: StoredResponse): Promise<boolean>;
  /** Deletes up to `limit` keys expired at `now` (ms since the epoch), and only those; returns how many. */
  sweepIdempotencyKeys(now: number, limit: number): Promise<number>;
}
