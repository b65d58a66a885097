/**
 * Idempotency keys (DESIGN.md "Retried creates"; draft-ietf-httpapi-idempotency-key-header,
 * Stripe's semantics): the types of the Store port's idempotency methods, and the one
 * rule both adapters apply to a claim. Every adapter keeps one row per (account, key):
 * the request's fingerprint, a claim token, a lock deadline while the first request
 * runs, an expiry, and once it succeeded, its response. The response is written by the
 * same transaction as the order write it answers (`IdempotentCompletion`), so a crash
 * never leaves an order without its key or a stored response without its order.
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

export class IdempotencyLostError extends Error {
  constructor(key: string) {
    super(`idempotency key ${JSON.stringify(key)}: the claim was taken over before the write committed`);
  }
}

/** The stored row as both adapters read it. */
export interface IdempotencyRow {
  fingerprint: string;
  token: string;
  locked_until: number;
  expires_at: number;
  status: number | null;
  headers: string | null;
  body: string | null;
}

/**
 * What a claim finds, decided the same way by both adapters (they differ only in how
 * they lock the row): `take` means (re)write the row as claimed by a new token.
 */
export function judgeClaim(row: IdempotencyRow | undefined, req: IdempotencyClaimRequest): IdempotencyClaim | 'take' {
  if (!row || row.expires_at <= req.now) return 'take';
  if (row.fingerprint !== req.fingerprint) return { kind: 'mismatch' };
  if (row.status !== null) return { kind: 'replay', response: { status: row.status, headers: JSON.parse(row.headers ?? '{}') as Record<string, string>, body: row.body ?? '' } };
  if (row.locked_until > req.now) return { kind: 'in_flight' };
  return 'take'; // the first request died before committing: its key is free again
}
