/**
 * Idempotency keys below the port (ports/idempotencyKeys.ts): the stored row as both
 * adapters read it, the one rule both apply to a claim, and the error a completion
 * raises when its claim was taken over.
 */
import type { IdempotencyClaim, IdempotencyClaimRequest } from './ports/idempotencyKeys';

export type { IdempotencyClaim, IdempotencyClaimRequest, IdempotentCompletion, StoredResponse } from './ports/idempotencyKeys';

/** A completion's claim was taken over (its lock expired, a retry claimed the key): nothing was written. */
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
