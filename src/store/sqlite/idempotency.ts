/**
 * SqliteStore's idempotency keys (store/idempotency.ts): the statements, and the steps
 * the store runs inside its IMMEDIATE transactions (the write lock makes a claim's
 * read-judge-write one step, also against another process on the same file).
 */
import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import { IdempotencyLostError, judgeClaim, type IdempotencyClaim, type IdempotencyClaimRequest, type IdempotencyRow, type IdempotentCompletion, type StoredResponse } from '../idempotency';

export class SqliteIdempotency {
  private readonly find: Database.Statement<[number, string], IdempotencyRow>;
  private readonly take: Database.Statement<[number, string, string, string, number, number]>;
  private readonly complete: Database.Statement<[number, string, string, number, string, string]>;
  private readonly release: Database.Statement<[number, string, string]>;
  private readonly sweep: Database.Statement<[number, number]>;

  constructor(
    private readonly db: Database.Database,
    /** Counts each statement run (SqliteStore.queryCount). */
    private readonly count: () => void,
  ) {
    this.find = db.prepare('SELECT fingerprint, token, locked_until, expires_at, status, headers, body FROM idempotency_keys WHERE account_id = ? AND key = ?');
    this.take = db.prepare(
      `INSERT INTO idempotency_keys (account_id, key, fingerprint, token, locked_until, expires_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (account_id, key) DO UPDATE SET fingerprint = excluded.fingerprint, token = excluded.token,
         locked_until = excluded.locked_until, expires_at = excluded.expires_at, status = NULL, headers = NULL, body = NULL`,
    );
    this.complete = db.prepare(
      `UPDATE idempotency_keys SET status = ?, headers = ?, body = ?
       WHERE account_id = ? AND key = ? AND token = ? AND status IS NULL`,
    );
    this.release = db.prepare('DELETE FROM idempotency_keys WHERE account_id = ? AND key = ? AND token = ? AND status IS NULL');
    this.sweep = db.prepare('DELETE FROM idempotency_keys WHERE rowid IN (SELECT rowid FROM idempotency_keys WHERE expires_at <= ? LIMIT +?)');
  }

  claim(accountId: number, req: IdempotencyClaimRequest): IdempotencyClaim {
    return this.db
      .transaction((): IdempotencyClaim => {
        this.count();
        const verdict = judgeClaim(this.find.get(accountId, req.key), req);
        if (verdict !== 'take') return verdict;
        const token = randomUUID();
        this.count();
        this.take.run(accountId, req.key, req.fingerprint, token, req.now + req.lockMs, req.now + req.ttlMs);
        return { kind: 'claimed', token };
      })
      .immediate();
  }

  /** Inside the caller's write transaction: stores the response, or throws (rolling the write back) when the claim was lost. */
  completeIn<T>(accountId: number, completion: IdempotentCompletion<T>, result: T): void {
    const res = completion.respond(result);
    this.count();
    const { changes } = this.complete.run(res.status, JSON.stringify(res.headers), res.body, accountId, completion.key, completion.token);
    if (changes !== 1) throw new IdempotencyLostError(completion.key);
  }

  /** After the request's own write (see IdempotencyKeys.completeIdempotencyKey): true when this stored the response. */
  completeAfter(accountId: number, key: string, token: string, res: StoredResponse): boolean {
    this.count();
    return this.complete.run(res.status, JSON.stringify(res.headers), res.body, accountId, key, token).changes === 1;
  }

  releaseKey(accountId: number, key: string, token: string): void {
    this.count();
    this.release.run(accountId, key, token);
  }

  sweepExpired(now: number, limit: number): number {
    this.count();
    return this.sweep.run(now, limit).changes;
  }
}
