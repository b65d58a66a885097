import { LRUCache } from 'lru-cache';
import type { Account } from '../store';

/** Tokens remembered at most (every in-process cache has a named, documented bound). */
export const AUTH_CACHE_MAX_ENTRIES = 10_000;
/** Bytes the cached entries may hold at most (key text and account name, 2 bytes per UTF-16 unit, plus a fixed overhead). */
export const AUTH_CACHE_MAX_BYTES = 4 * 1024 * 1024;
const ENTRY_OVERHEAD = 64;

/**
 * Token -> account, for a few seconds. Authentication is on every request, and
 * the token lookup was the largest single cost of a cached GET (a SQLite join per
 * request); a short TTL bounds how long a changed account (pinned version) or a
 * revoked token stays visible. Keyed by the token as sent (only a token that resolved is
 * ever set, so a wrong verifier never hits): hashing its verifier for the key cost about
 * 1 µs of every request, and the cache holds the token no longer than the request did
 * plus the TTL; the store keeps only verifier hashes. Bounded in entries and bytes by lru-cache (least
 * recently used first); a TTL of 0 caches nothing (lru-cache would read 0 as "forever").
 */
export class AuthCache {
  private readonly lru: LRUCache<string, Account> | undefined;

  constructor(
    readonly ttlMs: number,
    { max = AUTH_CACHE_MAX_ENTRIES, maxBytes = AUTH_CACHE_MAX_BYTES, now }: { max?: number; maxBytes?: number; now?: () => number } = {},
  ) {
    this.lru =
      ttlMs > 0
        ? new LRUCache<string, Account>({
            max,
            maxSize: maxBytes,
            sizeCalculation: (account, key) => ENTRY_OVERHEAD + 2 * (key.length + account.name.length),
            ttl: ttlMs,
            // An injected clock is read on every call (no ttlResolution caching), for tests.
            ...(now ? { perf: { now }, ttlResolution: 0 } : {}),
          })
        : undefined;
  }

  get size(): number {
    return this.lru?.size ?? 0;
  }

  get(token: string): Account | undefined {
    return this.lru?.get(token);
  }

  set(token: string, account: Account): void {
    this.lru?.set(token, account);
  }

  /** Forget everything (after an account changed, e.g. its pinned version). */
  clear(): void {
    this.lru?.clear();
  }
}
