/**
 * Concurrent streams per account, per process (MAX_STREAMS_PER_ACCOUNT): SSE streams and
 * WebSocket connections (/orders, and GraphQL subscriptions on /graphql) of one account
 * share it. Without it one token could open streams until the process runs out of file
 * descriptors, and every other account's requests with them. A place is taken before a
 * stream starts and given back when its connection closes; over the cap the request is
 * refused 429 with Retry-After (a GraphQL connection that authenticates in band: close
 * 1008), so a client retries once one of its streams has ended.
 */
import { refusal, type Refusal } from '../http';

/** What a refused client is told to wait: places come back when the account's other streams end, at no known time. */
export const QUOTA_RETRY_AFTER_S = 5;

export class StreamQuota {
  private readonly open = new Map<number, number>();

  /** `max` places per account; 0: no cap. */
  constructor(readonly max: number) {}

  /** Whether `account` may open one more stream now (checked before other admissions are spent on it). */
  hasRoom(account: number): boolean {
    return this.max === 0 || (this.open.get(account) ?? 0) < this.max;
  }

  /** Takes a place for one more stream of `account`; false when it holds `max` already. */
  take(account: number): boolean {
    if (!this.hasRoom(account)) return false;
    this.open.set(account, (this.open.get(account) ?? 0) + 1);
    return true;
  }

  /** Gives back a place `take` gave. */
  release(account: number): void {
    const n = this.open.get(account) ?? 0;
    if (n <= 1) this.open.delete(account);
    else this.open.set(account, n - 1);
  }

  /** The streams `account` holds now. */
  held(account: number): number {
    return this.open.get(account) ?? 0;
  }

  refusal(): Refusal {
    return refusal('RATE_LIMITED', `This account has ${this.max} ${this.max === 1 ? 'stream' : 'streams'} open on this instance already: close one, or retry later`, { 'Retry-After': String(QUOTA_RETRY_AFTER_S) });
  }
}
