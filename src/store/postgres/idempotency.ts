/**
 * PostgresStore's idempotency keys (store/idempotency.ts): the SQL, and the steps the
 * store runs inside its transactions. A claim inserts the row if absent (the primary
 * key makes one of N concurrent inserts win; the others wait for its COMMIT and then
 * see its row), else locks the row FOR UPDATE and judges it, so the read-judge-write
 * is one step on every instance sharing the database.
 */
import { randomUUID } from 'node:crypto';
import { IdempotencyLostError, judgeClaim, type IdempotencyClaim, type IdempotencyClaimRequest, type IdempotencyRow, type IdempotentCompletion, type StoredResponse } from '../idempotency';

/** Runs one statement on the transaction's connection (PostgresStore's counted `exec`). */
export type Run = <R>(text: string, values: unknown[]) => Promise<R[]>;

const SQL = {
  insert: `INSERT INTO idempotency_keys (account_id, key, fingerprint, token, locked_until, expires_at) VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (account_id, key) DO NOTHING RETURNING token`,
  lock: `SELECT fingerprint, token, locked_until, expires_at, status, headers, body FROM idempotency_keys WHERE account_id = $1 AND key = $2 FOR UPDATE`,
  retake: `UPDATE idempotency_keys SET fingerprint = $3, token = $4, locked_until = $5, expires_at = $6, status = NULL, headers = NULL, body = NULL
           WHERE account_id = $1 AND key = $2`,
  complete: `UPDATE idempotency_keys SET status = $4, headers = $5, body = $6 WHERE account_id = $1 AND key = $2 AND token = $3 AND status IS NULL RETURNING 1 AS one`,
  release: `DELETE FROM idempotency_keys WHERE account_id = $1 AND key = $2 AND token = $3 AND status IS NULL`,
  sweep: `DELETE FROM idempotency_keys WHERE ctid IN (SELECT ctid FROM idempotency_keys WHERE expires_at <= $1 LIMIT $2) RETURNING 1 AS one`,
} as const;

/** Inside a transaction. */
export async function claimOn(run: Run, accountId: number, req: IdempotencyClaimRequest): Promise<IdempotencyClaim> {
  const token = randomUUID();
  const values = [accountId, req.key, req.fingerprint, token, req.now + req.lockMs, req.now + req.ttlMs];
  const inserted = await run<{ token: string }>(SQL.insert, values);
  if (inserted.length === 1) return { kind: 'claimed', token };
  const [row] = await run<IdempotencyRow>(SQL.lock, [accountId, req.key]);
  const verdict = judgeClaim(row, req);
  if (verdict !== 'take') return verdict;
  // Expired, or its first request died: taken over (a row deleted meanwhile by the sweep is simply re-inserted next time).
  if (!row) return claimOn(run, accountId, req);
  await run(SQL.retake, values);
  return { kind: 'claimed', token };
}

/** Inside the order write's transaction: stores the response, or throws (rolling the write back) when the claim was lost. */
export async function completeOn<T>(run: Run, accountId: number, completion: IdempotentCompletion<T>, result: T): Promise<void> {
  const res = completion.respond(result);
  const done = await run(SQL.complete, [accountId, completion.key, completion.token, res.status, JSON.stringify(res.headers), res.body]);
  if (done.length !== 1) throw new IdempotencyLostError(completion.key);
}

/** After the request's own write (see IdempotencyKeys.completeIdempotencyKey): true when this stored the response. */
export async function completeAfterOn(run: Run, accountId: number, key: string, token: string, res: StoredResponse): Promise<boolean> {
  return (await run(SQL.complete, [accountId, key, token, res.status, JSON.stringify(res.headers), res.body])).length === 1;
}

export async function releaseOn(run: Run, accountId: number, key: string, token: string): Promise<void> {
  await run(SQL.release, [accountId, key, token]);
}

export async function sweepOn(run: Run, now: number, limit: number): Promise<number> {
  return (await run(SQL.sweep, [now, limit])).length;
}
