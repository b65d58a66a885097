import type { Account } from '../store';

/**
 * Token hash -> account, for a few seconds. Authentication is on every request, and
 * the token lookup was the largest single cost of a cached GET (a SQLite join per
 * request); a short TTL bounds how long a changed account (pinned version) or a
 * revoked token stays visible. Bounded: the oldest entry goes first.
 */
export class AuthCache {
  private readonly entries = new Map<string, { account: Account; expires: number }>();

  constructor(
    readonly ttlMs: number,
    private readonly max = 10_000,
  ) {}

  get(tokenHash: string, now = Date.now()): Account | undefined {
    const e = this.entries.get(tokenHash);
    if (!e) return undefined;
    if (e.expires <= now) {
      this.entries.delete(tokenHash);
      return undefined;
    }
    return e.account;
  }

  set(tokenHash: string, account: Account, now = Date.now()): void {
    if (this.ttlMs <= 0) return;
    this.entries.delete(tokenHash);
    this.entries.set(tokenHash, { account, expires: now + this.ttlMs });
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
  }

  /** Forget everything (after an account changed, e.g. its pinned version). */
  clear(): void {
    this.entries.clear();
  }
}
